using System.Globalization;

namespace BlockDb.Bench.Reporting;

/// <summary>Number formats of the reports (invariant culture).</summary>
internal static class Fmt
{
    public static string Rate(double value) => value switch
    {
        double.NaN or <= 0 => "-",
        >= 1e6 => (value / 1e6).ToString("0.00", CultureInfo.InvariantCulture) + "M",
        >= 1e3 => (value / 1e3).ToString("0.0", CultureInfo.InvariantCulture) + "k",
        _ => value.ToString("0.0", CultureInfo.InvariantCulture),
    };

    public static string Ratio(double value) => double.IsNaN(value) ? "-" : value.ToString("0.00", CultureInfo.InvariantCulture) + "x";

    public static string Num(double value, string format = "0.###") =>
        double.IsNaN(value) || double.IsInfinity(value) ? string.Empty : value.ToString(format, CultureInfo.InvariantCulture);

    public static string Percent(double value) => double.IsNaN(value) ? "-" : (value * 100).ToString("0.0", CultureInfo.InvariantCulture) + "%";

    public static string Us(double value) => double.IsNaN(value) ? "-" : value.ToString(value < 10 ? "0.00" : value < 1000 ? "0.0" : "0", CultureInfo.InvariantCulture);
}

namespace BlockDb;

/// <summary>Range and enum checks shared by the option classes; each failure names the setting and what is allowed.</summary>
internal static class OptionGuard
{
    public static void Defined<TEnum>(TEnum value, string setting)
        where TEnum : struct, Enum
    {
        if (!Enum.IsDefined(value))
        {
            throw new BlockDbConfigurationException(setting, $"{setting} is {value}; allowed values: {string.Join(", ", Enum.GetNames<TEnum>())}.");
        }
    }

    public static void Defined<TEnum>(TEnum? value, string setting)
        where TEnum : struct, Enum
    {
        if (value is { } v)
        {
            Defined(v, setting);
        }
    }

    public static void InRange(long? value, long min, long max, string setting, string unit)
    {
        if (value is { } v && (v < min || v > max))
        {
            throw new BlockDbConfigurationException(setting, $"{setting} is {v}; allowed: {min} to {max} {unit}.");
        }
    }
}

namespace BlockDb.Bench.Model;

/// <summary>One point of a study: which spec it shows, in which series and at which x.</summary>
/// <param name="Study">The study.</param>
/// <param name="Spec">The measured configuration.</param>
/// <param name="Series">The line or bar group (the provider, or provider and connection mode).</param>
/// <param name="XLabel">The x value as shown.</param>
/// <param name="X">The x value for plots (the index for categorical axes).</param>
public sealed record StudyPoint(Study Study, RunSpec Spec, string Series, string XLabel, double X);

/// <summary>The unique configurations to run, in order, and the study points that show them.</summary>
/// <param name="Specs">Unique specs, grouped so that providers of one configuration run side by side.</param>
/// <param name="Points">The study points.</param>
/// <param name="Notes">What a study leaves out of what was asked for by name, and why (printed and reported, never silent).</param>
public sealed record SweepPlan(IReadOnlyList<RunSpec> Specs, IReadOnlyList<StudyPoint> Points, IReadOnlyList<string> Notes);

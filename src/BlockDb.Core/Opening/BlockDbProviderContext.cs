using Microsoft.Extensions.Logging;

namespace BlockDb.Opening;

/// <summary>What an engine provider gets when BlockDb opens a database through it.</summary>
/// <param name="Options">The validated options, frozen: a copy that no caller can change any more.</param>
/// <param name="LoggerFactory">Where the provider logs (a no-op factory when the application gave none).</param>
/// <param name="Services">The application's services when the database is built through dependency injection, else <see langword="null"/>.</param>
internal sealed record BlockDbProviderContext(BlockDbOptions Options, ILoggerFactory LoggerFactory, IServiceProvider? Services);

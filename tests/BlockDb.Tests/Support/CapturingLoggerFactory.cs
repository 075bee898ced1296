using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace BlockDb.Tests.Support;

/// <summary>A logger factory that keeps every event's ID, name and text.</summary>
internal sealed class CapturingLoggerFactory : ILoggerFactory, ILogger
{
    public ConcurrentQueue<(int Id, string? Name, string Text)> Messages { get; } = new();

    public int Count(int id, string name) => Messages.Count(m => m.Id == id && m.Name == name);

    public ILogger CreateLogger(string categoryName) => this;

    public void AddProvider(ILoggerProvider provider)
    {
    }

    public void Dispose()
    {
    }

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => true;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
        Messages.Enqueue((eventId.Id, eventId.Name, formatter(state, exception)));
}

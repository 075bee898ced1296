namespace BlockDb;

/// <summary>Helpers for the engine's <see cref="ValueTask"/>s.</summary>
internal static class ValueTasks
{
    /// <summary>The task without its result: completed at no cost when <paramref name="task"/> is, else wrapping it.</summary>
    public static ValueTask Untyped<T>(this ValueTask<T> task) =>
        task.IsCompletedSuccessfully ? ValueTask.CompletedTask : new ValueTask(task.AsTask());
}

using System.Collections;

namespace BlockDb.Tests.Support;

/// <summary>A list that cancels a token when the repository reads item <c>cancelAt</c>: cancellation in the middle of a call.</summary>
internal sealed class CancellingList<T>(T[] items, int cancelAt, CancellationTokenSource cts) : IReadOnlyList<T>
{
    public int Count => items.Length;

    public T this[int index]
    {
        get
        {
            if (index == cancelAt)
            {
                cts.Cancel();
            }

            return items[index];
        }
    }

    public IEnumerator<T> GetEnumerator() => ((IEnumerable<T>)items).GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
}

/// <summary>A list that runs a callback when the repository reads its first item: a call made from inside another.</summary>
internal sealed class CallbackList<T>(T[] items, Action onFirstRead) : IReadOnlyList<T>
{
    private bool _called;

    public int Count => items.Length;

    public T this[int index]
    {
        get
        {
            if (!_called)
            {
                _called = true;
                onFirstRead();
            }

            return items[index];
        }
    }

    public IEnumerator<T> GetEnumerator() => ((IEnumerable<T>)items).GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
}

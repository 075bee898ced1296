using BlockDb.Bench.Data;
using BlockDb.Bench.Model;

namespace BlockDb.Bench.Execution;

/// <summary>
/// The import workload on a .NET provider (<c>bench limit</c>): <see cref="IBlockDatabase.ImportBlocksAsync"/> of the
/// timed stream's blocks into the fresh copy of an empty KeyMap file, <see cref="RunSpec.Batch"/> blocks per
/// transaction. The hashes are parsed to <see cref="BlockKey"/>s before the timed region (the C loop decodes them
/// before it too); the timed region is the call, from its start to its return (every commit included). The worker-thread
/// CPU time is the calling thread's, read only when the call completed on it (no await yielded); otherwise 0 (not
/// reported). Then, untimed, every <see cref="WorkloadInfo.ImportCheckStride"/>-th block is found again: the digest
/// of their IDs is the oracle's.
/// </summary>
internal static class ImportRun
{
    public static void Run(RunSpec spec, IBlockDatabase db, BlockStream stream, LatencyRecorder recorder, RepetitionResult result)
    {
        var keys = new BlockKey[stream.Hashes.Length];
        for (var i = 0; i < keys.Length; i++)
        {
            keys[i] = BlockKey.Parse(stream.Hashes[i], stream.Sizes[i]);
        }

        var options = new ImportOptions { ItemsPerTransaction = spec.Batch > 0 ? spec.Batch : ImportOptions.MaxItemsPerTransaction };
        ManagedRunner.GcQuiesce();
        recorder.Start();
        var call = db.ImportBlocksAsync(Blocks(keys, recorder), options);
        var onThisThread = call.IsCompleted;
        var imported = call.IsCompletedSuccessfully ? call.Result : call.AsTask().GetAwaiter().GetResult();
        recorder.Stop();
        result.ElapsedNs = WorkerThreads.WallNs([recorder]);
        result.CpuNs = onThisThread ? recorder.CpuNs : 0;
        result.Ops = imported.Read;
        result.Created = imported.Created;
        result.LatenciesNs = recorder.SamplesNs();

        using var session = db.OpenSessionAsync().GetAwaiter().GetResult();
        var digest = new Fnv64();
        for (var i = 0; i < keys.Length; i += WorkloadInfo.ImportCheckStride(keys.Length))
        {
            digest.Add(session.FindBlockAsync(keys[i]).GetAwaiter().GetResult() ?? -1);
        }

        result.Digest = digest.Value;
        result.Counts = session.GetCountsAsync().GetAwaiter().GetResult();
        if (db is ISqliteBlockDatabase sqlite)
        {
            result.AppliedPragmas = sqlite.AppliedPragmas.ToString();
            result.KeyMapBytes = sqlite.KeyMapUsage.Bytes;
        }
    }

    /// <summary>The input as the API takes it; each block read is a latency tick (the recorder reads the clock once a group).</summary>
    private static async IAsyncEnumerable<ImportBlock> Blocks(BlockKey[] keys, LatencyRecorder recorder)
    {
        foreach (var key in keys)
        {
            yield return new ImportBlock(key);
            recorder.Tick();
        }

        await Task.CompletedTask.ConfigureAwait(false);
    }
}

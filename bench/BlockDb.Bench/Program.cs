using BlockDb.Bench;
using BlockDb.Bench.Cli;

return BenchCommand.Create(SweepApp.Run).Parse(args).Invoke();

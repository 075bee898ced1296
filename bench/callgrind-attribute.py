#!/usr/bin/env python3
"""Per-operation instruction counts from two callgrind runs of a .NET process (n1 and n2 operations).

Callgrind cannot name JIT-compiled code; run the process with DOTNET_PerfMapEnabled=1 and this script names it from
/tmp/perf-<pid>.map (the pid is read from the run's valgrind log). It prints, per function, (Ir(n2) - Ir(n1)) / ops,
and two totals: all of it, and "steady", without the runtime's one-time work (the JIT, C++ unwinding, libcoreclr,
libstdc++, stdio), which can land in either run of a pair (a first async wait or exception compiled and unwound in
one run only: tens of millions of instructions) and would then be spread over every operation.

    python3 bench/callgrind-attribute.py <prefix-n1> <prefix-n2> <ops> [top=40]

<prefix> names <prefix>.cg (callgrind's output) and <prefix>.valgrind (its log); ops is the number of operations the
two runs differ by (twice (n2 - n1) when a warm-up round of the same size runs first).
"""
import bisect
import re
import subprocess
import sys

ONE_TIME = ("libclrjit", "libgcc_s", "libstdc++", "libcoreclr", "/libio/", "vfprintf", "stdio-common")


def load(prefix):
    pid = re.search(r"==(\d+)==", open(prefix + ".valgrind").read()).group(1)
    symbols = []
    try:
        for line in open(f"/tmp/perf-{pid}.map"):
            start, size, name = line.rstrip("\n").split(" ", 2)
            symbols.append((int(start, 16), int(size, 16), name))
    except FileNotFoundError:
        pass
    symbols.sort()
    starts = [s[0] for s in symbols]
    report = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", prefix + ".cg"],
                            capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$", line)
        if not m or ":" not in m.group(2) or "PROGRAM TOTALS" in line:
            continue
        n = int(m.group(1).replace(",", ""))
        fn = m.group(2)
        jit = re.match(r"\?\?\?:0x([0-9a-f]+) \[\?\?\?\]", fn)
        if jit:
            address = int(jit.group(1), 16)
            i = bisect.bisect_right(starts, address) - 1
            key = symbols[i][2] if i >= 0 and address < symbols[i][0] + symbols[i][1] else "(JIT code, unnamed)"
        elif fn.startswith("???:0x"):
            key = "[" + fn.split("[")[-1]  # an unnamed function of a native library: count it by library
        else:
            key = fn
        counts[key] = counts.get(key, 0) + n
    return counts


def main():
    a, b, ops = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    per_op = {k: (b.get(k, 0) - a.get(k, 0)) / ops for k in set(a) | set(b)}
    total = sum(per_op.values())
    one_time = sum(v for k, v in per_op.items() if any(x in k for x in ONE_TIME))
    print(f"per operation: {total:.0f} instructions; steady (without the runtime's one-time work): {total - one_time:.0f}")
    for k, v in sorted(per_op.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{v:9.0f}  {k[:160]}")


if __name__ == "__main__":
    main()

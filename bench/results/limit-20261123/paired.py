# Per-repetition (paired) ratios from runs.csv: each run divided by the reference run of the same repetition
# (same workload and layout, run interleaved), then the median [min-max] over the 3 repetitions.
# wall = ops/s; cpu = ops per CPU-second of the worker thread (CLOCK_THREAD_CPUTIME_ID).
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = {}
for r in rows:
    d.setdefault((r['workload'], r['layout'] or 'TextHash', r['provider'], r['reads_per_transaction']), {})[int(r['rep'])] = (
        float(r['ops_per_s']), int(r['ops']) / (int(r['cpu_ns']) / 1e9))
def fmt(a, b):
    wall = [a[i][0] / b[i][0] for i in a if i in b]; cpu = [a[i][1] / b[i][1] for i in a if i in b]
    return f"wall {st.median(wall):.2f} [{min(wall):.2f}-{max(wall):.2f}]  cpu {st.median(cpu):.2f} [{min(cpu):.2f}-{max(cpu):.2f}]"
print("workload, layout, provider, reads: vs C same design (Native, same reads) | vs C plain limit (NativePlain)")
for w in ['select', 'xor-select-insert', 'xor-hit']:
    for l in ['TextHash', 'BlobHash', 'KeyMap']:
        plain = d[(w, l, 'NativePlain', 'default')]
        for p in ['MicrosoftData', 'SystemData', 'PInvoke', 'Native']:
            for rd in ['default', '1']:
                a = d[(w, l, p, rd)]
                same = '-' if p == 'Native' else fmt(a, d[(w, l, 'Native', rd)])
                print(f"{w:17} {l:8} {p:13} {rd:7} same: {same:48} | plain: {fmt(a, plain)}")

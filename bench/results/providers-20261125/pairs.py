import csv, glob, os, statistics, sys
# Paired ratios of two builds' harness runs, taken in turn (A B A B ...): python3 pairs.py <study folder> <A> <B>
# (each run's summary.csv is <study>/<A|B>-<start ns>.csv; the first run of each is the warm-up, not counted).
study = sys.argv[1]; a_name = sys.argv[2] if len(sys.argv) > 2 else 'new'; b_name = sys.argv[3] if len(sys.argv) > 3 else 'old'
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), study)
def runs(prefix):
    files = sorted(glob.glob(f'{root}/{prefix}-*.csv'), key=lambda d: int(d.rsplit('-',1)[1][:-4]))
    out = []
    for f in files[1:]:  # the first is the warm-up run
        rows = {}
        for r in csv.DictReader(open(f)):
            key = (r['workload'], r['provider'], r['layout'])
            rows[key] = (float(r['ops_per_s_median'] or 'nan'), float(r['ops_per_cpu_s_median'] or 'nan'), r['sqlite_version'])
        out.append(rows)
    return out
A, B = runs(a_name), runs(b_name)
n = min(len(A), len(B))
print(f'{study}: {n} pairs ({a_name} vs {b_name})')
keys = sorted(A[0].keys())
def fmt(xs): 
    xs = sorted(xs); return f'{statistics.median(xs):.3f} [{xs[0]:.3f}-{xs[-1]:.3f}]'
for k in keys:
    wall = [A[i][k][0]/B[i][k][0] for i in range(n) if k in B[i]]
    cpu = [A[i][k][1]/B[i][k][1] for i in range(n) if k in B[i]]
    amed = statistics.median(A[i][k][0] for i in range(n)); bmed = statistics.median(B[i][k][0] for i in range(n) if k in B[i])
    print(f'{k[0]:20s} {k[1]:14s} {k[2]:8s} {a_name} {amed/1000:8.1f}k {b_name} {bmed/1000:8.1f}k  paired {a_name}/{b_name} wall {fmt(wall)} cpu {fmt(cpu)}  sqlite {A[0][k][2]}/{B[0][k][2]}')
# within-run ratio to PInvoke (and Native when present)
for ref in ['PInvoke', 'Native']:
    for side, S in ((a_name, A), (b_name, B)):
        for k in keys:
            if k[1] in (ref, 'Native', 'NativePlain') : continue
            rk = (k[0], ref, k[2])
            if rk not in S[0]: continue
            wall = [S[i][k][0]/S[i][rk][0] for i in range(n)]
            cpu = [S[i][k][1]/S[i][rk][1] for i in range(n)]
            print(f'  {side:4s} {k[0]:20s} {k[1]:13s}/{ref:8s} wall {fmt(wall)} cpu {fmt(cpu)}')

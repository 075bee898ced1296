#!/usr/bin/env python3
# perrow.py A.cg B.cg ROWS : self Ir per row by function (B - A) / ROWS, JIT frames named from /tmp/perf-PID.map
import sys, re, subprocess, bisect, collections
def load(cg):
    pid = None
    for line in open(cg):
        if line.startswith('pid:'): pid = int(line.split()[1]); break
    syms = []
    try:
        for line in open(f'/tmp/perf-{pid}.map'):
            a, n, name = line.rstrip('\n').split(' ', 2)
            syms.append((int(a, 16), int(n, 16), name))
    except FileNotFoundError: pass
    syms.sort()
    starts = [s[0] for s in syms]
    out = subprocess.run(['callgrind_annotate', '--threshold=100', cg], capture_output=True, text=True).stdout
    costs = collections.Counter()
    for line in out.splitlines():
        m = re.match(r'\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$', line)
        if not m or 'PROGRAM TOTALS' in line: continue
        ir = int(m.group(1).replace(',', '')); fn = m.group(2)
        h = re.match(r'\?\?\?:0x([0-9a-f]+) \[\?\?\?\]', fn)
        if h:
            a = int(h.group(1), 16); i = bisect.bisect_right(starts, a) - 1
            if i >= 0 and a < syms[i][0] + syms[i][1]: fn = syms[i][2][:150]
            else: fn = '??? (unnamed JIT/stub)'
        costs[fn] += ir
    return costs
a, b, rows = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3])
d = {k: (b[k] - a.get(k, 0)) / rows for k in b}
tot = sum(d.values())
print(f'total {tot:.0f} per row')
for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:int(sys.argv[4]) if len(sys.argv) > 4 else 70]:
    print(f'{v:9.0f}  {k}')

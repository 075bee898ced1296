#!/usr/bin/env python3
"""Turns runs.log (written by /work/bigdata/runs.sh-style loops of `BlockDb.MapLoad once <db> <provider> 50000 20000 <built>`)
into runs.csv, summary.md and plots/*.png (gnuplot). Usage: summarize.py <folder with runs.log>."""
import csv, os, re, statistics, subprocess, sys

folder = sys.argv[1]
rows, cur = [], None
for line in open(os.path.join(folder, 'runs.log')):
    line = line.strip()
    if line.startswith('RUN '):
        cur = dict(kv.split('=', 1) for kv in line[4:].split())
        cur['load_start'] = cur.pop('load')
    elif line.startswith('RESULT ') and cur is not None:
        cur.update(kv.split('=', 1) for kv in line.split()[2:])
    elif line.startswith('TIME ') and cur is not None:
        cur.update(kv.split('=', 1) for kv in line.split()[1:])
    elif line.startswith('END ') and cur is not None:
        cur['load_end'] = re.search(r'load=(\S+)', line).group(1)
        if 'select_us' in cur:
            rows.append(cur)
        cur = None

fields = ['round', 'provider', 'size', 'start', 'load_start', 'load_end', 'open_ms', 'first_find_ms', 'first_find_cpu_ms',
          'second_find_us', 'map_blocks', 'map_bytes', 'gc_heap_mb', 'peak_ws_mb', 'maxrss_kb', 'wall_s', 'select_us', 'xor_us']
with open(os.path.join(folder, 'runs.csv'), 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=fields, extrasaction='ignore')
    w.writeheader()
    w.writerows(rows)

providers = [p for p in ['PInvoke', 'MicrosoftData', 'SystemData'] if any(r['provider'] == p for r in rows)]
def pick(p, s, k):
    return [float(r[k]) for r in rows if r['provider'] == p and r['size'] == s]
def med(v):
    return statistics.median(v) if v else float('nan')
def span(v, scale=1.0, fmt='{:.2f}'):
    return (fmt.format(min(v) / scale) + '–' + fmt.format(max(v) / scale)) if v else 'n/a'

out = []
out.append('| provider | runs | select µs/op 1e5 | select µs/op 1e8 | 1e8/1e5 | select-xor-insert µs/op 1e5 | 1e8 | 1e8/1e5 | first lookup at 1e8, s (min–max) | its CPU, s | open, ms | map bytes/block | max RSS at 1e8, MB |')
out.append('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
dat = []
for p in providers:
    s5, s8, x5, x8 = pick(p, '1e5', 'select_us'), pick(p, '1e8', 'select_us'), pick(p, '1e5', 'xor_us'), pick(p, '1e8', 'xor_us')
    ff = pick(p, '1e8', 'first_find_ms')
    mb = [r for r in rows if r['provider'] == p and r['size'] == '1e8']
    bpb = med([float(r['map_bytes']) / float(r['map_blocks']) for r in mb])
    out.append(f"| {p} | {len(s8)} | {med(s5):.2f} ({span(s5)}) | {med(s8):.2f} ({span(s8)}) | {med(s8) / med(s5):.2f}x | "
               f"{med(x5):.2f} ({span(x5)}) | {med(x8):.2f} ({span(x8)}) | {med(x8) / med(x5):.2f}x | "
               f"{med(ff) / 1000:.1f} ({span(ff, 1000, '{:.1f}')}) | {med(pick(p, '1e8', 'first_find_cpu_ms')) / 1000:.0f} | {med(pick(p, '1e8', 'open_ms')):.0f} | {bpb:.2f} | "
               f"{med(pick(p, '1e8', 'maxrss_kb')) / 1024:.0f} |")
    dat.append((p, med(s5), med(s8), med(x5), med(x8), med(ff) / 1000))
out.append('')
out.append('Per pair (the 1e8 process, then the 1e5 one right after it, same provider), 1e8/1e5:')
out.append('')
out.append('| round | provider | select | select-xor-insert | first lookup at 1e8, s | 1-min load at start, end |')
out.append('|---:|---|---:|---:|---:|---|')
for r8 in [r for r in rows if r['size'] == '1e8']:
    r5 = next((r for r in rows if r['size'] == '1e5' and r['round'] == r8['round'] and r['provider'] == r8['provider']), None)
    if r5:
        out.append(f"| {r8['round']} | {r8['provider']} | {float(r8['select_us']) / float(r5['select_us']):.2f}x | "
                   f"{float(r8['xor_us']) / float(r5['xor_us']):.2f}x | {float(r8['first_find_ms']) / 1000:.1f} | {r8['load_start']}, {r5['load_end']} |")
loads = [float(r[k]) for r in rows for k in ('load_start', 'load_end')]
out.append('')
out.append(f"{len(rows)} processes; 1-minute load average {min(loads):.1f}–{max(loads):.1f} (median {med(loads):.1f}) on 2 cores; "
           f"map blocks at 1e8: {int(min(pick(providers[0], '1e8', 'map_blocks'))):,}–{int(max(float(r['map_blocks']) for r in rows if r['size'] == '1e8')):,}.")
open(os.path.join(folder, 'summary.md'), 'w').write('\n'.join(out) + '\n')
print('\n'.join(out))

plots = os.path.join(folder, 'plots')
os.makedirs(plots, exist_ok=True)
with open(os.path.join(plots, 'scale1e8.dat'), 'w') as f:
    f.write('# provider select_1e5 select_1e8 xor_1e5 xor_1e8 first_lookup_s\n')
    for d in dat:
        f.write('{} {:.3f} {:.3f} {:.3f} {:.3f} {:.2f}\n'.format(*d))
gp = """set terminal pngcairo size 1000,420 font ',10'
set output 'scale1e8.png'
set multiplot layout 1,2 title 'KeyMap at 1e8 blocks vs 1e5 (BlockDb.MapLoad once; medians; loaded 2-core machine)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set ylabel 'µs per op (lower is better)'
set yrange [0:*]
set title 'per op: select and select-xor-insert'
plot 'scale1e8.dat' using 2:xtic(1) title 'select 1e5', '' using 3 title 'select 1e8', '' using 4 title 'xor 1e5', '' using 5 title 'xor 1e8'
set title 'open + first lookup at 1e8 (target < 10 s)'
set ylabel 'seconds'
unset key
set arrow from graph 0, first 10 to graph 1, first 10 nohead lw 2 dt 2 lc rgb 'red'
plot 'scale1e8.dat' using 6:xtic(1) title 'first lookup'
unset multiplot
"""
open(os.path.join(plots, 'scale1e8.gp'), 'w').write(gp)
subprocess.run(['gnuplot', 'scale1e8.gp'], cwd=plots, check=True)

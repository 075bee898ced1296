#!/usr/bin/env python3
# attr.py CG_OUT [CG_OUT2 N]: self instructions per function; JIT'd code named from /tmp/perf-<pid>.map.
import sys, bisect, re, collections
def load_map(pid):
    rows=[]
    try:
        for line in open(f'/tmp/perf-{pid}.map'):
            a,s,name=line.rstrip('\n').split(' ',2)
            rows.append((int(a,16),int(s,16),name))
    except FileNotFoundError: pass
    small=sorted(r for r in rows if r[1]<0x400); big=sorted(r for r in rows if r[1]>=0x400)
    return (small,[r[0] for r in small],big,[r[0] for r in big]),None
def parse(path):
    pid=None; names={}; cost=collections.Counter()
    ob=fn=None; addr=0; skip=False; obs={}; fns={}
    def nm(table,val):
        m=re.match(r'\((\d+)\)(?: (.*))?',val)
        if not m: return val
        i,n=m.groups()
        if n is not None: table[i]=n
        return table.get(i,'?')
    raw=[]
    for line in open(path):
        if line.startswith('pid:'): pid=int(line.split()[1]); continue
        if line.startswith('ob='): ob=nm(obs,line[3:].strip()); continue
        if line.startswith('fl=') or line.startswith('fi=') or line.startswith('fe='): continue
        if line.startswith('fn='): fn=nm(fns,line[3:].strip()); continue
        if line.startswith('cob=') : nm(obs,line[4:].strip()); continue
        if line.startswith('cfn='): nm(fns,line[4:].strip()); continue
        if line.startswith('cfi=') or line.startswith('cfl='): continue
        if line.startswith('calls='): skip=True; continue
        c=line[0] if line else ''
        if c in '0123456789+-*' and line.strip():
            parts=line.split()
            p=parts[0]
            if p.startswith('0x'): addr=int(p,16)
            elif p[0]=='+': addr+=int(p[1:],0)
            elif p[0]=='-': addr-=int(p[1:],0)
            if skip: skip=False; continue
            ir=int(parts[2]) if len(parts)>2 else 0
            raw.append((ob,fn,addr,ir))
    rows,keys=load_map(pid)
    for ob,fn,addr,ir in raw:
        if fn and not fn.startswith('0x') and ob and '???' not in ob:
            cost[(ob.split('/')[-1],fn)]+=ir; continue
        small,sk,big,bk=rows
        i=bisect.bisect_right(sk,addr)-1
        if i>=0 and addr<small[i][0]+small[i][1]: cost[('JIT',small[i][2])]+=ir; continue
        j=bisect.bisect_right(bk,addr)-1
        while j>=0 and not addr<big[j][0]+big[j][1]: j-=1
        if j>=0 and addr-big[j][0]<0x100000: cost[('JIT',big[j][2])]+=ir
        else: cost[(str(ob).split('/')[-1],str(fn))]+=ir
    return cost
a=parse(sys.argv[1])
if len(sys.argv)>2:
    b=parse(sys.argv[2]); n=float(sys.argv[3])
    d={k:(b.get(k,0)-a.get(k,0))/n for k in set(a)|set(b)}
else:
    d={k:v for k,v in a.items()}
tot=sum(d.values()); print(f'total {tot:.0f}')
byob=collections.Counter()
for k,v in d.items(): byob[k[0]]+=v
for k,v in byob.most_common(12): print(f'  {v:10.1f} {k}')
for k,v in sorted(d.items(),key=lambda kv:-abs(kv[1]))[:int(__import__("os").environ.get("TOP","70"))]: print(f'{v:10.1f} {k[0][:18]:18} {k[1][:150]}')

import re,sys
def calls(path):
    res={};block=[]
    for l in open(path):
        if l.strip()=='' : block=[];continue
        m=re.search(r'<\s.*\(([\d,]+)x\)',l)
        if m: block.append(int(m.group(1).replace(',','')));continue
        m=re.match(r'\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+\*\s+\?\?\?:(\S+) \[.*e_sqlite3',l)
        if m: res[m.group(2)]=(int(m.group(1).replace(',','')),sum(block))
    return res
d=calls('ann-dup-caller.txt'); b=calls('ann-bdb-caller.txt')
names=sys.argv[1:]
print(f"{'function':32} {'dup Ir':>15} {'dup calls':>10} {'bdb Ir':>15} {'bdb calls':>10} {'delta Ir':>15}")
for n in names:
    di,dc=d.get(n,(0,0)); bi,bc=b.get(n,(0,0))
    print(f"{n:32} {di:>15,} {dc:>10,} {bi:>15,} {bc:>10,} {bi-di:>15,}")

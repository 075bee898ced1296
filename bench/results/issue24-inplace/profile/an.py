import subprocess,re,sys,collections
def ann(f,incl):
    out=subprocess.run(['callgrind_annotate','--threshold=100','--inclusive='+('yes' if incl else 'no'),f],capture_output=True,text=True).stdout
    rows=[]
    for l in out.splitlines():
        m=re.match(r'\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$',l)
        if m and 'PROGRAM TOTALS' not in l:
            ir=int(m.group(1).replace(',',''));rest=m.group(2)
            mo=re.search(r'\[([^\]]*)\]\s*$',rest)
            obj=mo.group(1) if mo else '?'
            fn=rest[:mo.start()].strip() if mo else rest
            rows.append((ir,fn,obj))
    tot=int(re.search(r'([\d,]+) \(\s*[\d.]+%\)\s+PROGRAM TOTALS',out).group(1).replace(',',''))
    return tot,rows
for f in sys.argv[1:]:
    tot,selfrows=ann(f,False)
    byobj=collections.Counter()
    for ir,fn,obj in selfrows: byobj[obj.split('/')[-1]]+=ir
    print('==',f,'total',tot)
    for o,ir in byobj.most_common(12): print(f'  self {ir:>15,} {o}')

def report(f, names):
    tot,inc=ann(f,True)
    _,slf=ann(f,False)
    d={}
    for ir,fn,obj in inc:
        n=fn.split(':',1)[-1]
        if 'e_sqlite3' in obj: d[n]=d.get(n,0)+ir
    cnt=None
    return tot,d

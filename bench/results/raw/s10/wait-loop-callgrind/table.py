"""table.py BEFORE_OUT AFTER_OUT: the per-rank table of cg.sh's runs (progressUntil, polls, yields)."""
import subprocess, re, sys, os
here = os.path.dirname(os.path.abspath(__file__))
dirs = {'before': sys.argv[1], 'after': sys.argv[2]}
rows=[]
for d in ['before','after']:
  for f in ['one-bcast','one-reduce','general-bcast','general-reduce']:
    for r in '01':
      out=subprocess.run(['python3',os.path.join(here,'cgsum.py'),f'{dirs[d]}/{f}.{r}','.'],capture_output=True,text=True).stdout
      v={}
      for line in out.splitlines():
        m=re.match(r'(\S+)\s+calls\s+(\d+)\s+self\s+(\d+)',line)
        if m: v[m.group(1)]=(int(m.group(2)),int(m.group(3)))
      api='gdrBroadcast' if 'bcast' in f else 'gdrReduce'
      # inclusive of the API function = total collected
      tot=sum(s for c,s in v.values())
      pu=v.get('gdr::Communicator::progressUntil',(0,0)); ep=v.get('gdr::transport::shm::ShmEndpoint::progress',(0,0)); y=v.get('sched_yield',(0,0))
      rows.append((d,f,r,v[api][0],tot/v[api][0],v[api][1]/v[api][0],pu[0],pu[1],ep[0],y[0], pu[1]/ep[0] if ep[0] else 0))
print('| build | run | rank | calls | Ir per call (all) | API fn self/call | progressUntil calls | its self Ir | polls | yields | self Ir per poll |')
print('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for r in rows: print('| %s | %s | %s | %d | %.0f | %.0f | %d | %d | %d | %d | %.1f |'%r)

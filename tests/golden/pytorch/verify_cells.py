# Independent check of a few op_sum / step_sum cells, straight from the raw trace JSON.
# Usage: python3 verify_cells.py ../shared/traces   (prints the cells pytorch_report_test.cpp quotes)
import bisect, gzip, json, sys
from collections import defaultdict
from decimal import Decimal

def ns(v):
    return int(Decimal(str(v)) * 1000)

def load(path):
    f = gzip.open(path, 'rt') if path.endswith('.gz') else open(path)
    d = json.load(f, parse_float=Decimal)
    return d['traceEvents'] if isinstance(d, dict) else d

class T:
    def __init__(self, path, op_cats, rt_cats, gpu_cats, slack, step_cats):
        ev = load(path)
        self.slack = slack
        self.ops, self.rt, self.gpu, self.steps = [], [], [], []
        for i, e in enumerate(ev):
            if e.get('ph') != 'X': continue
            cat = e.get('cat')
            s = ns(e['ts']); en = s + ns(e.get('dur', 0))
            th = (str(e.get('pid')), str(e.get('tid')))
            name = e.get('name', '')
            if name.startswith('ProfilerStep#') and cat in step_cats:
                self.steps.append(dict(name=name, s=s, e=en, pid=str(e.get('pid'))))
                continue
            if cat in op_cats:
                self.ops.append(dict(i=i, name=name, s=s, e=en, th=th))
            elif cat in rt_cats:
                self.rt.append(dict(s=s, th=th, corr=e['args']['correlation']))
            elif cat in gpu_cats:
                self.gpu.append(dict(s=s, e=en, corr=e['args']['correlation'], kernel=cat in ('Kernel', 'kernel')))
        self.by_th = defaultdict(list)
        for o in self.ops: self.by_th[o['th']].append(o)
        for l in self.by_th.values(): l.sort(key=lambda o: (o['s'], -o['e'], o['i']))
        self.starts = {k: [o['s'] for o in l] for k, l in self.by_th.items()}
        self.rt_by_corr = defaultdict(list)
        for r in self.rt: self.rt_by_corr[r['corr']].append(r)

    def inside(self, c, p):  # is op c within op p (same thread)?
        if c is p or c['th'] != p['th']: return False
        if c['s'] < p['s']: return False
        if c['s'] == p['s'] and c['e'] == p['e']: return c['i'] > p['i']
        if c['s'] == p['s'] and c['e'] > p['e']: return False
        return c['e'] <= p['e'] or (self.slack and c['s'] < p['e'] and c['e'] <= p['e'] + self.slack)

    def contained(self, p):
        l = self.by_th[p['th']]
        lo = bisect.bisect_left(self.starts[p['th']], p['s'])
        out = []
        for o in l[lo:]:
            if o['s'] > p['e']: break
            if self.inside(o, p): out.append(o)
        return out

    def self_time(self, p):
        d = self.contained(p)
        direct = [c for c in d if not any(self.inside(c, x) for x in d if x is not c)]
        return max(0, p['e'] - p['s'] - sum(c['e'] - c['s'] for c in direct))

    def innermost(self, th, t):
        l = self.by_th.get(th, [])
        best = None
        for o in l:  # latest start holding t; among equal starts the shortest
            if o['s'] > t: break
            if o['e'] >= t and (best is None or o['s'] > best['s'] or (o['s'] == best['s'] and o['e'] <= best['e'])):
                best = o
        return best

    def launcher(self, g):
        rs = self.rt_by_corr.get(g['corr'], [])
        return rs[0] if rs else None

    def op_row(self, name):
        calls = [o for o in self.ops if o['name'] == name]
        outer = [c for c in calls if not any(self.inside(c, x) for x in calls if x is not c)]
        cpu_total = sum(c['e'] - c['s'] for c in outer)
        cpu_self = sum(self.self_time(c) for c in calls)
        ids = {id(c) for c in calls}
        subtree = {}
        for c in outer:
            subtree[id(c)] = c
            for d in self.contained(c): subtree[id(d)] = d
        gpu_total = gpu_self = kernels = 0
        for g in self.gpu:
            r = self.launcher(g)
            if r is None: continue
            o = self.innermost(r['th'], r['s'])
            if o is None: continue
            if id(o) in subtree: gpu_total += g['e'] - g['s']
            if id(o) in ids:
                gpu_self += g['e'] - g['s']
                kernels += g['kernel']
        return dict(calls=len(calls), cpu_total=cpu_total, cpu_self=cpu_self, gpu_total=gpu_total, gpu_self=gpu_self, kernels=kernels)

    def step_rows(self):
        out = []
        for st in sorted(self.steps, key=lambda s: s['s']):
            gs = [g for g in self.gpu if (r := self.launcher(g)) and r['th'][0] == st['pid'] and st['s'] <= r['s'] <= st['e']]
            out.append(dict(name=st['name'], start=st['s'], dur=st['e'] - st['s'],
                            gpu_start=min((g['s'] for g in gs), default=None), gpu_end=max((g['e'] for g in gs), default=None),
                            kernels=sum(g['kernel'] for g in gs)))
        return out

root = sys.argv[1]
r50 = T(root + '/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz',
        {'Operator'}, {'Runtime'}, {'Kernel', 'Memcpy', 'Memset'}, 1000, {'Operator'})
print('resnet50 aten::conv2d', r50.op_row('aten::conv2d'))
print('resnet50 aten::add_', r50.op_row('aten::add_'))
print('resnet50 aten::cudnn_convolution', r50.op_row('aten::cudnn_convolution'))
for s in r50.step_rows(): print('resnet50 step', s)
bert = T(root + '/kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz',
         {'cpu_op'}, {'cuda_runtime', 'cuda_driver'}, {'kernel', 'gpu_memcpy', 'gpu_memset'}, 0, {'user_annotation'})
print('bert aten::linear', bert.op_row('aten::linear'))
print('bert aten::addmm', bert.op_row('aten::addmm'))
for s in bert.step_rows(): print('bert step', s)
cnn = T(root + '/torch113-cpu/cnn_fastdata.json', {None}, set(), set(), 1000, {None})
print('cnn aten::conv2d', cnn.op_row('aten::conv2d'))
print('cnn aten::relu', cnn.op_row('aten::relu'))
for s in cnn.step_rows(): print('cnn step', s)
print('cnn aten::mm', cnn.op_row('aten::mm'))
print('cnn aten::add_', cnn.op_row('aten::add_'))
def busy(t, st):
    iv = sorted((g['s'], g['e']) for g in t.gpu if (r := t.launcher(g)) and r['th'][0] == st['pid'] and st['s'] <= r['s'] <= st['e'])
    tot, cur = 0, None
    for s, e in iv:
        if cur is None or s > cur[1]:
            if cur: tot += cur[1] - cur[0]
            cur = [s, e]
        else: cur[1] = max(cur[1], e)
    return tot + (cur[1] - cur[0] if cur else 0)
print('resnet50 first step busy', busy(r50, sorted(r50.steps, key=lambda s: s['s'])[0]))
print('bert step busy', busy(bert, bert.steps[0]))

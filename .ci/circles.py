#!/usr/bin/env python3
"""File circles inside a crate (docs/design.md, "Layering"): the strongly connected components
of the graph whose nodes are a crate's source files and whose arrows are the paths one file
names in another (`crate::a::b`, `super::c`, `use crate::{a, b::c}`; comments and `mod tests`
left out). Prints each circle with its arrows and exits 1, or prints "no circles".

    python3 .ci/circles.py installer/src [-v]
"""
import os, re, sys
root = sys.argv[1]
files = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.join(d, f)
            files[os.path.relpath(p, root)] = open(p).read()
def mod_path(rel):
    parts = rel[:-3].split('/')
    if parts[-1] in ('mod', 'lib', 'main'): parts = parts[:-1]
    return parts
mods = {tuple(mod_path(r)): r for r in files}
def resolve(parts):
    for n in range(len(parts), 0, -1):
        if tuple(parts[:n]) in mods: return mods[tuple(parts[:n])]
    return None
edges = {r: set() for r in files}
for rel, text in files.items():
    if '/tests' in rel or rel.endswith('tests.rs'): continue
    me = mod_path(rel)
    # strip cfg(test) mod blocks roughly: ignore lines after '#[cfg(test)]\nmod tests'
    t = re.split(r'#\[cfg\(test\)\]\s*mod tests', text)[0]
    t = '\n'.join(l for l in t.split('\n') if not l.lstrip().startswith('//'))
    for m in re.finditer(r'crate::((?:[a-z_0-9]+::)*[a-z_0-9]+)', t):
        tgt = resolve(m.group(1).split('::'))
        if tgt and tgt != rel: edges[rel].add(tgt)
    for m in re.finditer(r'super::((?:[a-z_0-9]+::)*[a-z_0-9]+)', t):
        base = me[:-1] if not rel.endswith('mod.rs') else me[:-1]
        tgt = resolve(base + m.group(1).split('::'))
        if tgt and tgt != rel: edges[rel].add(tgt)
    # use crate::{a, b::{c}}
    for m in re.finditer(r'use crate::\{([^;]*)\};', t, re.S):
        for item in re.findall(r'([a-z_0-9]+)(?:::([a-z_0-9]+))?', m.group(1)):
            tgt = resolve([x for x in item if x])
            if tgt and tgt != rel: edges[rel].add(tgt)
    for m in re.finditer(r'use super::\{([^;]*)\};', t, re.S):
        base = me[:-1]
        for item in re.findall(r'([a-z_0-9]+)(?:::([a-z_0-9]+))?', m.group(1)):
            tgt = resolve(base + [x for x in item if x])
            if tgt and tgt != rel: edges[rel].add(tgt)
    for m in re.finditer(r'crate::((?:[a-z_0-9]+::)+)\{([^;]*?)\}', t, re.S):
        base = m.group(1).strip(':').split('::')
        for item in re.findall(r'([a-z_0-9]+)(?:::([a-z_0-9]+))?', m.group(2)):
            tgt = resolve(base + [x for x in item if x])
            if tgt and tgt != rel: edges[rel].add(tgt)
# tarjan
idx = {}; low = {}; st = []; on = set(); out = []; c = [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: out.append(sorted(comp))
for v in edges:
    if v not in idx: sc(v)
for comp in out:
    print(len(comp), comp)
    if True:
        s = set(comp)
        for a in comp:
            print('  ', a, '->', sorted(edges[a] & s))
if not out: print('no circles')
sys.exit(1 if out else 0)

#!/usr/bin/env python3
"""The include structure of src/: every #include "folder/module.h" points down the layers
below, never up, and the modules (a .c and its .h) include each other in no circle.

Layers, lowest first: base, sys, table, then sources and mover side by side (neither includes
the other), then daemon. Inside sources, the files at its top (the interface every source
implements) and perf/ (the perf ring every perf-based source reads) are below pmu/, damon/ and
abit/, which never include each other. Usage: check_layers.py SRC_DIR; exit 1 on a breach."""
import os
import re
import sys

RANK = {'base': 0, 'sys': 1, 'table': 2, 'sources': 3, 'mover': 3, 'daemon': 4}
SOURCE_RANK = {'': 0, 'perf': 1, 'pmu': 2, 'damon': 2, 'abit': 2}


def place(path):
    """(layer, sub-folder of sources or '') of a path relative to src/."""
    parts = path.split('/')
    sub = parts[1] if parts[0] == 'sources' and len(parts) > 2 else ''
    return parts[0], sub


def breach(frm, to):
    (fl, fs), (tl, ts) = place(frm), place(to)
    if fl not in RANK or tl not in RANK:
        return 'outside the layers'
    if fl == tl == 'sources' and fs != ts and SOURCE_RANK[ts] >= SOURCE_RANK[fs]:
        return 'sources/%s includes sources/%s' % (fs or '.', ts or '.')
    if fl != tl and RANK[tl] >= RANK[fl]:
        return '%s includes %s' % (fl, tl)
    return None


def includes(src):
    graph, bad = {}, []
    for d, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(('.c', '.h')):
                continue
            rel = os.path.relpath(os.path.join(d, f), src)
            mod = os.path.splitext(rel)[0]
            graph.setdefault(mod, set())
            for n, line in enumerate(open(os.path.join(d, f)), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m or m.group(1) == 'pghotd-build.h':
                    continue
                to = m.group(1)
                if not os.path.exists(os.path.join(src, to)):
                    bad.append('%s:%d: "%s" is not a path under src/' % (rel, n, to))
                    continue
                why = breach(rel, to)
                if why:
                    bad.append('%s:%d: upward include of %s (%s)' % (rel, n, to, why))
                if os.path.splitext(to)[0] != mod:
                    graph[mod].add(os.path.splitext(to)[0])
    return graph, bad


def circles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else 'src'
    graph, bad = includes(src)
    bad += ['include circle: ' + ' -> '.join(c) for c in circles(graph)]
    for b in bad:
        print(b)
    print('%d modules, %d includes between them, %d problems' %
          (len(graph), sum(len(v) for v in graph.values()), len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

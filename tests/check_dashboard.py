#!/usr/bin/env python3
"""The Grafana dashboard in contrib/ is valid JSON and names only series pghotd exports.

Usage: check_dashboard.py DASHBOARD RENDER
RENDER is a program that prints the stats file (tests/helper_render_stats: every family
stats.c renders); the per-cgroup families, written by the per-cgroup module beside stats.c
and only while cgroups are watched, are listed below. Every PromQL expression of the
dashboard (its panels' targets, nested rows included, and its variables' queries) must name
at least one series, and each series it names must be exported; the panels' ids must be
unique, and every target needs a refId. Every expression, Grafana's variables replaced,
must also parse as PromQL by Prometheus's own parser (promtool check rules, from Debian's
prometheus, as the stats file's check needs it). Exit 1 with one line per problem."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Written by pghotd's per-cgroup figures (issue 46 item 1), not by stats_render().
CGROUP_FAMILIES = {
    'pghotd_cgroup_promoted_pages_total',
    'pghotd_cgroup_demoted_pages_total',
    'pghotd_cgroup_memory_bytes',
    'pghotd_cgroup_hot_pages',
    'pghotd_cgroups',
}
KEYWORDS = {'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or',
            'unless', 'offset', 'inf', 'nan', 'atan2'}


def exported(render):
    text = subprocess.run([render], check=True, capture_output=True, text=True).stdout
    names = set(re.findall(r'^# TYPE (\S+) ', text, re.M))
    if not names:
        sys.exit('check_dashboard: %s printed no family' % render)
    return names | CGROUP_FAMILIES


def series_of(expr):
    """The metric names a PromQL expression (with Grafana's variables) selects."""
    e = re.sub(r'label_values\(\s*([^,)]+?)\s*,\s*\w+\s*\)', r'\1', expr)  # Grafana's
    e = re.sub(r'\$\{[^}]*\}|\$\w+', ' ', e)                 # $instance, $__rate_interval
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', ' ', e)  # strings
    e = re.sub(r'\{[^}]*\}', ' ', e)                          # label matchers
    e = re.sub(r'\[[^\]]*\]', ' ', e)                         # ranges, subqueries
    e = re.sub(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', r' ', e)
    names = []
    for m in re.finditer(r'[A-Za-z_:][A-Za-z0-9_:]*', e):
        if re.match(r'\s*\(', e[m.end():]) or m.group(0) in KEYWORDS:
            continue  # a function, or an operator
        if m.start() and (e[m.start() - 1].isdigit() or e[m.start() - 1] == '.'):
            continue  # the exponent or unit of a number
        names.append(m.group(0))
    return names


def panels_of(panels):
    for p in panels:
        yield p
        yield from panels_of(p.get('panels', []))


def expressions(dash, problems):
    ids = []
    for p in panels_of(dash.get('panels', [])):
        ids.append(p.get('id'))
        for t in p.get('targets', []):
            if not t.get('refId'):
                problems.append('panel "%s": a target without refId' % p.get('title'))
            yield 'panel "%s"' % p.get('title'), t.get('expr', '')
    if len(ids) != len(set(ids)):
        problems.append('panel ids are not unique: %s' % ids)
    for v in dash.get('templating', {}).get('list', []):
        q = v.get('query')
        if v.get('type') == 'query':
            yield 'variable $%s' % v.get('name'), q.get('query', '') if isinstance(q, dict) else q


def promql_problems(exprs):
    """What promtool says of the expressions as recording rules (their syntax and types)."""
    if not shutil.which('promtool'):
        return ['promtool missing: apt-get install prometheus (make deps does)']
    rules = ['groups:', '  - name: dashboard', '    rules:']
    for i, (_, expr) in enumerate(exprs):
        if expr.startswith('label_values('):
            continue  # Grafana's, not PromQL
        e = expr.replace('$__rate_interval', '5m')
        e = re.sub(r'\$\{?(\w+)\}?', 'x', e)
        rules += ['      - record: dashboard:expr_%d' % i, '        expr: %s' % json.dumps(e)]
    with tempfile.NamedTemporaryFile('w', suffix='.yml', delete=False) as f:
        f.write('\n'.join(rules) + '\n')
    try:
        r = subprocess.run(['promtool', 'check', 'rules', f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if r.returncode == 0:
        return []
    return ['promtool check rules: ' + line for line in (r.stdout + r.stderr).splitlines()
            if line.strip()]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        dash = json.load(open(sys.argv[1]))
    except (OSError, ValueError) as e:
        sys.exit('check_dashboard: %s: %s' % (sys.argv[1], e))
    known, problems, count = exported(sys.argv[2]), [], 0
    exprs = list(expressions(dash, problems))
    problems += promql_problems(exprs)
    for where, expr in exprs:
        names = series_of(expr)
        if not names:
            problems.append('%s: no series in %r' % (where, expr))
        for n in names:
            count += 1
            if n not in known:
                problems.append('%s: %s is not a series pghotd exports (%r)' % (where, n, expr))
    for p in problems:
        print('check_dashboard: FAIL: ' + p)
    if not problems:
        print('check_dashboard: pass: %d series named, all exported' % count)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""Prints BENCHMARKS.md rows from run-all.sh JSON lines: one row per line, in file order.

With --median: one row per label (repeated rows, e.g. ROWS="push1 popack1 push1 popack1 push1 popack1"), giving the
median and the [min-max] spread of CPU us per message (broker, PostgreSQL, total) and of msg/s over the repetitions."""
import json, statistics, sys

def f(x, nd=0):
    return '—' if x is None else (f'{x:,.{nd}f}')

def us(j):
    c = j.get('cpu_us_per_msg') or {}
    if 'total' not in c:
        return '—'
    return f"{c['broker']:,.1f} + {c['pg']:,.1f} = **{c['total']:,.1f}**"

def row(j):
    label = j.get('label', '').split(' rev=')[0]
    rev = j.get('label', '').split(' rev=')[-1]
    lat = j.get('latency_ms') or {}
    ref = j.get('reference') or {}
    rate = j.get('moves_per_s') or j.get('messages_per_s')
    if j.get('mode') == 'wakeup':
        w = j.get('wakeup_ms') or {}
        return f"| {label} | {rev} | wake-up p50/p90/p99/max {w.get('p50')}/{w.get('p90')}/{w.get('p99')}/{w.get('max')} ms | | | {j.get('errors',{}).get('total')} | | | | |"
    if j.get('mode') == 'msgpage':
        k = j.get('latency_by_kind_ms') or {}
        kinds = ', '.join(f"{n} {v.get('p50')}/{v.get('p99')}" for n, v in k.items())
        return (f"| {label} | {rev} | {f(j.get('pages_per_s'),1)} pages/s (fill {f(j.get('fill_messages'))} in {j.get('fill_s')} s) "
                f"| {lat.get('p50')} / {lat.get('p99')} ({kinds}) | | {j.get('errors',{}).get('total')} "
                f"| {us(j)} | {f(j.get('broker_cpu_pct'))} / {f(j.get('pg_cpu_pct'))} / {f(j.get('bench_cpu_pct'))} | | |")
    return (f"| {label} | {rev} | **{f(rate)}** | {lat.get('p50')} / {lat.get('p99')} | "
            f"{f(ref.get('messages_per_s'))} ({ref.get('ratio')}×) | {j.get('errors',{}).get('total')} | "
            f"{us(j)} | "
            f"{f(j.get('broker_cpu_pct'))} / {f(j.get('pg_cpu_pct'))} / {f(j.get('bench_cpu_pct'))} / other {f(j.get('other_cpu_pct'))} | "
            f"{j.get('commits_per_msg')} | {j.get('backlog_at_end','')} |")

def spread(v, nd=1):
    v = [x for x in v if x is not None]
    if not v:
        return '—'
    return f"{statistics.median(v):,.{nd}f} [{min(v):,.{nd}f}–{max(v):,.{nd}f}]"

if len(sys.argv) > 1 and sys.argv[1] == '--median':
    groups = {}
    for path in sys.argv[2:]:
        for line in open(path):
            line = line.strip()
            if line.startswith('{'):
                j = json.loads(line)
                groups.setdefault(j.get('label', '').split(' rev=')[0], []).append(j)
    print('| row | runs | CPU µs/msg total | broker | of which JIT | PostgreSQL | net of idle: total | msg/s | p99 ms | commits / msg | load average (start) |')
    print('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |')
    for label, js in groups.items():
        c = [j.get('cpu_us_per_msg') or {} for j in js]
        net = [(j.get('cpu_us_per_msg_net') or {}).get('total') for j in js]
        print(f"| {label} | {len(js)} | **{spread([x.get('total') for x in c])}** | {spread([x.get('broker') for x in c])} "
              f"| {spread([x.get('broker_jit') for x in c])} "
              f"| {spread([x.get('pg') for x in c])} | {spread(net)} | {spread([j.get('messages_per_s') for j in js], 0)} "
              f"| {spread([(j.get('latency_ms') or {}).get('p99') for j in js])} "
              f"| {spread([j.get('commits_per_msg') for j in js], 3)} | {', '.join(j.get('loadavg_start', '').split(' ')[0] for j in js)} |")
    sys.exit(0)

print('| row | rev | msg/s | p50 / p99 ms | reference (ratio) | errors | CPU µs/msg broker + PG = total | broker / PG / bench CPU % | commits / msg | backlog at end |')
print('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for path in sys.argv[1:]:
    for line in open(path):
        line = line.strip()
        if line.startswith('{'):
            print(row(json.loads(line)))

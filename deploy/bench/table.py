#!/usr/bin/env python3
"""Prints BENCHMARKS.md rows from run-all.sh JSON lines: one row per line, in file order."""
import json, sys

def f(x, nd=0):
    return '—' if x is None else (f'{x:,.{nd}f}')

def row(j):
    label = j.get('label', '').split(' rev=')[0]
    rev = j.get('label', '').split(' rev=')[-1]
    lat = j.get('latency_ms') or {}
    ref = j.get('reference') or {}
    rate = j.get('moves_per_s') or j.get('messages_per_s')
    if j.get('mode') == 'wakeup':
        w = j.get('wakeup_ms') or {}
        return f"| {label} | {rev} | wake-up p50/p90/p99/max {w.get('p50')}/{w.get('p90')}/{w.get('p99')}/{w.get('max')} ms | | | {j.get('errors',{}).get('total')} | | | |"
    if j.get('mode') == 'msgpage':
        k = j.get('latency_by_kind_ms') or {}
        kinds = ', '.join(f"{n} {v.get('p50')}/{v.get('p99')}" for n, v in k.items())
        return (f"| {label} | {rev} | {f(j.get('pages_per_s'),1)} pages/s (fill {f(j.get('fill_messages'))} in {j.get('fill_s')} s) "
                f"| {lat.get('p50')} / {lat.get('p99')} ({kinds}) | | {j.get('errors',{}).get('total')} "
                f"| {f(j.get('broker_cpu_pct'))} / {f(j.get('pg_cpu_pct'))} / {f(j.get('bench_cpu_pct'))} | | |")
    return (f"| {label} | {rev} | **{f(rate)}** | {lat.get('p50')} / {lat.get('p99')} | "
            f"{f(ref.get('messages_per_s'))} ({ref.get('ratio')}×) | {j.get('errors',{}).get('total')} | "
            f"{f(j.get('broker_cpu_pct'))} / {f(j.get('pg_cpu_pct'))} / {f(j.get('bench_cpu_pct'))} / other {f(j.get('other_cpu_pct'))} | "
            f"{j.get('commits_per_msg')} | {j.get('backlog_at_end','')} |")

print('| row | rev | msg/s | p50 / p99 ms | reference (ratio) | errors | broker / PG / bench CPU % | commits / msg | backlog at end |')
print('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for path in sys.argv[1:]:
    for line in open(path):
        line = line.strip()
        if line.startswith('{'):
            print(row(json.loads(line)))

#!/usr/bin/env python3
"""Splits a perf profile of PostgreSQL backends by where the PL/pgSQL interpreter was (issue 39, docs/perf/README.md).

  perf record -F 999 --call-graph dwarf,16384 -p <backend pids> -o pg.perf.data   (a while, during the load)
  perf script -i pg.perf.data -F ip,sym | deploy/bench/perf-split.py

Each sample goes to one bucket by its stack: the call it is under (a set-returning function such as log_pop_many or
log_ack_many, read through ExecMakeTableFunctionResult; a scalar one such as log_ack, called from a Result node;
"other": commit, protocol, outside any function), whether a second PL/pgSQL function runs inside the first (a "nested
function": _log_pop_claim under log_pop_many, log_ack under log_ack_many), and what it was doing: a nested SQL statement
(its executor start, run, end), the first evaluation in the transaction of a PL/pgSQL simple expression (its
ExprState is built once per transaction), the rest of the interpreter, the function's SET clause (GUC save and
restore), commit. Prints the share of the samples of each bucket.
"""
import collections
import sys

NESTED_SQL = ('_SPI_execute_plan', 'SPI_cursor_open_internal', '_SPI_cursor_operation', 'exec_run_select')
EXPR_INIT = ('ExecInitExprWithParams', 'ExecInterpExprStillValid')


def bucket(frames):
    s = set(frames)
    if 'ExecMakeTableFunctionResult' in s:
        side = 'set-returning call'
    elif 'ExecResult' in s and 'plpgsql_exec_function' in s:
        side = 'scalar call'
    else:
        side = 'other'
    if 'CommitTransaction' in s:
        return side, 'commit'
    where = 'outside any function'
    for f in frames:                                   # innermost first
        if f in NESTED_SQL:
            if 'standard_ExecutorStart' in s or 'ExecInitNode' in s:
                where = 'nested SQL: executor start'
            elif 'standard_ExecutorEnd' in s or 'ExecEndNode' in s:
                where = 'nested SQL: executor end'
            else:
                where = 'nested SQL: run'
            break
        if f in EXPR_INIT:
            where = 'simple expression, first use in the transaction'
            break
        if f == 'plpgsql_exec_function':
            where = 'PL/pgSQL interpreter, the rest'
            break
        if f == 'fmgr_security_definer':
            where = 'SET clause'
            break
    if frames.count('plpgsql_exec_function') >= 2 and where != 'outside any function':
        where = 'nested function: ' + where
    return side, where


def main():
    counts = collections.Counter()
    frames = []
    for line in sys.stdin:
        if line.strip():
            if line[0] in ' \t':
                parts = line.split()
                if len(parts) >= 2:
                    frames.append(parts[1].split('+')[0])
            else:
                frames = []
            continue
        if frames:
            counts[bucket(frames)] += 1
        frames = []
    if frames:
        counts[bucket(frames)] += 1
    total = sum(counts.values()) or 1
    for (side, where), n in sorted(counts.items(), key=lambda kv: (kv[0][0], -kv[1])):
        print(f'{side:20} {where:60} {100.0 * n / total:5.1f} %')
    print(f'{total} samples')


if __name__ == '__main__':
    main()

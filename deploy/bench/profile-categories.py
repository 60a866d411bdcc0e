#!/usr/bin/env python3
# Splits async-profiler collapsed stacks (dump,collapsed) into the categories of docs/perf/README.md: each sample goes
# to the first category met walking from the leaf up, kernel frames skipped (so a syscall counts under its libc/JNI
# caller: writev, send, recv, epoll_pwait2, the eventfd write). Usage: profile-categories.py x.collapsed [...]
import collections,sys,re
# first category met walking from the leaf up
cats=[
 ('JIT compiler', r'CompileBroker|C2Compiler|C1Compiler'),
 ('GC', r'G1|GC_active|GCTask|ParallelGC|gc/'),
 ('epoll wait / wake (eventfd)', r'epoll_pwait|epollWait|eventfd|Native.eventFdWrite|wakeup'),
 ('socket write (syscall)', r'^writev$|__GI___send|^__send$|^write$|sendAddress|writevAddresses'),
 ('socket read (syscall)', r'^recv$|recvAddress|^read$'),
 ('zstd', r'zstd|Zstd'),
 ('JSON (parse, render)', r'jackson|Jackson|JsonText|io/vertx/core/json|Json\.'),
 ('PostgreSQL client', r'pgclient|sqlclient'),
 ('metrics/stats', r'metrics/|/stats/|LongAdder|micrometer|Counter\.'),
 ('pop/ack consumer + fusion (ours)', r'queenvertx/(consumer|db)/'),
 ('push log writer (ours)', r'queenvertx/log/'),
 ('route handlers (ours)', r'queenvertx/http/routes'),
 ('router, guards, auth (ours + vertx-web)', r'queenvertx/(http/server|auth|http/HttpVerticle)|ext/web'),
 ('HTTP codec (netty + vertx http)', r'handler/codec/http|core/http/impl'),
 ('netty channel pipeline / buffers', r'io/netty/(channel|buffer|util)'),
 ('vert.x futures, contexts, event bus', r'io/vertx/core'),
 ('kernel other', r'_\[k\]$'),
]
cats=[(n,re.compile(p)) for n,p in cats]
def classify(frames):
    for fr in reversed(frames):
        if fr.endswith('_[k]'): continue
        for n,p in cats:
            if p.search(fr): return n
    return 'kernel other' if any(fr.endswith('_[k]') for fr in frames) else 'JVM runtime, libc, other'
for f in sys.argv[1:]:
    tot=0; c=collections.Counter()
    for line in open(f):
        s,n=line.rsplit(' ',1); n=int(n); tot+=n
        c[classify(s.split(';'))]+=n
    print(f,tot)
    for k,v in c.most_common(): print('  %5.1f%% %s'%(100*v/tot,k))

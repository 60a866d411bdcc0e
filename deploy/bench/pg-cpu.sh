# Sourced by sql-cost.sh, spread-cost.sh and fold-cost.sh (not run on its own): finds pgbench, and measures the PostgreSQL CPU that
# one pgbench run spends, from the postmaster's children's CPU once the run's backend has exited. Needs psql, pgbench
# (Debian's postgresql-client) and read access to the data directory's postmaster.pid (root or postgres); the
# connection comes from the PG* environment variables.
pgbench=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1 || true)
[ -n "$pgbench" ] || { echo "pgbench not found (apt-get install postgresql-client)" >&2; exit 2; }
psql_q() { psql -X -qAt -v ON_ERROR_STOP=1 -c "$1"; }

datadir=$(psql_q "SHOW data_directory")
postmaster=$(head -1 "$datadir/postmaster.pid")
children_cpu() { awk '{print $16 + $17}' "/proc/$postmaster/stat"; }   # clock ticks of exited children
hz=$(getconf CLK_TCK)

# pgbench_cpu N SCRIPT [ARG...]: runs SCRIPT N times on one connection (prepared statements; ARGs go to pgbench, e.g.
# -D var=value) and prints the clock ticks of PostgreSQL CPU the run spent; its output (latency lines and all) goes to
# the file in $pgbench_out.
pgbench_out=$(mktemp)
pgbench_cpu() {
  local before after
  before=$(children_cpu)
  "$pgbench" -n -M prepared -t "$1" -f "$2" "${@:3}" > "$pgbench_out" 2>&1 || { cat "$pgbench_out" >&2; exit 1; }
  sleep 0.3   # the backend exits after pgbench disconnects; its CPU then counts as the postmaster's children's
  after=$(children_cpu)
  echo $((after - before))
}

# seed_chunks: the queue $QUEUE with $PARTITIONS partitions, each holding one segment, and the table $CHUNKS of
# PARTITIONS / K disjoint random sets of $K of them (k, ids, names); sets $chunks (how many) and $hashes (K fresh
# transaction-id hashes, an SQL expression).
seed_chunks() {
  psql_q "SELECT count(queen.log_push(NULL, '$QUEUE', 'p-' || p, 1, decode(md5(p::text), 'hex'), '\\x00'::bytea))
          FROM generate_series(1, $PARTITIONS) p" > /dev/null
  psql_q "CREATE TABLE $CHUNKS AS
          SELECT (s.rn - 1) / $K AS k, array_agg(s.id ORDER BY s.id) AS ids, array_agg(s.name ORDER BY s.id) AS names
          FROM (SELECT p.id, p.name, row_number() OVER (ORDER BY random()) AS rn
                FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                WHERE q.name = '$QUEUE' AND q.tenant_id = '00000000-0000-0000-0000-000000000001') s
          GROUP BY 1 HAVING count(*) = $K"
  psql_q "CREATE UNIQUE INDEX ON $CHUNKS (k)"
  chunks=$(psql_q "SELECT count(*) FROM $CHUNKS")
  hashes="ARRAY(SELECT decode(md5(random()::text), 'hex') FROM generate_series(1, $K))"
}

# pgbench_script VAR SQL: a pgbench script file (kept in $scripts for clean-up) that draws :r, a chunk number, and
# runs SQL; its path goes into the variable VAR.
pgbench_script() {
  local f
  f=$(mktemp)
  scripts+=("$f")
  printf '\\set r random(0, %d)\n%s\n' $((chunks - 1)) "$2" > "$f"
  eval "$1=$f"
}

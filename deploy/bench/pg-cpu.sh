# Sourced by sql-cost.sh and spread-cost.sh (not run on its own): finds pgbench, and measures the PostgreSQL CPU that
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

# pgbench_cpu N SCRIPT: runs SCRIPT N times on one connection (prepared statements) and prints the clock ticks of
# PostgreSQL CPU the run spent; its output (latency lines and all) goes to the file in $pgbench_out.
pgbench_out=$(mktemp)
pgbench_cpu() {
  local before after
  before=$(children_cpu)
  "$pgbench" -n -M prepared -t "$1" -f "$2" > "$pgbench_out" 2>&1 || { cat "$pgbench_out" >&2; exit 1; }
  sleep 0.3   # the backend exits after pgbench disconnects; its CPU then counts as the postmaster's children's
  after=$(children_cpu)
  echo $((after - before))
}

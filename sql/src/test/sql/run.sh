#!/usr/bin/env bash
# Applies V1 + V2 + V3 to a fresh database and runs every NN_*.sql test script in order.
# Each script asserts with DO blocks that RAISE on failure; psql runs with ON_ERROR_STOP, so any failure exits non-zero.
# Connection: PGHOST (127.0.0.1), PGPORT (55432), PGUSER (postgres); database name: QUEEN_TEST_DB (queen_sqltest).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
MIG="$HERE/../../main/resources/db/migration"
export PGHOST="${PGHOST:-127.0.0.1}" PGPORT="${PGPORT:-55432}" PGUSER="${PGUSER:-postgres}"
DB="${QUEEN_TEST_DB:-queen_sqltest}"
PSQL=(psql -X -q -v ON_ERROR_STOP=1 --no-psqlrc)

"${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null
"${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB" >/dev/null

# Flyway creates the schema itself (V1 assumes it exists); every migration runs in one transaction, like Flyway.
"${PSQL[@]}" -d "$DB" -c "CREATE SCHEMA IF NOT EXISTS queen"
"${PSQL[@]}" -d "$DB" -1 -f "$MIG/V1__base.sql"
"${PSQL[@]}" -d "$DB" -1 -f "$MIG/V2__log_engine.sql"
"${PSQL[@]}" -d "$DB" -1 -f "$MIG/V3__messages_dlq.sql"
echo "migrations applied"

shopt -s nullglob
fail=0
for t in "$HERE"/[0-9][0-9]_*.sql; do
  name="$(basename "$t")"
  if out="$("${PSQL[@]}" -d "$DB" -f "$t" 2>&1)"; then
    echo "PASS $name"
    [ -n "${VERBOSE:-}" ] && echo "$out"
  else
    echo "FAIL $name"
    echo "$out" | sed 's/^/    /'
    fail=1
  fi
done

if [ "$fail" -ne 0 ]; then
  echo "SOME TESTS FAILED"
  exit 1
fi
echo "ALL TESTS PASSED"

# Sourced by run-all.sh and ab.sh: stopping a broker node the bench started. Expects the caller's globals
# `pids` (an associative array: node name -> broker pid), `work` (the run's folder; a node's embedded PostgreSQL lives
# in $work/<name>/pg) and a `log` function.

stop_node() { # name
  local name=$1 pid=${pids[$1]:-}
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  unset "pids[$name]"
  # an embedded PostgreSQL left behind by a killed node: stop it by the pid in its own postmaster.pid
  local pm="$work/$name/pg/postmaster.pid"
  if [ -f "$pm" ]; then
    local pgpid
    pgpid=$(head -1 "$pm")
    if [ -n "$pgpid" ] && kill -0 "$pgpid" 2>/dev/null; then
      log "stopping PostgreSQL $pgpid left by $name"
      kill -INT "$pgpid" 2>/dev/null || true
      for _ in $(seq 40); do kill -0 "$pgpid" 2>/dev/null || break; sleep 0.5; done
    fi
  fi
}

#!/usr/bin/env bash
# Rewrites .surefire-run-order (beside this script) from the class times of the last full test run
# (verticles/target/surefire-reports). Surefire's balanced run order reads it, so the test JVMs take the longest
# classes first. Format, one line per class: 1,<milliseconds>,<class>. Run after a full `mvn -B -ntp test`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
reports="$here/../../../target/surefire-reports"
shopt -s nullglob
files=("$reports"/TEST-*.xml)
[ ${#files[@]} -gt 0 ] || { echo "no reports in $reports: run the tests first" >&2; exit 1; }
for f in "${files[@]}"; do
  # the <testsuite ...> element's name and time attributes
  grep -m1 '<testsuite ' "$f" | tr ' ' '\n' |
    sed -n -e 's/^name="\([^"]*\)".*/\1/p' -e 's/^time="\([^"]*\)".*/\1/p' | paste -sd' '
done | awk '{ print "1," int($2 * 1000) "," $1 }' | sort -t, -k2,2nr > "$here/.surefire-run-order"
echo "$(wc -l < "$here/.surefire-run-order") classes written to $here/.surefire-run-order"

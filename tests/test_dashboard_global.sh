#!/usr/bin/env bash
# test_dashboard_global.sh - the dashboard page's global view (docs/dashboard.md,
# "The global view") in a real browser, with two processes that never ran
# together: A (tests/live/fakeproc, tasks.ended_per_s 1000) streams for 2 s and
# ends; then B (2500) streams; then tests/e2e/global.mjs (Debian's chromium,
# playwright-core from web/node_modules) opens the page and asserts that the
# total throughput never adds them (its largest value is B's 2500, never
# 3500), that it breaks between them, that A is drawn and listed as finished,
# that the page opened on B, and that the legends show numbers.  No timing is
# asserted: A has ended before B starts, whatever the machine's speed.
#
# usage: test_dashboard_global.sh TASKSCOPE FAKEPROC SOURCE_DIR
# Exits 77 (ctest: skipped), saying why, when chromium, web/node_modules or
# the dashboard (a build without libmicrohttpd or libsodium) is missing.
set -euo pipefail
ts=$1 fake=$2 src=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || skip "no chromium at $chromium (./scripts/deps installs Debian's chromium)"
for f in playwright-core/package.json uplot/dist/uPlot.iife.min.js; do
  [ -f "$src/web/node_modules/$f" ] || skip "web/node_modules lacks $f (run ./scripts/web)"
done
command -v node >/dev/null || fail "node is missing but web/node_modules is there (./scripts/deps installs nodejs)"
"$ts" dashboard --help >/dev/null 2>&1 ||
  skip "'$ts dashboard --help' fails: taskscope was built without the dashboard (libmicrohttpd-dev; ./scripts/deps)"

. "$(dirname "$0")/live/helpers.sh"
get() { curl -sf "$@"; }
show() { # what the dashboard and the processes said, after a failure
  for f in dash.out dash.err a.log b.log; do
    [ -s "$tmp/$f" ] && { echo "--- $f (last lines)"; tail -n 20 "$tmp/$f"; }
  done
  return 0
}

echo "-- the dashboard on free ports"
start_dashboard dash --web "$src/web"

echo "-- A: 20 snapshots 100 ms apart, 1000 tasks/s, then it ends"
st=0
"$fake" "$live" 20 100 --rank 0 --rate 1000 >"$tmp/a.log" 2>&1 || st=$?
[ $st = 0 ] || { show; fail "A: exit $st"; }
a_finished() { get "$base/api/processes" | jq -e 'length == 1 and .[0].connected == false and .[0].snapshots == 20 and (.[0].origin | type) == "number"' >/dev/null; }
wait_for 20 "A listed as finished with its 20 snapshots" a_finished
# the origin is on the dashboard's clock: near the start A said it had (its own clock, the same host)
get "$base/api/processes" | jq -e '.[0] | (.origin - .started) | fabs < 60' >/dev/null ||
  { show; fail "A's origin is not near its start: $(get "$base/api/processes")"; }
sleep 1 # a gap between them on the clock (not asserted: only that they do not overlap)

echo "-- B: 2500 tasks/s, running while the page is looked at"
"$fake" "$live" 600 100 --rank 1 --rate 2500 >"$tmp/b.log" 2>&1 &
b_pid=$!
pids+=("$b_pid")
b_some() { get "$base/api/processes" | jq -e 'length == 2 and .[1].connected == true and .[1].snapshots >= 5' >/dev/null; }
wait_for 20 "B connected with 5 snapshots" b_some
# B's t = 0 came after A's last snapshot on the dashboard's clock
get "$base/api/processes" | jq -e '.[1].origin > .[0].origin + .[0].last_t' >/dev/null ||
  { show; fail "B's origin is not after A's end: $(get "$base/api/processes")"; }
a_id=$(get "$base/api/processes" | jq '.[0].id')
b_id=$(get "$base/api/processes" | jq '.[1].id')

echo "-- the page in chromium ($("$chromium" --version 2>/dev/null | head -1))"
status=0
TSE2E_URL=$base/ TSE2E_WEB=$src/web TSE2E_A=$a_id TSE2E_B=$b_id TSE2E_RATE_A=1000 TSE2E_RATE_B=2500 \
  CHROMIUM=$chromium timeout 100 node "$src/tests/e2e/global.mjs" || status=$?
if [ "$status" != 0 ]; then
  show
  [ "$status" = 124 ] && fail "tests/e2e/global.mjs ran past 100 s"
  fail "tests/e2e/global.mjs: exit $status"
fi
kill -0 "$dash_pid" 2>/dev/null || { show; fail "the dashboard ended during the test"; }
echo "PASS"

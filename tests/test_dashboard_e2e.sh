#!/usr/bin/env bash
# test_dashboard_e2e.sh - `taskscope dashboard` and its page (web/) end to end
# in a real browser: starts the dashboard on free ports, one process that
# streams to it (TASKSCOPE_LIVE), and tests/e2e/dashboard.mjs, which drives
# Debian's chromium with playwright-core (web/node_modules, ./scripts/web) and
# asserts: the page loads without console errors or requests elsewhere, the
# charts gain points while the process streams, the thread-cap slider's
# control reaches the process (and, for a real program, is acknowledged and
# reported by the next snapshot), a wrong token gets 403 and changes nothing,
# and (a real program) the debugger's pause shows the tasks held, a breakpoint
# stops a type, step and resume run on; then the program ends normally on
# SIGTERM with its profile (live_worker: every task counted).
#
# usage: test_dashboard_e2e.sh TASKSCOPE SOURCE_DIR MODE -- PROCESS [ARGS...]
#   MODE  program: PROCESS runs libtaskscope's streamer: the page must show
#                  its acknowledgement, its next snapshot must report the new
#                  value and its output must say so (tests/e2e/live_worker
#                  prints "rt.thread_cap = N"; TSE2E_LOG=0 for a program that
#                  prints nothing)
#         fake:    PROCESS only prints the commands it receives
#                  (tests/live/fakeproc): its output must show the command
#   PROCESS runs with TASKSCOPE_LIVE set to the dashboard's ingest address (an
#   argument @LIVE@ is replaced by it too: fakeproc @LIVE@ 400 100) and must
#   keep streaming for the test's length (about 30 s); it is ended at the
#   end.  TSE2E_PARAM names the int parameter to move (rt.thread_cap).
#   TSCOPE_SCREENSHOT=PATH: a PNG of the page while the process streams
#   (a relative PATH is taken from SOURCE_DIR: docs/dashboard.png).
# Exits 77 (ctest: skipped), saying why, when chromium, web/node_modules or
# the dashboard (a build without libmicrohttpd or libsodium) is missing.
set -euo pipefail
ts=$1 src=$2 mode=$3
shift 3
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || { echo "usage: $0 TASKSCOPE SOURCE_DIR MODE -- PROCESS [ARGS...]" >&2; exit 2; }
case $mode in
  program) applied=1 log=${TSE2E_LOG:-1} ;;
  fake) applied=0 log=1 ;;
  *) echo "FAIL: MODE is '$mode', expected program or fake" >&2; exit 2 ;;
esac
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

tmp=$(mktemp -d)
dash_pid="" proc_pid=""
cleanup() {
  set +e # the test's status stands, whatever the two processes end with
  # only the two processes this test started, by their ids
  [ -n "$proc_pid" ] && kill "$proc_pid" 2>/dev/null && wait "$proc_pid" 2>/dev/null
  [ -n "$dash_pid" ] && kill "$dash_pid" 2>/dev/null && wait "$dash_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
show() { # what the dashboard and the process said, after a failure
  for f in dash.out dash.err proc.log; do
    [ -s "$tmp/$f" ] && { echo "--- $f (last lines)"; tail -n 20 "$tmp/$f"; }
  done
  return 0
}

echo "-- the dashboard on free ports"
"$ts" dashboard --port 0 --ingest-port 0 --exit-after 120 --web "$src/web" >"$tmp/dash.out" 2>"$tmp/dash.err" &
dash_pid=$!
for _ in $(seq 100); do
  [ "$(grep -c '^taskscope dashboard: ' "$tmp/dash.out" || true)" -ge 2 ] && break
  kill -0 "$dash_pid" 2>/dev/null || break
  sleep 0.1
done
grep -q "built without libsodium-dev" "$tmp/dash.err" && skip "$(cat "$tmp/dash.err")"
# taskscope dashboard: http://ADDR:PORT/ (token TOKEN)
# taskscope dashboard: processes send to ADDR:INGEST (TASKSCOPE_LIVE=ADDR:INGEST/SECRET)
line1=$(sed -n 1p "$tmp/dash.out") line2=$(sed -n 2p "$tmp/dash.out")
url=$(sed -n 's|^taskscope dashboard: \(http://[^ ]*/\) (token \([^ )]*\))$|\1|p' <<<"$line1")
token=$(sed -n 's|^taskscope dashboard: \(http://[^ ]*/\) (token \([^ )]*\))$|\2|p' <<<"$line1")
live=$(sed -n 's|^taskscope dashboard: processes send to .* (TASKSCOPE_LIVE=\([^ )]*\))$|\1|p' <<<"$line2")
[ -n "$url" ] && [ -n "$token" ] && [ -n "$live" ] ||
  { show; fail "the dashboard's first lines are not its address, token and ingest address: '$line1' '$line2'"; }
echo "page $url, processes send to $live"

args=()
for a in "$@"; do args+=("${a//@LIVE@/$live}"); done
echo "-- the process: ${args[*]}"
# its profile goes to the scratch folder, not to the working directory
TASKSCOPE_LIVE=$live TASKSCOPE_OUTPUT_DIR=$tmp/out "${args[@]}" >"$tmp/proc.log" 2>&1 &
proc_pid=$!
sleep 0.3
kill -0 "$proc_pid" 2>/dev/null || { show; fail "the process ended at once"; }

if [ -n "${TSCOPE_SCREENSHOT:-}" ]; then
  case $TSCOPE_SCREENSHOT in /*) ;; *) TSCOPE_SCREENSHOT=$src/$TSCOPE_SCREENSHOT ;; esac
  export TSCOPE_SCREENSHOT
fi
echo "-- the page in chromium ($("$chromium" --version 2>/dev/null | head -1))"
status=0
TSE2E_URL=$url TSE2E_TOKEN=$token TSE2E_WEB=$src/web TSE2E_PROC_LOG=$tmp/proc.log \
  TSE2E_APPLIED=$applied TSE2E_LOG=$log CHROMIUM=$chromium timeout 100 node "$src/tests/e2e/dashboard.mjs" || status=$?
if [ "$status" != 0 ]; then
  show
  [ "$status" = 124 ] && fail "tests/e2e/dashboard.mjs ran past 100 s"
  fail "tests/e2e/dashboard.mjs: exit $status"
fi
kill -0 "$dash_pid" 2>/dev/null || { show; fail "the dashboard ended during the test"; }
if [ $applied = 1 ]; then
  echo "-- the program, after pause, breakpoint, step and resume, ends normally on SIGTERM"
  kill -TERM "$proc_pid"
  st=0
  timeout 30 tail --pid="$proc_pid" -f /dev/null || { show; fail "the program did not end within 30 s of SIGTERM"; }
  wait "$proc_pid" || st=$?
  proc_pid=""
  [ $st = 0 ] || { show; fail "the program's exit status: $st"; }
  [ -s "$tmp/out/profile.json" ] || { show; fail "no profile.json from the program"; }
  # tests/e2e/live_worker: each round is 127 split and 256 leaf tasks
  rounds=$(sed -n 's/^live_worker: \([0-9]*\) rounds$/\1/p' "$tmp/proc.log")
  case " ${args[*]} " in
    */live_worker\ *) [ -n "$rounds" ] || { show; fail "live_worker did not print its rounds"; } ;;
  esac
  if [ -n "$rounds" ]; then
    got=$(jq -r '[.types[] | select(.name == "split" or .name == "leaf") | "\(.name)=\(.calls)"] | sort | join(" ")' "$tmp/out/profile.json")
    [ "$got" = "leaf=$((256 * rounds)) split=$((127 * rounds))" ] ||
      fail "after $rounds rounds the profile counts $got, expected leaf=$((256 * rounds)) split=$((127 * rounds))"
    echo "ok - $rounds rounds, every task in the profile: $got"
  fi
fi
echo "PASS"

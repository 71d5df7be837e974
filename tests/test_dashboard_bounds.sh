#!/usr/bin/env bash
# test_dashboard_bounds.sh - `taskscope dashboard` cannot be held
# (docs/dashboard.md, "Limits"; issue 30, point 2): while 128 HTTP
# connections trickle a byte a second without ever finishing a request
# (reconnecting when cut), 1,000 processes each hold half of a 1 MiB frame
# and 200 unauthenticated connections claim 1 MiB frames, the page still
# loads, a real process still streams, and the dashboard's resident memory
# stays within --memory 16 plus a fixed allowance for the process itself.
# Then, with the deadlines shortened for the test
# (TASKSCOPE_DASHBOARD_DEADLINE_MS), a slow request, a slow body, a half
# frame, a connection that never authenticates and an idle process are each
# closed.  No assertion on
# how fast anything happens.
# usage: test_dashboard_bounds.sh TASKSCOPE FAKEPROC HOLDCONNS [SANITIZER]
set -euo pipefail
ts=$1 fake=$2 hold=$3 sanitizer=${4:-}
source "$(dirname "$0")/live/helpers.sh"
fail() {
  echo "FAIL: $*" >&2
  for f in "$tmp"/*.err; do
    [ -s "$f" ] && tail -n 20 "$f" | sed "s|^|  $(basename "$f"): |" >&2
  done
  exit 1
}
get() { curl -s --max-time 10 "$@"; }

# the connections below need descriptors: 1,328 here and in the dashboard
want=1500
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $want ]; then
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fi
nproc_hold=1000
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $want ]; then
  nproc_hold=$(($(ulimit -n) - 500))
  echo "the descriptor limit is $(ulimit -n) (hard $(ulimit -Hn)): $nproc_hold half frames, not 1,000"
  [ $nproc_hold -ge 100 ] || fail "the descriptor limit $(ulimit -n) is too low for this test"
fi

mkdir -p "$tmp/web"
echo "<!-- taskscope bounds test page -->" >"$tmp/web/index.html"

# holders NAME ARGS...: holdconns in the background (output in $tmp/NAME.out)
holders() {
  local name=$1
  shift
  "$hold" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pids+=($!)
  holder_pids+=($!)
}
# stop_holders: ends them (quietly: bash would report each as killed)
stop_holders() {
  local p
  for p in "${holder_pids[@]}"; do
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  holder_pids=()
}
holder_pids=()
held() { grep -q "^held" "$tmp/$1.out"; }
cut_at_least() { [ "$(sed -n 's/^cut //p' "$tmp/$1.out" | tail -n 1)" -ge "$2" ] 2>/dev/null; }
rss_kib() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB$/\1/p" "/proc/$1/status"; }

echo "-- held: 128 slow HTTP connections, $nproc_hold half frames, 200 unauthenticated claims"
start_dashboard dash --web "$tmp/web" --memory 16
dash=$dash_pid
holders slow http "${base##*:}" 128 --reconnect
wait_for 30 "the slow HTTP connections" held slow
holders half ingest "$live" $nproc_hold --hello --claim 1048576 --send 524288
holders unauth ingest "$live" 200 --claim 1048576 --send 65536
wait_for 50 "the half frames sent" held half
wait_for 30 "the unauthenticated claims sent" held unauth
# the page loads while they are held (before: refused, all 128 connections taken)
page=$(get "$base/") || fail "GET / while 128 slow connections are held: curl $?"
[ "$page" = "<!-- taskscope bounds test page -->" ] || fail "GET / while held: $page"
# a process still streams
"$fake" "$live" 5 20 --rank 7 >"$tmp/p1.out" 2>"$tmp/p1.err"
streamed() {
  get "$base/api/processes" | jq -e 'map(select(.program == "fakeproc")) |
    length == 1 and .[0].snapshots == 5' >/dev/null
}
wait_for 20 "the real process's 5 snapshots" streamed
# the memory: the histories and the frames being received within --memory
# 16; the allowance is for the process itself (code and libraries, the
# threads of ~130 HTTP connections and their libmicrohttpd pools, 1,000
# processes' records): ~9 MiB resident in all here (before the bounds:
# 524 MiB); ASan's shadow and quarantine are not the dashboard's
allow_mib=32
rss=$(rss_kib "$dash" VmRSS) hwm=$(rss_kib "$dash" VmHWM)
echo "dashboard resident: $((rss / 1024)) MiB now, $((hwm / 1024)) MiB at most (bound $((16 + allow_mib)) MiB)"
if [ -n "$sanitizer" ]; then
  echo "a $sanitizer build: the resident memory is not checked"
else
  [ "$rss" -le $(((16 + allow_mib) * 1024)) ] && [ "$hwm" -le $(((16 + allow_mib) * 1024)) ] ||
    fail "resident $rss KiB (at most $hwm KiB) is past --memory 16 + $allow_mib MiB"
fi
# each kind of refusal said, in one line per kind at most every 10 s
grep -q ": the frames being received would pass their 4096 KiB (a quarter of --memory); closed the connection with the oldest unfinished frame" "$tmp/dash.err" ||
  fail "no line for the frames' memory"
grep -q ": a frame of more than 64 KiB before it was authenticated; connection closed" "$tmp/dash.err" ||
  fail "no line for an unauthenticated frame"
[ "$(wc -l <"$tmp/dash.err")" -le 20 ] || fail "$(wc -l <"$tmp/dash.err") lines on stderr"
wait_for 30 "the unauthenticated claims all closed" cut_at_least unauth 200
# of the half frames held (some handshakes lose their place to the 200
# unauthenticated claims arriving at the same time), at most 8 (4 MiB) kept
held_half=$(sed -n 's/^held //p' "$tmp/half.out")
[ "$held_half" -ge $((nproc_hold / 2)) ] || fail "half frames: only $held_half of $nproc_hold held"
cut_at_least half $((held_half - 8)) || fail "half frames kept: $(tail -n 1 "$tmp/half.out") of $held_half held cut"
kill -TERM "$dash"
st=0
wait "$dash" || st=$?
[ $st = 0 ] || fail "the dashboard's exit status: $st"
stop_holders

echo "-- deadlines (1 s for the test): a slow request, a slow body, a half frame, no authentication, idle"
export TASKSCOPE_DASHBOARD_DEADLINE_MS=1000
start_dashboard dash2 --web "$tmp/web"
unset TASKSCOPE_DASHBOARD_DEADLINE_MS
holders slow1 http "${base##*:}" 1
holders body1 http "${base##*:}" 1 --post
holders half1 ingest "$live" 1 --hello --claim 1000 --send 10
holders mute1 ingest "$live" 1 --claim 0
holders idle1 ingest "$live" 1 --hello --claim 0
wait_for 30 "the slow request cut" cut_at_least slow1 1
wait_for 30 "the slow body cut" cut_at_least body1 1
wait_for 30 "the half frame cut" cut_at_least half1 1
wait_for 30 "the silent connection cut" cut_at_least mute1 1
wait_for 30 "the idle process cut" cut_at_least idle1 1
grep -q ": a frame not whole within 1000 ms of its first byte; connection closed$" "$tmp/dash2.err" ||
  fail "no line for the half frame"
grep -q ": not authenticated within 1000 ms; connection closed$" "$tmp/dash2.err" ||
  fail "no line for the silent connection"
grep -q ": nothing received for 1000 ms; connection closed$" "$tmp/dash2.err" ||
  fail "no line for the idle process"
# a process whose frames come whole, every 20 ms, is not cut
"$fake" "$live" 100 20 >"$tmp/p2.out" 2>"$tmp/p2.err"
grep -q "closed the connection" "$tmp/p2.err" && fail "a real process was cut: $(cat "$tmp/p2.err")"
page=$(get "$base/") || fail "GET / after the deadlines: curl $?"
[ "$page" = "<!-- taskscope bounds test page -->" ] || fail "GET / after the deadlines: $page"
stop_holders
kill -TERM "$dash_pid"
st=0
wait "$dash_pid" || st=$?
[ $st = 0 ] || fail "dash2's exit status: $st"
if grep -lE "Sanitizer|runtime error" "$tmp"/*.err; then fail "a sanitizer report"; fi
echo "PASS"

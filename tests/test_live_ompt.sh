#!/usr/bin/env bash
# test_live_ompt.sh - the task debugger on an unmodified OpenMP program
# (tests/omp/live_tasks.c under `taskscope run --live`, measured through
# OMPT), driven through `taskscope dashboard`'s control endpoint as the
# page drives it (docs/dashboard.md):
# - a breakpoint on the leaf type: the process says paused, the hit type,
#   one thread held; the leaf calls stop growing and stay put;
# - step: exactly one more leaf task runs, then it is paused again;
# - clear the breakpoint and resume: leaf tasks run again;
# - pause, then the dashboard killed with -9: the program is released
#   (one line on stderr says so), finishes with its normal result, and its
#   profile counts exactly the leaf tasks the program counted itself.
# One OpenMP thread, so that a step is exactly one leaf task.
# Then `taskscope run --live`: the old form HOST:PORT refused (exit 2, and one
# warning when it comes from the environment), plain --live streams with
# TASKSCOPE_LIVE's value and is refused without it.
# usage: test_live_ompt.sh TASKSCOPE LIVE_TASKS BUILD_DIR
set -euo pipefail
ts=$1 prog=$2 build=$3
# $tmp, pids (killed at exit), wait_for, start_dashboard (sets dash_pid,
# base, ingest, token)
source "$(dirname "$0")/live/helpers.sh"
fail() {
  echo "FAIL: $*" >&2
  [ -n "${base:-}" ] && curl -s --max-time 5 "$base/api/history?id=1" |
    jq -c '.[-1] | {seq, debug, leaf: [.types[] | select(.name | startswith("leaf_tasks")) | .calls]}' >&2 2>/dev/null
  for f in dash.out dash.err prog.out prog.err; do
    [ -s "$tmp/$f" ] && sed "s|^|  $f: |" "$tmp/$f" | tail -n 20 >&2
  done
  exit 1
}
for tool in curl jq; do
  command -v $tool >/dev/null || fail "$tool is needed (apt-get install $tool)"
done
# A sanitizer build's OMPT tool needs the sanitizer runtime loaded first into
# a program built without it (as in test_adapters.sh).
# (grep -c reads all of ldd's output: with pipefail, grep -q could end the
# pipeline with ldd's SIGPIPE)
prog_env=()
if [ "$(ldd "$build/libtaskscope.so" | grep -c libasan)" -gt 0 ]; then
  prog_env=(LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
    ASAN_OPTIONS=detect_leaks=0)
  echo "note: AddressSanitizer build: the program runs with libasan preloaded, leaks unchecked"
fi

start_dashboard dash --exit-after 120
dash=$dash_pid

env "${prog_env[@]}" OMP_NUM_THREADS=1 TASKSCOPE_SAMPLE_MS=100 \
  "$ts" run -o "$tmp/out" --no-summary --live="$live" -- "$prog" "$tmp/stop" \
  >"$tmp/prog.out" 2>"$tmp/prog.err" &
prog_pid=$!
pids+=("$prog_pid")

# last JQ: the filter applied to the process's latest snapshot
last() { curl -s --max-time 10 "$base/api/history?id=1" | jq -r ".[-1] | $1" 2>/dev/null; }
seq_now() { last .seq; }
leaf=
leaf_type() {
  leaf=$(last '[.types[] | select(.name | startswith("leaf_tasks (")) | .name][0] // empty')
  [ -n "$leaf" ]
}
wait_for 30 "the leaf type in a snapshot" leaf_type
echo "leaf type: $leaf"
leaf_calls() { last "[.types[] | select(.name == \"$leaf\") | .calls][0] // 0"; }
control() { # JSON fields of the command (op, ...)
  local code
  code=$(curl -s --max-time 10 -o "$tmp/body" -w '%{http_code}' -X POST \
    -H "X-Taskscope-Token: $token" -d "{\"process\":1,$1}" "$base/api/control")
  [ "$code" = 200 ] && jq -e '.sent == 1' "$tmp/body" >/dev/null || fail "control {$1}: $code $(cat "$tmp/body")"
}
# settled: the leaf calls equal in two snapshots 0.5 s apart; sets $calls
settled() {
  local a b
  a=$(leaf_calls)
  sleep 0.5
  b=$(leaf_calls)
  calls=$b
  [ "$a" = "$b" ]
}
# stays N: the leaf calls are N now and in snapshots of the next second
stays() {
  local s0 end
  s0=$(seq_now)
  [[ $s0 =~ ^[0-9]+$ ]] || fail "no snapshot to read ($s0)"
  end=$((SECONDS + 10))
  local s
  while s=$(seq_now) && [[ $s =~ ^[0-9]+$ ]] || fail "no snapshot to read ($s)"; [ "$s" -lt $((s0 + 10)) ]; do
    [ "$(leaf_calls)" = "$1" ] || fail "leaf calls moved from $1 to $(leaf_calls) while paused"
    [ $SECONDS -lt $end ] || fail "no new snapshots while paused"
    sleep 0.1
  done
}

echo "-- break on $leaf"
control "\"op\":\"break\",\"type\":\"$leaf\""
hit() { [ "$(last '.debug | "\(.paused) \(.held) \(.hit)"')" = "true 1 $leaf" ]; }
wait_for 15 "paused at the breakpoint" hit
wait_for 15 "the leaf calls to settle" settled
stays "$calls"
[ "$calls" -gt 0 ] || fail "no leaf task before the breakpoint"
echo "paused at the breakpoint after $calls leaf tasks, 1 thread held"

echo "-- step"
control '"op":"step"'
one_more() { [ "$(leaf_calls)" = $((calls + 1)) ]; }
wait_for 15 "leaf calls $((calls + 1)) (one more)" one_more
stays $((calls + 1))
[ "$(last '.debug | "\(.paused) \(.held)"')" = "true 1" ] || fail "not paused after the step: $(last .debug)"
echo "stepped: $((calls + 1)) leaf tasks, paused again"

echo "-- clear the breakpoint, resume"
control '"op":"clear_break"'
control '"op":"resume"'
running() { [ "$(leaf_calls)" -gt $((calls + 100)) ] && [ "$(last .debug.paused)" = false ]; }
wait_for 15 "leaf tasks to run again" running
[ "$(last .debug.break)" = null ] || fail "breakpoint still set: $(last .debug)"

echo "-- pause, then the dashboard killed"
control '"op":"pause"'
held() { [ "$(last '.debug | "\(.paused) \(.held)"')" = "true 1" ]; }
wait_for 15 "paused" held
{ kill -9 "$dash" && wait "$dash"; } 2>/dev/null || true
released() { grep -q "^taskscope: live: .*resumed, breakpoint cleared$" "$tmp/prog.err"; }
wait_for 15 "the program's release line" released
sleep 0.3
touch "$tmp/stop"
st=0
wait "$prog_pid" || st=$?
[ $st = 0 ] || fail "the program ended with status $st"
[[ $(cat "$tmp/prog.out") =~ ^live_tasks:\ rounds\ ([0-9]+),\ leaf\ tasks\ ([0-9]+)$ ]] \
  || fail "the program's result: $(cat "$tmp/prog.out")"
counted=${BASH_REMATCH[2]}
[ "$counted" -gt $((calls + 100)) ] || fail "the program counted $counted leaf tasks"
profiled=$(jq --arg t "$leaf" '[.types[] | select(.name == $t) | .calls][0]' "$tmp/out/profile.json")
[ "$profiled" = "$counted" ] || fail "profile.json counts $profiled leaf tasks, the program $counted"
echo "the program finished: $counted leaf tasks, as many in its profile"

echo "-- taskscope run --live takes the dashboard's whole value"
start_dashboard dash2 --exit-after 60
st=0
"$ts" run --live="127.0.0.1:$ingest" -- true >/dev/null 2>"$tmp/run.err" || st=$?
[ $st = 2 ] && [ "$(cat "$tmp/run.err")" = "taskscope run: --live=127.0.0.1:$ingest: expected HOST:PORT/SECRET, the whole TASKSCOPE_LIVE value 'taskscope dashboard' prints" ] \
  || fail "run --live=HOST:PORT: $st $(cat "$tmp/run.err")"
st=0
env -u TASKSCOPE_LIVE "$ts" run --live -- true >/dev/null 2>"$tmp/run.err" || st=$?
[ $st = 2 ] && [ "$(cat "$tmp/run.err")" = "taskscope run: --live needs the value 'taskscope dashboard' prints: --live=HOST:PORT/SECRET, or TASKSCOPE_LIVE set to it" ] \
  || fail "plain --live without TASKSCOPE_LIVE: $st $(cat "$tmp/run.err")"
# the old form in the environment: one line that says what to set, the program runs unseen
st=0
env "${prog_env[@]}" TASKSCOPE_LIVE="127.0.0.1:$ingest" "$ts" run -q --no-summary -o "$tmp/old" -- \
  sleep 0.3 >/dev/null 2>"$tmp/run.err" || st=$?
[ $st = 0 ] && [ "$(grep -c TASKSCOPE_LIVE "$tmp/run.err")" = 1 ] &&
  grep -q "^taskscope: warning: TASKSCOPE_LIVE=\"127\.0\.0\.1:$ingest\" is invalid (accepted: HOST:PORT/SECRET, the whole value \`taskscope dashboard\` prints" "$tmp/run.err" \
  || fail "TASKSCOPE_LIVE=HOST:PORT: $st $(cat "$tmp/run.err")"
[ -f "$tmp/old/profile.json" ] || fail "the program under the old form wrote no profile"
# plain --live: TASKSCOPE_LIVE's value, streamed to the dashboard
env "${prog_env[@]}" TASKSCOPE_LIVE="$live" "$ts" run -q --live --no-summary -o "$tmp/plain" -- \
  sleep 1 >/dev/null 2>"$tmp/run.err" || fail "plain --live: $(cat "$tmp/run.err")"
curl -s --max-time 5 "$base/api/processes" | jq -e 'length == 1 and .[0].program == "sleep" and
  .[0].snapshots > 0' >/dev/null || fail "plain --live: $(curl -s "$base/api/processes")"
echo "run --live: the old form refused, plain --live streams with TASKSCOPE_LIVE's value"
echo PASS

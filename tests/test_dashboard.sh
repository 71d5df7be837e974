#!/usr/bin/env bash
# test_dashboard.sh - `taskscope dashboard` end to end (docs/dashboard.md):
# fake measured processes (tests/live/fakeproc.c) stream to it while curl
# and jq check every HTTP route: the process list, the history, the SSE
# stream, the control endpoint and its token, /metrics read by a strict
# parser of the Prometheus text format, the page's files; bad frames end
# one connection only; --secret-file keeps one secret across starts; peers
# that do not prove they know the secret (no
# handshake, another secret, a replayed handshake, a HELLO replayed from
# another connection) are dropped with one line each and never listed; a
# frame with one byte changed (payload or MAC) ends its connection; a
# dashboard killed with -9 leaves the processes
# unharmed; SIGTERM and --exit-after stop it cleanly (exit 0: under ASan
# that includes no leak).
# usage: test_dashboard.sh TASKSCOPE FAKEPROC
set -euo pipefail
ts=$1 fake=$2
# $tmp, pids (killed at exit), wait_for, start_dashboard (sets dash_pid,
# base, ingest, token)
source "$(dirname "$0")/live/helpers.sh"
fail() {
  echo "FAIL: $*" >&2
  for f in "$tmp"/*.err; do
    [ -s "$f" ] && sed "s|^|  $(basename "$f"): |" "$f" >&2
  done
  exit 1
}
for tool in curl jq; do
  command -v $tool >/dev/null || fail "$tool is needed (apt-get install $tool)"
done
get() { curl -s --max-time 10 "$@"; }
# status METHOD URL [curl args...]: the HTTP status; the body in $tmp/body
status() {
  local method=$1 url=$2
  shift 2
  curl -s --max-time 10 -o "$tmp/body" -w '%{http_code}' -X "$method" "$@" "$url"
}

echo "-- options"
"$ts" dashboard --help | grep -q -- "--ingest-port N" || fail "dashboard --help"
"$ts" --help | grep -q "^  dashboard \[options\]" || fail "taskscope --help lists dashboard"
st=0
"$ts" dashboard --port x 2>"$tmp/e" >/dev/null || st=$?
[ $st = 2 ] && [ "$(cat "$tmp/e")" = "taskscope dashboard: --port x: expected a port number 0-65535" ] \
  || fail "--port x: $st $(cat "$tmp/e")"
st=0
"$ts" dashboard --history 0 2>"$tmp/e" >/dev/null || st=$?
[ $st = 2 ] && grep -q "^taskscope dashboard: --history 0: expected a number 1-" "$tmp/e" \
  || fail "--history 0: $st $(cat "$tmp/e")"
st=0
"$ts" dashboard --web "$tmp/nowhere" 2>"$tmp/e" >/dev/null || st=$?
[ $st = 2 ] && [ "$(cat "$tmp/e")" = "taskscope dashboard: --web $tmp/nowhere: no index.html there" ] \
  || fail "--web without index.html: $st $(cat "$tmp/e")"

# the page: our own, so the checks do not depend on web/ (written elsewhere)
mkdir -p "$tmp/web/node_modules/uplot/dist"
echo "<!-- taskscope test page -->" >"$tmp/web/index.html"
echo "console.log('app');" >"$tmp/web/app.js"
echo "/* uplot js */" >"$tmp/web/node_modules/uplot/dist/uPlot.iife.min.js"
echo "/* uplot css */" >"$tmp/web/node_modules/uplot/dist/uPlot.min.css"
echo "secret" >"$tmp/secret.txt"

echo "-- start"
start_dashboard dash --web "$tmp/web" --history 30
dash=$dash_pid
st=0
"$ts" dashboard --port "${base##*:}" --ingest-port 0 --exit-after 5 --web "$tmp/web" >/dev/null \
  2>"$tmp/busy.err" || st=$?
[ $st = 1 ] && [ "$(cat "$tmp/busy.err")" = "taskscope dashboard: cannot listen on 127.0.0.1:${base##*:} (--port): Address already in use" ] \
  || fail "a busy port: $st $(cat "$tmp/busy.err")"
rm "$tmp/busy.err"
# an SSE listener from before any process, until it has seen 20 snapshots
curl -sN --max-time 20 "$base/api/events" >"$tmp/sse1" 2>/dev/null &
sse1=$!
pids+=("$sse1")
wait_for 10 "the first SSE stream" grep -q "^retry: 1000$" "$tmp/sse1"

echo "-- a process: HELLO, 20 snapshots"
"$fake" "$live" 20 50 --rank 3 --value 0.81 --linger 60000 >"$tmp/p1.out" 2>"$tmp/p1.err" &
p1=$!
pids+=("$p1")
listed() { [ "$(get "$base/api/processes" | jq length)" = 1 ]; }
wait_for 10 "the process in /api/processes" listed
get "$base/api/processes" | jq -e --argjson pid "$p1" '.[0] | .id == 1 and .pid == $pid and
  .rank == 3 and .nranks == 1 and .program == "fakeproc" and .host == "fakehost" and
  .connected == true' >/dev/null || fail "/api/processes: $(get "$base/api/processes")"
full() { [ "$(get "$base/api/history?id=1" | jq length)" = 20 ]; }
wait_for 20 "20 snapshots in /api/history" full
get "$base/api/history?id=1" | jq -e '[.[].seq] == [range(0;20)] and
  all(.[]; .series["node.speed"] == 0.81 and .pid > 0 and (.types | length) == 2)' >/dev/null \
  || fail "/api/history: $(get "$base/api/history?id=1" | head -c 600)"
get "$base/api/processes" | jq -e '.[0] | .snapshots == 20 and .kept == 20 and .last_t == 0.95 and
  .drops == 0' >/dev/null || fail "/api/processes after 20: $(get "$base/api/processes")"
# its origin (t = 0 on the dashboard's clock): Unix time, near the start it said (same host)
get "$base/api/processes" | jq -e '.[0] | (.origin | type) == "number" and (.origin - .started | fabs) < 60' \
  >/dev/null || fail "/api/processes origin: $(get "$base/api/processes")"
[ "$(status GET "$base/api/history?id=77")" = 404 ] || fail "history of an unknown process"
[ "$(status GET "$base/api/history?id=x")" = 400 ] || fail "history ?id=x"
[ "$(status GET "$base/api/history")" = 400 ] || fail "history without id"

echo "-- SSE"
# 20 snapshot events, the last one whole (the stream ends in a blank line)
all_snapshots() {
  [ "$(grep -c '^event: snapshot$' "$tmp/sse1")" = 20 ] &&
    [ "$(tail -c 2 "$tmp/sse1" | od -An -c | tr -d ' ')" = '\n\n' ]
}
wait_for 10 "20 snapshot events" all_snapshots
# every event: "event: NAME", one "data: JSON" line, a blank line
awk 'NR > 2 && (NR - 3) % 3 == 0 && !/^event: (snapshot|process|ack)$/ { exit 1 }
     NR > 2 && (NR - 3) % 3 == 1 && !/^data: \{/ { exit 1 }
     NR > 2 && (NR - 3) % 3 == 2 && $0 != "" { exit 1 }' "$tmp/sse1" \
  || fail "SSE stream framing: $(head -c 600 "$tmp/sse1")"
sed -n 's/^data: //p' "$tmp/sse1" | jq -e -s 'length == 21 and
  ([.[] | select(has("snapshot")) | .id] | unique) == [1] and
  [.[] | select(has("snapshot")) | .snapshot.seq] == [range(0;20)] and
  all(.[] | select(has("snapshot")); (.origin | type) == "number") and
  (.[0] | .id == 1 and .connected == true and .program == "fakeproc")' >/dev/null \
  || fail "SSE events: $(head -c 800 "$tmp/sse1")"
grep -q "^event: process$" "$tmp/sse1" || fail "no process event"

echo "-- control: the token"
body='{"process":1,"op":"set","name":"rt.thread_cap","value":1}'
with_token() { jq -c --arg t "$1" '. + {token: $t}' <<<"$body"; }
[ "$(status POST "$base/api/control" -d "$(with_token nope)")" = 403 ] || fail "wrong token: not 403"
jq -e '.error | length > 0' "$tmp/body" >/dev/null || fail "403 without an error: $(cat "$tmp/body")"
[ "$(status POST "$base/api/control" -d "$body")" = 403 ] || fail "no token: not 403"
[ "$(status POST "$base/api/control" -H "X-Taskscope-Token: nope" -d "$body")" = 403 ] \
  || fail "wrong header token: not 403"
[ "$(status POST "$base/api/control" -d "$(with_token "${token}x")")" = 403 ] || fail "longer token"
sleep 0.5
[ "$(grep -c '^command:' "$tmp/p1.out" || true)" = 0 ] || fail "a command went out without the token"
[ "$(status POST "$base/api/control" -H "X-Taskscope-Token: $token" -d '{"process":1,')" = 400 ] \
  || fail "bad JSON: not 400"
[ "$(status POST "$base/api/control" -d "$(jq -c '.process = 99' <<<"$(with_token "$token")")")" = 404 ] \
  || fail "unknown process: not 404"
[ "$(status POST "$base/api/control" -d "$(jq -c 'del(.op)' <<<"$(with_token "$token")")")" = 400 ] \
  || fail "no op: not 400"
[ "$(status GET "$base/api/control")" = 405 ] || fail "GET /api/control: not 405"

echo "-- control: sent, acknowledged"
curl -sN --max-time 20 "$base/api/events" >"$tmp/sse2" 2>/dev/null &
pids+=($!)
wait_for 10 "the second SSE stream" grep -q "^retry: 1000$" "$tmp/sse2"
[ "$(status POST "$base/api/control" -d "$(with_token "$token")")" = 200 ] \
  || fail "right token: $(cat "$tmp/body")"
jq -e '.sent == 1 and .id >= 1' "$tmp/body" >/dev/null || fail "control answer: $(cat "$tmp/body")"
cid=$(jq .id "$tmp/body")
commands() { [ "$(grep -c '^command:' "$tmp/p1.out")" -ge "$1" ]; }
wait_for 10 "the command at the process" commands 1
sed -n 's/^command: //p' "$tmp/p1.out" | head -1 | jq -e --argjson id "$cid" '.id == $id and
  .op == "set" and .name == "rt.thread_cap" and .value == 1 and (has("token") | not) and
  (has("process") | not)' >/dev/null || fail "the command: $(cat "$tmp/p1.out")"
acked() { grep -q '^event: ack$' "$tmp/sse2"; }
wait_for 10 "the ACK event" acked
grep -A1 '^event: ack$' "$tmp/sse2" | sed -n 's/^data: //p' | head -1 | jq -e --argjson id "$cid" \
  '.id == 1 and .ack.id == $id and .ack.ok == true and .ack.text == "fake"' >/dev/null \
  || fail "ACK event: $(cat "$tmp/sse2")"
# the header's token, to every process: a second one connects first
"$fake" "$live" 1 10 --rank 4 --linger 60000 >"$tmp/p2.out" 2>"$tmp/p2.err" &
p2=$!
pids+=("$p2")
two() { get "$base/api/processes" | jq -e 'length == 2 and all(.[]; .connected)' >/dev/null; }
wait_for 10 "the second process" two
[ "$(status POST "$base/api/control" -H "X-Taskscope-Token: $token" -d '{"process":"all","op":"pause"}')" = 200 ] \
  || fail "process all: $(cat "$tmp/body")"
jq -e '.sent == 2' "$tmp/body" >/dev/null || fail "process all: $(cat "$tmp/body")"
all_id=$(jq .id "$tmp/body")
[ "$all_id" -gt "$cid" ] || fail "command ids do not count up: $cid then $all_id"
wait_for 10 "the second command" commands 2
p2_command() { grep -q '^command:' "$tmp/p2.out"; }
wait_for 10 "the command at the second process" p2_command
for out in p1.out:2 p2.out:1; do
  sed -n 's/^command: //p' "$tmp/${out%:*}" | sed -n "${out#*:}p" | jq -e --argjson id "$all_id" \
    '.op == "pause" and .id == $id' >/dev/null || fail "process all at ${out%:*}: $(cat "$tmp/${out%:*}")"
done
kill "$p2"
wait "$p2" 2>/dev/null || true

echo "-- /metrics"
cat >"$tmp/prom.awk" <<'EOF'
# The Prometheus text format 0.0.4, strictly: "# HELP name text", "# TYPE
# name type" (one per family, before its samples), other comments, and
# samples name{label="value",...} value [timestamp], a family's samples
# together, label values with \\ \" \n escapes only, no duplicate series.
function err(msg) { printf "metrics line %d: %s: %s\n", NR, msg, $0 > "/dev/stderr"; bad = 1; exit 1 }
function is_name(s) { return s ~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/ }
function is_value(s) {
  return s ~ /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/ || s ~ /^(NaN|[+-]?Inf)$/
}
/^# TYPE / {
  n = split($0, f, " ")
  if (n != 4 || !is_name(f[3]) || f[4] !~ /^(counter|gauge|histogram|summary|untyped)$/) err("bad TYPE line")
  if (f[3] in typed) err("a second TYPE line for " f[3])
  if (f[3] in sampled) err("a TYPE line after samples of " f[3])
  typed[f[3]] = f[4]
  next
}
/^# HELP / {
  split($0, f, " ")
  if (!is_name(f[3]) || (f[3] in helped)) err("bad or second HELP line")
  helped[f[3]] = 1
  next
}
/^#/ { next }
{
  rest = $0
  if (!match(rest, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) err("no metric name")
  name = substr(rest, 1, RLENGTH)
  rest = substr(rest, RLENGTH + 1)
  if (!(name in typed)) err(name ": a sample without a TYPE line before it")
  if (name != current) {
    if (name in sampled) err(name ": its samples are not together")
    current = name
  }
  sampled[name] = 1
  labels = ""
  if (substr(rest, 1, 1) == "{") {
    rest = substr(rest, 2)
    split("", seen)
    first = 1
    while (substr(rest, 1, 1) != "}") {
      if (!first) {
        if (substr(rest, 1, 1) != ",") err("expected , between labels")
        rest = substr(rest, 2)
      }
      first = 0
      if (!match(rest, /^[a-zA-Z_][a-zA-Z0-9_]*/)) err("bad label name")
      lname = substr(rest, 1, RLENGTH)
      rest = substr(rest, RLENGTH + 1)
      if (lname in seen) err("label " lname " twice")
      seen[lname] = 1
      if (substr(rest, 1, 2) != "=\"") err("expected =\" after " lname)
      rest = substr(rest, 3)
      val = ""
      for (;;) {
        c = substr(rest, 1, 1)
        if (c == "") err("an unterminated label value")
        if (c == "\"") { rest = substr(rest, 2); break }
        if (c == "\\") {
          e = substr(rest, 2, 1)
          if (e != "\\" && e != "\"" && e != "n") err("a bad escape")
          val = val c e
          rest = substr(rest, 3)
          continue
        }
        val = val c
        rest = substr(rest, 2)
      }
      labels = labels lname "=" val "\001"
    }
    rest = substr(rest, 2)
  }
  if (rest !~ /^ [^ ]+( -?[0-9]+)?$/) err("expected one space, a value and an optional timestamp")
  split(substr(rest, 2), v, " ")
  if (!is_value(v[1])) err("a bad value")
  key = name "{" labels "}"
  if (key in series) err("a duplicate series")
  series[key] = 1
  samples++
}
END { if (!bad && samples == 0) { print "metrics: no samples" > "/dev/stderr"; exit 1 } }
EOF
get -D "$tmp/headers" "$base/metrics" >"$tmp/metrics"
grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/headers" \
  || fail "/metrics content type: $(cat "$tmp/headers")"
awk -f "$tmp/prom.awk" "$tmp/metrics" || fail "/metrics does not parse: $(cat "$tmp/metrics")"
# the parser itself refuses what it must (else the check above proves nothing)
for broken in 'taskscope_series{process="1"} 1' $'# TYPE a gauge\na{x="\\q"} 1' \
  $'# TYPE a gauge\na{x="1"} one' $'# TYPE a gauge\na{x="1",} 1' \
  $'# TYPE a gauge\n# TYPE a gauge\na 1' $'# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x="2"} 1' \
  $'# TYPE a gauge\na{x="1"} 1\na{x="1"} 2' $'# TYPE a gauge\na{1x="1"} 1'; do
  printf '%s\n' "$broken" >"$tmp/broken"
  if awk -f "$tmp/prom.awk" "$tmp/broken" 2>/dev/null; then fail "the parser took: $broken"; fi
done
# the value of exactly one sample
metric() { K="$1" awk 'index($0, ENVIRON["K"] " ") == 1 { print substr($0, length(ENVIRON["K"]) + 2) }' "$tmp/metrics"; }
same() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 == b + 0) }'; }
v=$(metric 'taskscope_series{process="1",rank="3",program="fakeproc",series="node.speed"}')
same "$v" 0.81 || fail "taskscope_series node.speed: '$v': $(cat "$tmp/metrics")"
v=$(metric 'taskscope_series{process="1",rank="3",program="fakeproc",series="rt.tasks"}')
same "$v" 190 || fail "taskscope_series rt.tasks: '$v'"
v=$(metric 'taskscope_type_calls_total{process="1",rank="3",type="fib"}')
same "$v" 2000 || fail "taskscope_type_calls_total fib: '$v'"
v=$(metric 'taskscope_type_self_seconds_total{process="1",rank="3",type="fib"}')
same "$v" 0.2 || fail "taskscope_type_self_seconds_total fib: '$v'"
v=$(metric 'taskscope_type_calls_total{process="1",rank="3",type="odd \"type\" \\ x\ny"}')
same "$v" 7 || fail "a type name with a quote, a backslash and a line break: '$v'"
v=$(metric "taskscope_process_connected{process=\"1\",rank=\"3\",program=\"fakeproc\",pid=\"$p1\",host=\"fakehost\"}")
same "$v" 1 || fail "taskscope_process_connected: '$v'"
v=$(metric 'taskscope_process_drops_total{process="1",rank="3",program="fakeproc"}')
same "$v" 0 || fail "taskscope_process_drops_total: '$v'"

echo "-- bad frames end their connection only"
for how in magic version large; do
  "$fake" "$live" 0 0 --bad $how --linger 10000 2>"$tmp/bad-$how.err" \
    || fail "--bad $how: the dashboard did not close the connection"
done
three_lines() { [ "$(grep -c 'connection closed$' "$tmp/dash.err")" -ge 3 ]; }
wait_for 10 "three lines on stderr" three_lines
for text in "not a taskscope live stream (no TSLV frame header)" \
  "a live protocol version this taskscope does not speak" "a frame larger than 1 MiB"; do
  [ "$(grep -cE "^taskscope dashboard: 127\.0\.0\.1:[0-9]+: ${text//[()]/.}; connection closed$" \
    "$tmp/dash.err")" = 1 ] || fail "no one line for '$text': $(cat "$tmp/dash.err")"
done
[ "$(grep -c 'connection closed$' "$tmp/dash.err")" = 3 ] || fail "stderr: $(cat "$tmp/dash.err")"
gone3() { get "$base/api/processes" | jq -e 'length == 5 and ([.[] | select(.id > 1) | .connected] == [false, false, false, false])' >/dev/null; }
wait_for 10 "the bad ones marked gone" gone3
get "$base/api/processes" | jq -e '.[0] | .id == 1 and .connected == true' >/dev/null \
  || fail "the first process after the bad ones: $(get "$base/api/processes")"
kill -0 "$p1" || fail "the first process died"
[ "$(status POST "$base/api/control" -d "$(jq -c '.value = 2' <<<"$(with_token "$token")")")" = 200 ] \
  || fail "control after the bad frames: $(cat "$tmp/body")"
wait_for 10 "a third command" commands 3
sed -n 's/^command: //p' "$tmp/p1.out" | sed -n 3p | jq -e '.value == 2' >/dev/null \
  || fail "the third command: $(cat "$tmp/p1.out")"

echo "-- a snapshot that is not JSON is left out, said once"
"$fake" "$live" 3 5 --bad json >/dev/null 2>"$tmp/p6.err" || fail "fakeproc --bad json: $?"
ended6() { get "$base/api/processes" | jq -e '.[] | select(.id == 6) | .connected == false and .snapshots == 3' >/dev/null; }
wait_for 10 "process 6 ended" ended6
get "$base/api/history?id=6" | jq -e '[.[].seq] == [0, 1, 2]' >/dev/null \
  || fail "history 6: $(get "$base/api/history?id=6")"
[ "$(grep -cE '^taskscope dashboard: 127\.0\.0\.1:[0-9]+: a snapshot that is not a JSON object; ignored$' "$tmp/dash.err")" = 1 ] \
  || fail "the line for a snapshot that is not JSON: $(cat "$tmp/dash.err")"

echo "-- the history is bounded (--history 30); a process that ends is kept"
"$fake" "$live" 40 5 --rank 5 >"$tmp/p7.out" 2>"$tmp/p7.err" || fail "fakeproc p7: $?"
ended() { get "$base/api/processes" | jq -e '.[] | select(.id == 7) | .connected == false and .snapshots == 40' >/dev/null; }
wait_for 10 "process 7 ended" ended
get "$base/api/history?id=7" | jq -e '[.[].seq] == [range(10;40)]' >/dev/null \
  || fail "history 7: $(get "$base/api/history?id=7" | jq -c '[.[].seq]')"
kill "$p1"
wait "$p1" 2>/dev/null || true
p1_gone() { get "$base/api/processes" | jq -e '.[0] | .id == 1 and .connected == false' >/dev/null; }
wait_for 10 "process 1 marked gone" p1_gone
[ "$(get "$base/api/history?id=1" | jq length)" = 20 ] || fail "history 1 after it ended"
v=$(get "$base/metrics" | K="taskscope_process_connected{process=\"1\"," awk 'index($0, ENVIRON["K"]) == 1 { print $NF }')
same "$v" 0 || fail "taskscope_process_connected after the end: '$v'"
[ "$(status POST "$base/api/control" -d "$(with_token "$token")")" = 200 ] && jq -e '.sent == 0' "$tmp/body" >/dev/null \
  || fail "control to a process that ended: $(cat "$tmp/body")"

echo "-- peers that do not prove they know the secret: dropped, one line each, never listed"
for how in "--auth none" "--auth wrong" "--auth replay" "--bad replay"; do
  # shellcheck disable=SC2086
  "$fake" "$live" 1 10 $how --linger 10000 >/dev/null 2>"$tmp/unproven.err" \
    || fail "fakeproc $how: exit $? $(cat "$tmp/unproven.err")"
  grep -q "^fakeproc: closed by the dashboard after $how$" "$tmp/unproven.err" \
    || fail "fakeproc $how: $(cat "$tmp/unproven.err")"
done
rm -f "$tmp/unproven.err"
unproven_lines() { [ "$(grep -c 'did not prove it knows the secret' "$tmp/dash.err")" -ge 3 ]; }
wait_for 10 "three lines for the peers without the secret" unproven_lines
[ "$(grep -c 'did not prove it knows the secret' "$tmp/dash.err")" = 3 ] \
  || fail "not one line per peer without the secret: $(cat "$tmp/dash.err")"
[ "$(grep -cE '^taskscope dashboard: 127\.0\.0\.1:[0-9]+: did not prove it knows the secret \(it began without the challenge.*; connection closed$' "$tmp/dash.err")" = 1 ] \
  || fail "--auth none: $(cat "$tmp/dash.err")"
[ "$(grep -cE '^taskscope dashboard: 127\.0\.0\.1:[0-9]+: did not prove it knows the secret \(a wrong proof.*; connection closed$' "$tmp/dash.err")" = 2 ] \
  || fail "--auth wrong and --auth replay: $(cat "$tmp/dash.err")"
mac_lines() { [ "$(grep -cE '^taskscope dashboard: 127\.0\.0\.1:[0-9]+: a frame whose MAC does not match .*; connection closed$' "$tmp/dash.err")" = "$1" ]; }
wait_for 10 "the line for the replayed HELLO" mac_lines 1
get "$base/api/processes" | jq -e 'length == 7 and ([.[].program] | unique) == ["fakeproc"]' >/dev/null \
  || fail "a peer without the secret is listed: $(get "$base/api/processes")"

echo "-- a frame changed on the way ends its connection"
for how in flip-payload flip-mac; do
  "$fake" "$live" 0 0 --bad $how --linger 10000 2>"$tmp/bad-$how.err" \
    || fail "--bad $how: the dashboard did not close the connection: $(cat "$tmp/bad-$how.err")"
done
wait_for 10 "two more lines for the changed frames" mac_lines 3
flipped_gone() { get "$base/api/processes" | jq -e 'length == 9 and ([.[] | select(.id > 7) | .connected] == [false, false]) and
  all(.[] | select(.id > 7); .snapshots == 0)' >/dev/null; }
wait_for 10 "the processes that sent changed frames marked gone, their frames not kept" flipped_gone

echo "-- the page"
[ "$(status GET "$base/")" = 200 ] && grep -q "taskscope test page" "$tmp/body" || fail "GET /"
get -D "$tmp/headers" -o /dev/null "$base/"
grep -qi '^content-type: text/html' "$tmp/headers" || fail "GET / content type"
get -D "$tmp/headers" -o "$tmp/body" "$base/static/app.js"
grep -q "console.log" "$tmp/body" && grep -qi '^content-type: text/javascript' "$tmp/headers" \
  || fail "GET /static/app.js"
[ "$(get "$base/static/uPlot.iife.min.js")" = "/* uplot js */" ] || fail "uPlot from node_modules"
[ "$(get "$base/static/uPlot.min.css")" = "/* uplot css */" ] || fail "uPlot css from node_modules"
for bad in "static/../secret.txt" "static/%2e%2e/secret.txt" "static//etc/passwd" "static/" \
  "static/nothing.js" "nothing"; do
  [ "$(status GET "$base/$bad" --path-as-is)" = 404 ] || fail "GET /$bad: not 404"
  if grep -q "^secret$" "$tmp/body"; then fail "GET /$bad served a file outside the page's folder"; fi
done
[ "$(status POST "$base/metrics")" = 405 ] || fail "POST /metrics: not 405"
[ "$(status HEAD "$base/api/processes" -I)" = 200 ] || fail "HEAD /api/processes"

echo "-- SIGTERM: a clean stop"
kill -TERM "$dash"
st=0
wait "$dash" || st=$?
[ $st = 0 ] || fail "the dashboard's exit status after SIGTERM: $st"
if grep -qE "Sanitizer|runtime error" "$tmp/dash.err"; then fail "sanitizer report"; fi
wait "$sse1" 2>/dev/null || true

echo "-- kill -9 while a process sends: the process goes on"
start_dashboard dash2
"$fake" "$live" 400 10 >"$tmp/p8.out" 2>"$tmp/p8.err" &
p8=$!
pids+=("$p8")
some() { [ "$(get "$base/api/history?id=1" | jq length 2>/dev/null || echo 0)" -ge 5 ]; }
wait_for 10 "snapshots at the second dashboard" some
kill -9 "$dash_pid"
wait "$dash_pid" 2>/dev/null || true
st=0
wait "$p8" || st=$?
[ $st = 0 ] || fail "the process's exit status after the dashboard was killed: $st"
grep -q "the dashboard closed the connection" "$tmp/p8.err" || fail "p8: $(cat "$tmp/p8.err")"

echo "-- --memory: all histories together (three quarters of it), shared equally"
st=0
"$ts" dashboard --memory 0 2>"$tmp/e" >/dev/null || st=$?
[ $st = 2 ] && grep -q "^taskscope dashboard: --memory 0: expected MiB, 1-" "$tmp/e" \
  || fail "--memory 0: $st $(cat "$tmp/e")"
start_dashboard dash4 --memory 1
# 200 snapshots of ~9 KB: the histories' 768 KiB of --memory 1 keep about 85 of them, the
# latest (the last quarter is for the frames being received)
"$fake" "$live" 200 2 --pad 60 --linger 60000 >"$tmp/p9.out" 2>"$tmp/p9.err" &
pids+=($!)
all200() { get "$base/api/processes" | jq -e '.[0].snapshots == 200' >/dev/null; }
wait_for 20 "200 snapshots at the dashboard with --memory 1" all200
get "$base/api/processes" >"$tmp/procs"
kept=$(jq '.[0].kept' "$tmp/procs") bytes=$(jq '.[0].kept_bytes' "$tmp/procs")
one=$(get "$base/api/history?id=1" | jq -c '.[-1]' | wc -c)
[ "$bytes" -le 786432 ] && [ "$bytes" -gt $((786432 - 2 * one - 1024)) ] \
  || fail "--memory 1: $kept snapshots in $bytes bytes (one: $one bytes)"
get "$base/api/history?id=1" | jq -e --argjson k "$kept" 'length == $k and
  [.[].seq] == [range(200 - $k; 200)]' >/dev/null || fail "--memory 1: the history is not the latest $kept"
echo "one process: the latest $kept snapshots, $bytes bytes"
# a second process: each keeps half
"$fake" "$live" 200 2 --pad 60 --rank 1 --linger 60000 >"$tmp/p10.out" 2>"$tmp/p10.err" &
pids+=($!)
both() { get "$base/api/processes" | jq -e 'length == 2 and .[1].snapshots == 200' >/dev/null; }
wait_for 20 "the second process's 200 snapshots" both
get "$base/api/processes" | jq -e '([.[].kept_bytes] | add) <= 786432 and
  all(.[]; .kept_bytes <= 393216 and .kept_bytes > 393216 - 20000)' >/dev/null \
  || fail "--memory 1 with two processes: $(get "$base/api/processes" | jq -c '[.[] | {kept, kept_bytes}]')"
echo "two processes: $(get "$base/api/processes" | jq -c '[.[] | {kept, kept_bytes}]')"
# /metrics says the same: the sum of kept_bytes, the budget
get "$base/metrics" >"$tmp/metrics4"
awk -f "$tmp/prom.awk" "$tmp/metrics4" || fail "/metrics at --memory 1 does not parse"
[ "$(sed -n 's/^taskscope_dashboard_history_bytes //p' "$tmp/metrics4")" = \
  "$(get "$base/api/processes" | jq '[.[].kept_bytes] | add')" ] &&
  [ "$(sed -n 's/^taskscope_dashboard_history_budget_bytes //p' "$tmp/metrics4")" = 786432 ] ||
  fail "/metrics history bytes: $(grep history "$tmp/metrics4")"
kill -TERM "$dash_pid"
st=0
wait "$dash_pid" || st=$?
[ $st = 0 ] || fail "dash4's exit status: $st"

echo "-- --exit-after, --bind"
st=0
timeout 30 "$ts" dashboard --bind 0.0.0.0 --port 0 --ingest-port 0 --exit-after 0.5 \
  --token my-token_1 --web "$tmp/web" >"$tmp/dash3.out" 2>"$tmp/dash3.err" || st=$?
[ $st = 0 ] || fail "--exit-after: $st"
grep -q "^taskscope dashboard: http://0\.0\.0\.0:[0-9]*/ (token my-token_1)$" "$tmp/dash3.out" \
  || fail "--bind 0.0.0.0 --token: $(cat "$tmp/dash3.out")"
st=0
"$ts" dashboard --token "a b" 2>"$tmp/e" >/dev/null || st=$?
[ $st = 2 ] && grep -q "^taskscope dashboard: --token: expected" "$tmp/e" || fail "--token 'a b': $st"
[ "$(grep -c "not loopback.*controls still need the token" "$tmp/dash3.err")" = 1 ] \
  || fail "--bind 0.0.0.0 does not say what it exposes: $(cat "$tmp/dash3.err")"

echo "-- --secret-file: made once (mode 0600), the same value at every start"
secret_of() { sed -n 's|^taskscope dashboard: processes send to .* (TASKSCOPE_LIVE=127\.0\.0\.1:[0-9]*/\([0-9a-f]*\))$|\1|p' "$1"; }
for round in 1 2; do
  timeout 30 "$ts" dashboard --port 0 --ingest-port 0 --exit-after 0.3 --secret-file "$tmp/live.secret" \
    --web "$tmp/web" >"$tmp/sf$round.out" 2>"$tmp/sf$round.err" || fail "--secret-file, start $round: $(cat "$tmp/sf$round.err")"
done
[ "$(stat -c %a "$tmp/live.secret")" = 600 ] || fail "--secret-file: mode $(stat -c %a "$tmp/live.secret")"
[ "$(secret_of "$tmp/sf1.out")" = "$(cat "$tmp/live.secret")" ] &&
  [ "$(secret_of "$tmp/sf2.out")" = "$(cat "$tmp/live.secret")" ] && [ "$(wc -c <"$tmp/live.secret")" = 65 ] \
  || fail "--secret-file: $(cat "$tmp/live.secret") vs $(cat "$tmp/sf1.out" "$tmp/sf2.out")"
[ "$(secret_of "$tmp/sf1.out")" != "$secret" ] || fail "two dashboards with one secret"
chmod 644 "$tmp/live.secret"
st=0
"$ts" dashboard --port 0 --ingest-port 0 --exit-after 0.3 --secret-file "$tmp/live.secret" >/dev/null 2>"$tmp/e" || st=$?
[ $st = 1 ] && [ "$(cat "$tmp/e")" = "taskscope dashboard: --secret-file $tmp/live.secret: others may read it (chmod 600 it)" ] \
  || fail "--secret-file readable by others: $st $(cat "$tmp/e")"
echo "not hex" >"$tmp/bad.secret"
chmod 600 "$tmp/bad.secret"
st=0
"$ts" dashboard --port 0 --ingest-port 0 --exit-after 0.3 --secret-file "$tmp/bad.secret" >/dev/null 2>"$tmp/e" || st=$?
[ $st = 1 ] && [ "$(cat "$tmp/e")" = "taskscope dashboard: --secret-file $tmp/bad.secret: expected 64 hex digits" ] \
  || fail "--secret-file without a secret: $st $(cat "$tmp/e")"
rm -f "$tmp/e"
# no sanitizer report anywhere (a dashboard killed with -9 or a fake process
# has no exit status above to show one)
if grep -lE "Sanitizer|runtime error" "$tmp"/*.err; then fail "a sanitizer report"; fi
echo "test_dashboard: ok"

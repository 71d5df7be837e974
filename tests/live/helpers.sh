# helpers.sh - what the dashboard's tests (tests/test_dashboard.sh,
# tests/test_live_ompt.sh) share, sourced by them: a scratch folder $tmp
# and the array pids, both cleaned up at exit (kill -9, rm -rf), and the
# functions below.  They expect from the test: fail MESSAGE (ends it) and
# $ts (the taskscope binary).

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds, or fail saying WHAT
wait_for() {
  local end=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    [ $SECONDS -lt $end ] || fail "timed out waiting for $what"
    sleep 0.05
  done
}

# start_dashboard NAME ARGS...: `taskscope dashboard` on free ports (output
# in $tmp/NAME.out and .err), its two start lines checked; sets dash_pid,
# base (http://127.0.0.1:PORT), token, ingest (the ingest port), secret
# and live (TASKSCOPE_LIVE's value: 127.0.0.1:INGEST/SECRET).  A dashboard
# built without libsodium ends the test as skipped (exit 77, the reason).
start_dashboard() {
  local name=$1
  shift
  "$ts" dashboard --port 0 --ingest-port 0 --exit-after 60 "$@" >"$tmp/$name.out" \
    2>"$tmp/$name.err" &
  dash_pid=$!
  pids+=("$dash_pid")
  lines() {
    if grep -qs "built without libsodium-dev" "$tmp/$name.err"; then
      echo "skipped: $(cat "$tmp/$name.err")"
      exit 77
    fi
    [ -f "$tmp/$name.out" ] && [ "$(wc -l <"$tmp/$name.out")" -ge 2 ]
  }
  wait_for 30 "$name's start lines" lines
  local l1 l2
  l1=$(sed -n 1p "$tmp/$name.out")
  l2=$(sed -n 2p "$tmp/$name.out")
  [[ $l1 =~ ^taskscope\ dashboard:\ http://127\.0\.0\.1:([0-9]+)/\ \(token\ ([0-9a-f]{16})\)$ ]] \
    || fail "$name: first line: $l1"
  base=http://127.0.0.1:${BASH_REMATCH[1]}
  token=${BASH_REMATCH[2]}
  [[ $l2 =~ ^taskscope\ dashboard:\ processes\ send\ to\ 127\.0\.0\.1:([0-9]+)\ \(TASKSCOPE_LIVE=127\.0\.0\.1:([0-9]+)/([0-9a-f]{64})\)$ ]] \
    || fail "$name: second line: $l2"
  ingest=${BASH_REMATCH[1]}
  secret=${BASH_REMATCH[3]}
  live=127.0.0.1:$ingest/$secret
  [ "${BASH_REMATCH[2]}" = "$ingest" ] || fail "$name: two ingest ports: $l2"
}

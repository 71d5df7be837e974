#!/usr/bin/env bash
# test_cli.sh - the taskscope tool end to end: run the bundled example,
# re-render its profile, golden report output, and clear one-line errors for
# bad input, signals passed on to the program.
# usage: test_cli.sh TASKSCOPE TASKTREE SOURCE_DIR FORGETFUL ENDINGS HAVE_JANSSON
# HAVE_JANSSON: 1 if the build found libjansson (tests/CMakeLists.txt passes
# JANSSON_FOUND), 0 if not.  It decides which checks of JSON reading run: how
# the build was configured, never what the commands under test answer, so a
# `taskscope report` that fails in a build with libjansson fails the test.
set -euo pipefail
ts=$1 example=$2 src=$3 forgetful=$4 endings=$5 has_jansson=${6:-}
tmp=$(mktemp -d)
# on any exit, a failed check's too: the launchers still in the background
# and their programs (endings flood_h waits for a signal forever) go as well
stop_jobs() {
  local j
  for j in $(jobs -p); do
    pkill -KILL -P "$j" 2>/dev/null || true
    kill -KILL "$j" 2>/dev/null || true
  done
}
trap 'stop_jobs; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
case $has_jansson in
  0 | 1) ;;
  *) fail "HAVE_JANSSON (argument 6) is '$has_jansson', expected 0 or 1" ;;
esac
no_jansson_reason="taskscope was built without libjansson-dev (./scripts/setup installs it)"

echo "-- help"
"$ts" --help | grep -q "run \[options\] -- PROGRAM" || fail "taskscope --help"
"$ts" run --help | grep -q -- "--output DIR" || fail "run --help"
"$ts" report --help | grep -q -- "--sort KEY" || fail "report --help"
"$ts" report --help | grep -q -- "--deps  *print the critical path" || fail "report --help: --deps"
"$ts" bogus 2>/dev/null && fail "unknown command accepted"
"$ts" diff --help | grep -q -- "--sort KEY" || fail "diff --help"
"$ts" --help | grep -q "diff \[options\] A B" || fail "taskscope --help lists diff"

echo "-- shared options: one check, one message, status 2, for run, report and diff"
for cmd in run report diff; do
  status=0
  "$ts" $cmd --rows -3 x y 2>"$tmp/e" >/dev/null || status=$?
  [ "$status" = 2 ] && [ "$(cat "$tmp/e")" = "taskscope $cmd: --rows -3: expected a number >= 0" ] \
    || fail "$cmd --rows -3: $status $(cat "$tmp/e")"
done
for cmd in run report; do
  status=0
  "$ts" $cmd --sort size x 2>"$tmp/e" >/dev/null || status=$?
  [ "$status" = 2 ] && [ "$(cat "$tmp/e")" = "taskscope $cmd: --sort size: expected self, running, elapsed, calls, mean or name" ] \
    || fail "$cmd --sort size: $status $(cat "$tmp/e")"
done
# --policy is the adaptation policy, --full-policy what a full ring does: each reaches the program
"$ts" run --policy throttle --full-policy drop --no-preload -o "$tmp/envt" -- env >"$tmp/env" 2>/dev/null
grep -qx "TASKSCOPE_POLICY=throttle" "$tmp/env" && grep -qx "TASKSCOPE_FULL_POLICY=drop" "$tmp/env" \
  || fail "run --policy/--full-policy: $(grep TASKSCOPE_ "$tmp/env")"
status=0
"$ts" run --policy drop -- true 2>"$tmp/e" || status=$?
[ "$status" = 2 ] && grep -q "^taskscope run: --policy drop: expected none, throttle, optimize or powercap$" "$tmp/e" \
  || fail "run --policy drop: $status $(cat "$tmp/e")"
# every option that sets a variable takes what the variable takes, and says the same
for bad in "--sample-ms abc:expected 0 (off) or 5 to 3600000" "--mode fast:expected profile or naive" \
  "--full-policy block:expected wait or drop"; do
  opt=${bad%%:*} want=${bad#*:} status=0
  # shellcheck disable=SC2086 # the option and its value, two words
  "$ts" run $opt -- true 2>"$tmp/e" || status=$?
  [ "$status" = 2 ] && grep -qx "taskscope run: $opt: $want" "$tmp/e" \
    || fail "run $opt: status $status: $(cat "$tmp/e")"
done

echo "-- run the example"
"$ts" run -o "$tmp/out" -- "$example" 200000 2 >"$tmp/stdout" 2>"$tmp/stderr" || fail "run exit $?"
grep -q "sorted 200000 integers with 2 threads: ok" "$tmp/stdout" || fail "example output"
grep -q "^leaf_sort " "$tmp/stderr" || fail "summary printed: $(cat "$tmp/stderr")"
# what the machine lacks: said on the first run on a machine (a marker in
# XDG_CACHE_HOME/taskscope), not on the next, on every run with TASKSCOPE_VERBOSE=1;
# profile.json's "notes" keep them every time
mkdir "$tmp/cache"
for r in 1 2 3; do
  v=0
  [ $r = 3 ] && v=1
  XDG_CACHE_HOME="$tmp/cache" TASKSCOPE_VERBOSE=$v "$ts" run --no-summary -o "$tmp/notes$r" \
    -- "$example" 1000 1 >/dev/null 2>"$tmp/notes$r.err" || fail "notes run $r"
done
n1=$(grep -c "^taskscope: sampler: no " "$tmp/notes1.err" || true)
if [ "$n1" = 0 ]; then
  echo "SKIPPED part: notes once per machine: this machine lacks nothing the sampler notes"
else
  grep -q " (said once per machine; TASKSCOPE_VERBOSE=1: every run)$" "$tmp/notes1.err" \
    || fail "notes: first run: $(cat "$tmp/notes1.err")"
  ! grep -q "^taskscope: sampler: no " "$tmp/notes2.err" || fail "notes said twice: $(cat "$tmp/notes2.err")"
  [ "$(grep -c "^taskscope: sampler: no " "$tmp/notes3.err")" = "$n1" ] \
    || fail "notes under TASKSCOPE_VERBOSE: $(cat "$tmp/notes3.err")"
  for r in 1 2 3; do
    [ "$(jq '.notes | length' "$tmp/notes$r/profile.json")" = "$n1" ] \
      || fail "notes in profile.json of run $r: $(jq -c .notes "$tmp/notes$r/profile.json")"
  done
fi
# the program's two threads; taskscope's sampler thread is listed apart, not counted
grep -q "^taskscope profile of 'tasktree' (rank 0 of 1): 2 threads, " "$tmp/stderr" \
  || fail "summary: threads: $(head -3 "$tmp/stderr")"
[ "$(jq -c '[.totals.threads, [.threads[] | select(.taskscope) | .name]]' "$tmp/out/profile.json")" \
  = '[2,["taskscope-sampler"]]' ] || fail "profile.json: threads: $(jq -c .threads "$tmp/out/profile.json")"
grep -q "taskscope: outputs of .* in $tmp/out/" "$tmp/stderr" || fail "outputs location"
# the pictures come from the events: a run shorter than the 1 s sampling
# period has them too
for f in concurrency.csv threads.csv durations.csv; do
  [ "$(wc -l <"$tmp/out/$f")" -ge 3 ] || fail "$f: $(cat "$tmp/out/$f")"
done
head -1 "$tmp/out/concurrency.csv" | grep -q "^time_s,bin_s,.*leaf_sort.*,threads_busy$" \
  || fail "concurrency.csv header"
if command -v gnuplot >/dev/null; then
  for pic in concurrency heatmap scatter; do # SVG by default, whole
    [ "$(tail -c 8 "$tmp/out/$pic.svg")" = "</svg>" ] || fail "$pic.svg not rendered whole: $(cat "$tmp/stderr")"
  done
  # TASKSCOPE_PICTURES=png: PNGs from the same scripts' pngcairo terminal
  TASKSCOPE_PICTURES=png "$ts" run -q -o "$tmp/pngs" --no-summary -- "$example" 1000 1 >/dev/null 2>"$tmp/pngs.err" \
    || fail "run with png pictures: $(cat "$tmp/pngs.err")"
  for pic in concurrency heatmap scatter; do
    [ "$(tail -c 8 "$tmp/pngs/$pic.png" | od -An -tx1 | tr -d ' \n')" = "49454e44ae426082" ] \
      || fail "png: $pic.png not whole: $(cat "$tmp/pngs.err")"
    grep -q "^set terminal pngcairo size" "$tmp/pngs/$pic.gp" || fail "png: $pic.gp's terminal"
    [ ! -e "$tmp/pngs/$pic.svg" ] || fail "png: $pic.svg drawn too"
  done
  TASKSCOPE_PICTURES=gif "$ts" run -o "$tmp/gif" --no-summary -- "$example" 1000 1 >/dev/null 2>"$tmp/gif.err"
  grep -q "TASKSCOPE_PICTURES.*gif.*svg, png" "$tmp/gif.err" || fail "bad TASKSCOPE_PICTURES: $(cat "$tmp/gif.err")"
fi
for f in profile.json types.csv counters.csv taskgraph.dot tasktree.txt; do
  [ -s "$tmp/out/$f" ] || fail "missing $f"
done
# a run whose duration sample is empty: every picture is still drawn (an
# empty sample once made gnuplot refuse the scatter plot)
TASKSCOPE_DURATION_SAMPLE=0 "$ts" run -o "$tmp/notask" --no-summary -- "$example" 1000 1 \
  >/dev/null 2>"$tmp/notask.err" || fail "run with an empty duration sample: $?"
[ "$(wc -l <"$tmp/notask/durations.csv")" = 2 ] || fail "durations.csv not empty: $(cat "$tmp/notask/durations.csv")"
if command -v gnuplot >/dev/null; then
  for pic in concurrency heatmap scatter; do
    [ -s "$tmp/notask/$pic.svg" ] || fail "no task: $pic.svg not rendered: $(cat "$tmp/notask.err")"
  done
  grep -q "gnuplot failed" "$tmp/notask.err" && fail "no task: $(cat "$tmp/notask.err")"
fi
# 200000 elements, leaves of <= 4096: 64 leaves, 63 merges, 127 sorts
grep -q '^3,leaf_sort,64,64,' <(sed 's/^[0-9]*,/3,/' "$tmp/out/types.csv" | grep leaf_sort) \
  || fail "leaf_sort counts: $(cat "$tmp/out/types.csv")"
awk -F, '$2=="sort" && $4!=127 {exit 1} $2=="merge" && $4!=63 {exit 1}' "$tmp/out/types.csv" \
  || fail "sort/merge counts"
if command -v dot >/dev/null; then dot -Tsvg "$tmp/out/taskgraph.dot" -o /dev/null || fail "dot"; fi
# a run shorter than a few sampling periods: its sampled counters (one or
# two readings) are left out of the summary, said in one line, kept in the files
few=$(jq '[.counters[] | select(.sampled and .count > 0 and .count < 5)] | length' "$tmp/out/profile.json")
[ "$few" -gt 0 ] || fail "no sampled counter with few samples: $(jq -c .counters "$tmp/out/profile.json")"
grep -q "^$few sampled counters\? left out: fewer than 5 samples in this [0-9.]* s run" "$tmp/stderr" \
  || fail "summary: sampled counters' line ($few): $(cat "$tmp/stderr")"
for c in $(jq -r '.counters[] | select(.sampled and .count > 0 and .count < 5) | .name' "$tmp/out/profile.json"); do
  ! grep -q "^$c " "$tmp/stderr" || fail "summary shows $c with fewer than 5 samples"
  grep -q "^[0-9]*,$c," "$tmp/out/counters.csv" || fail "counters.csv lacks $c"
done

echo "-- sampling: samples.csv, the concurrency view and its rendering"
TASKSCOPE_SAMPLE_MS=10 "$ts" run -o "$tmp/sampled" -- "$example" 2000000 2 >/dev/null 2>"$tmp/se" \
  || fail "sampled run: $(cat "$tmp/se")"
# enough samples: the sampled counters are in the summary
n=$(jq -r '.counters[] | select(.name == "proc.rss_bytes") | .count' "$tmp/sampled/profile.json")
if [ "$n" -ge 5 ]; then
  grep -q "^proc.rss_bytes *$n " "$tmp/se" || fail "summary: proc.rss_bytes ($n samples): $(cat "$tmp/se")"
fi
head -1 "$tmp/sampled/samples.csv" | grep -q ",concurrency.threads_busy" || fail "samples.csv header"
[ "$(wc -l <"$tmp/sampled/samples.csv")" -ge 5 ] || fail "samples.csv rows"
grep -q "with boxes" "$tmp/sampled/concurrency.gp" || fail "concurrency.gp"
# the thread cap in threads (the left axis), the power on the right one, with room above it
grep -q "'samples.csv' using 1:[0-9]* with steps lw 2 lc rgb 'black' title 'thread cap'" \
  "$tmp/sampled/concurrency.gp" || fail "concurrency.gp: thread cap"
grep -q "set y2range \[0:(STATS_max > 0 ? STATS_max \* 1.15 : 1)\]" "$tmp/sampled/concurrency.gp" \
  || fail "concurrency.gp: power axis"
if command -v gnuplot >/dev/null; then
  [ -s "$tmp/sampled/concurrency.svg" ] || fail "concurrency.svg not rendered: $(cat "$tmp/se")"
  [ -s "$tmp/sampled/heatmap.svg" ] || fail "heatmap.svg not rendered: $(cat "$tmp/se")"
  if [ "$has_jansson" = 1 ]; then # "re-render with: taskscope report DIR" does render
    for pic in concurrency heatmap scatter; do mv "$tmp/sampled/$pic.svg" "$tmp/$pic.first.svg"; done
    "$ts" report "$tmp/sampled" >/dev/null 2>"$tmp/re" || fail "report of the sampled run: $(cat "$tmp/re")"
    for pic in concurrency heatmap scatter; do
      cmp -s "$tmp/$pic.first.svg" "$tmp/sampled/$pic.svg" || fail "report did not render $pic.svg again"
    done
  fi
else
  echo "note: gnuplot not installed: the PNG is not checked (scripts/deps installs gnuplot-nox)"
  grep -q "gnuplot is not installed" "$tmp/se" || fail "no note about gnuplot"
fi

echo "-- run -q: outputs written, nothing said but the program's own output"
"$ts" run -q --sample-ms 5 -o "$tmp/quiet" -- "$example" 200000 2 >"$tmp/q.out" 2>"$tmp/q.err" || fail "run -q"
[ ! -s "$tmp/q.err" ] || fail "run -q said: $(cat "$tmp/q.err")"
grep -q "sorted 200000 integers with 2 threads: ok" "$tmp/q.out" || fail "run -q: program output"
[ -s "$tmp/quiet/profile.json" ] && [ -s "$tmp/quiet/samples.csv" ] || fail "run -q: outputs: $(ls "$tmp/quiet")"

echo "-- an existing folder is never reused"
"$ts" run --no-summary -o "$tmp/out" -- "$example" 5000 1 >/dev/null 2>"$tmp/stderr2"
grep -q "$tmp/out already exists; writing to $tmp/out.1" "$tmp/stderr2" || fail "suffix note"
[ -s "$tmp/out.1/profile.json" ] || fail "out.1 written"
grep -q "^leaf_sort " "$tmp/stderr2" && fail "--no-summary ignored"

echo "-- bad environment value: one warning, program runs"
TASKSCOPE_MODE=fast "$ts" run --no-summary -o "$tmp/bad" -- "$example" 5000 1 >/dev/null 2>"$tmp/stderr3" \
  || fail "bad env stopped the program"
[ "$(grep -c 'TASKSCOPE_MODE="fast" is invalid (accepted: profile, naive); using the default "profile"' "$tmp/stderr3")" = 1 ] \
  || fail "warning line: $(cat "$tmp/stderr3")"
[ -s "$tmp/bad/profile.json" ] || fail "outputs after bad env"

echo "-- an empty TASKSCOPE_OUTPUTS: one warning and the default outputs; none: said truthfully"
for empty in "" ",,,"; do
  rm -rf "$tmp/emptyout"
  TASKSCOPE_OUTPUTS=$empty "$ts" run --no-summary -o "$tmp/emptyout" -- "$example" 5000 1 >/dev/null \
    2>"$tmp/stderr3" || fail "TASKSCOPE_OUTPUTS='$empty' stopped the program"
  [ "$(grep -c "TASKSCOPE_OUTPUTS=\"$empty\" is invalid (accepted: .*); using the default \"all\"" "$tmp/stderr3")" = 1 ] \
    || fail "TASKSCOPE_OUTPUTS='$empty': $(cat "$tmp/stderr3")"
  [ -s "$tmp/emptyout/profile.json" ] && ! grep -q "never started measuring" "$tmp/stderr3" \
    || fail "TASKSCOPE_OUTPUTS='$empty': no default outputs: $(cat "$tmp/stderr3")"
done
TASKSCOPE_OUTPUTS=",," TASKSCOPE_OUTPUT_DIR="$tmp/libout" "$example" 5000 1 >/dev/null 2>"$tmp/stderr3" \
  || fail "library: TASKSCOPE_OUTPUTS=,,"
grep -q 'TASKSCOPE_OUTPUTS=",," is invalid' "$tmp/stderr3" && [ -s "$tmp/libout/profile.json" ] \
  || fail "library: TASKSCOPE_OUTPUTS=,,: $(cat "$tmp/stderr3")"
TASKSCOPE_OUTPUTS=NONE "$ts" run --no-summary -o "$tmp/noneout" -- "$example" 5000 1 >/dev/null 2>"$tmp/stderr3" \
  || fail "TASKSCOPE_OUTPUTS=NONE failed"
grep -qx "taskscope: no outputs written (TASKSCOPE_OUTPUTS=none)" "$tmp/stderr3" && [ ! -e "$tmp/noneout" ] \
  && ! grep -q "never started" "$tmp/stderr3" \
  || fail "TASKSCOPE_OUTPUTS=NONE: $(cat "$tmp/stderr3")"
status=0
"$ts" run --outputs ",," -- true 2>"$tmp/e" || status=$?
[ "$status" = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q "^taskscope run: --outputs ',,': expected " "$tmp/e" \
  || fail "run --outputs ,,: $status $(cat "$tmp/e")"

echo "-- a 5,000-byte TASKSCOPE_OUTPUT_DIR: run warns once and uses the default, as the library does"
long=$(head -c 5000 /dev/zero | tr '\0' d)
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && TASKSCOPE_OUTPUT_DIR=$long "$ts" run --no-summary -- "$example" 5000 1 >"$tmp/stdout" 2>"$tmp/stderr3") \
  || fail "a long TASKSCOPE_OUTPUT_DIR stopped the program: $(cat "$tmp/stderr3")"
grep -q "sorted 5000 integers with 1 threads: ok" "$tmp/stdout" || fail "long dir: the program did not run"
[ "$(grep -c "is invalid" "$tmp/stderr3")" = 1 ] \
  && grep -q '^taskscope: warning: TASKSCOPE_OUTPUT_DIR="d*\.\.\.d*" (5000 bytes) is invalid (accepted: a folder path of 1 to 1023 bytes); using the default "taskscope-out"$' "$tmp/stderr3" \
  || fail "long dir warning: $(cat "$tmp/stderr3")"
[ -s "$tmp/cwd/taskscope-out/profile.json" ] || fail "long dir: no outputs in taskscope-out"
status=0
"$ts" run -o "$long" -- true 2>"$tmp/e" || status=$?
[ "$status" = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q "^taskscope run: --output \"d*\.\.\.d*\" (5000 bytes): expected a folder path of 1 to 1023 bytes$" "$tmp/e" \
  || fail "run -o LONG: $status $(cat "$tmp/e")"

echo "-- a program without the library"
"$ts" run --no-preload -o "$tmp/none" -- true 2>"$tmp/stderr4" || fail "true failed"
grep -q "true wrote no outputs: it never started measuring" "$tmp/stderr4" \
  || fail "no-output note: $(cat "$tmp/stderr4")"
[ ! -e "$tmp/none" ] || fail "empty folder left behind"

ulimit -c 0 # the crashes below would leave core files
echo "-- _exit() after measuring: the outputs are written first, the status passes"
status=0
"$ts" run -o "$tmp/exit3" -- "$endings" exit3 2>"$tmp/stderr7" || status=$?
[ "$status" = 3 ] || fail "_exit(3): status $status"
grep -q '"ended_by":"_exit"' "$tmp/exit3/profile.json" || fail "_exit: ended_by missing"
grep -q '"name":"tick","created":5,"calls":5' "$tmp/exit3/profile.json" || fail "_exit: 5 tasks"
grep -q "^ended by _exit at [0-9.]* s; 0 tasks were running" "$tmp/stderr7" \
  || fail "_exit: summary line: $(cat "$tmp/stderr7")"

for crash in segv:11:SEGV abort:6:ABRT; do
  mode=${crash%%:*} sig=$(echo "$crash" | cut -d: -f2) name=${crash##*:}
  echo "-- $mode: what was measured is written, the running task unfinished, 128+$sig"
  status=0
  # a sanitizer build: ASan or TSan would take SIGSEGV for its own report
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" \
    TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS }handle_segv=0" \
    "$ts" run -o "$tmp/$mode" -- "$endings" "$mode" 2>"$tmp/$mode.err" || status=$?
  [ "$status" = $((128 + sig)) ] || fail "$mode: status $status"
  grep -q "\"ended_by\":\"SIG$name\"" "$tmp/$mode/profile.json" || fail "$mode: ended_by"
  grep -q '"name":"tick","created":6,"calls":5,"yields":0,"cancelled":0,"unfinished":1' \
    "$tmp/$mode/profile.json" || fail "$mode: 5 tasks done and 1 unfinished"
  grep -q "^ended by SIG$name at [0-9.]* s; 1 task was running" "$tmp/$mode.err" \
    || fail "$mode: summary line: $(cat "$tmp/$mode.err")"
  grep -q "endings was killed by signal $sig" "$tmp/$mode.err" || fail "$mode: launcher line"
  if [ "$has_jansson" = 1 ]; then
    "$ts" report "$tmp/$mode" 2>&1 | grep -q "^ended by SIG$name at " || fail "$mode: report line"
  else
    echo "SKIPPED $mode: report's 'ended by' line: $no_jansson_reason"
  fi
done

echo "-- a file size limit: no partial file, the failure named once, the other outputs whole"
status=0
(
  trap '' XFSZ
  ulimit -f 2 # 2 KiB: profile.json and the pictures do not fit, most CSV files do
  "$ts" run --no-summary --sample-ms 5 -o "$tmp/fsize" -- "$example" 400000 2 >/dev/null \
    2>"$tmp/fsize.err"
) || status=$?
[ "$status" = 0 ] || fail "fsize: status $status"
[ "$(grep -c "writing $tmp/fsize/profile.json failed: File too large" "$tmp/fsize.err")" = 1 ] \
  || fail "fsize: message: $(cat "$tmp/fsize.err")"
[ ! -e "$tmp/fsize/profile.json" ] || fail "fsize: partial profile.json left"
# the crash journal's mapping (its 4 KB header) does not fit either: said
# once, measuring goes on
[ "$(grep -c "warning: cannot start the crash journal ($tmp/fsize/.taskscope-[0-9]*.map: File too large); measuring goes on" "$tmp/fsize.err")" = 1 ] \
  || fail "fsize: journal message: $(cat "$tmp/fsize.err")"
ls "$tmp/fsize" | grep -q 'tmp$' && fail "fsize: temporary file left"
grep -q "^[0-9]*,leaf_sort,[0-9]*,[0-9]*," "$tmp/fsize/types.csv" || fail "fsize: types.csv incomplete"
grep -q "taskscope: outputs of .* in $tmp/fsize/:.* types.csv" "$tmp/fsize.err" \
  || fail "fsize: outputs line: $(cat "$tmp/fsize.err")"
grep -q "outputs of .* in $tmp/fsize/:.* profile.json" "$tmp/fsize.err" && fail "fsize: profile.json listed"
[ "$(grep -c "outputs" "$tmp/fsize.err")" = 1 ] || fail "fsize: outputs announced more than once"
# every file said to have failed is absent (samples.csv too, in a slower build)
for f in $(sed -n "s|.*writing $tmp/fsize/\([^ ]*\) failed.*|\1|p" "$tmp/fsize.err"); do
  [ ! -e "$tmp/fsize/$f" ] || fail "fsize: failed $f left behind"
done
# a picture is whole or absent, and one that could not be made is said
for pic in "$tmp"/fsize/*.svg; do
  [ -e "$pic" ] || continue
  [ "$(tail -c 8 "$pic")" = "</svg>" ] || fail "fsize: cut $pic"
done
# (or, when its data did not fit either, not even its script is written)
if grep -q "writing $tmp/fsize/concurrency.csv failed" "$tmp/fsize.err"; then
  [ ! -e "$tmp/fsize/concurrency.gp" ] || fail "fsize: concurrency.gp without its data"
elif command -v gnuplot >/dev/null; then
  [ ! -e "$tmp/fsize/concurrency.svg" ] || fail "fsize: concurrency.svg did fit?"
  grep -q "gnuplot failed on $tmp/fsize/concurrency.gp" \
    "$tmp/fsize.err" || fail "fsize: picture message: $(cat "$tmp/fsize.err")"
fi

# Starts `taskscope run -- endings MODE ARG...` in the background, its outputs in
# $tmp/DIR (stdout and stderr in $tmp/DIR.out and .err, a slash in DIR as a dash),
# and waits until the program printed "ready"; sets tspid and prog (the program).
start_endings() { # mode, dir, arg...
  local mode=$1 dir=$2 log="$tmp/${2//\//-}"
  shift 2
  # background commands of a script start with SIGINT and SIGQUIT ignored:
  # back to the default, as for a command started from a terminal
  env --default-signal=INT,QUIT "$ts" run --no-summary -o "$tmp/$dir" -- "$endings" "$mode" "$@" \
    >"$log.out" 2>"$log.err" &
  tspid=$!
  for _ in $(seq 400); do
    grep -q ready "$log.out" 2>/dev/null && break
    sleep 0.05
  done
  grep -q ready "$log.out" || fail "endings $mode never got ready: $(cat "$log.err")"
  prog=$(pgrep -P "$tspid" endings || true)
  [ -n "$prog" ] || fail "$dir: program pid not found: $(cat "$log.err")"
}

# Waits (at most 20 s) for the background taskscope run; sets status.
wait_ts() {
  for _ in $(seq 400); do
    kill -0 "$tspid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$tspid" 2>/dev/null; then
    pkill -KILL -P "$tspid" || true
    kill -KILL "$tspid" || true
    fail "taskscope run did not end after the signal"
  fi
  status=0
  wait "$tspid" || status=$?
}

echo "-- SIGTERM to taskscope run reaches the program, which handles it and finishes"
start_endings term term
sleep 0.2
kill -TERM "$tspid"
wait_ts
[ "$status" = 0 ] || fail "term: status $status: $(cat "$tmp/term.err")"
n=$(sed -n 's/^stopped after \([0-9]*\) tasks$/\1/p' "$tmp/term.out")
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "term: the program did not see SIGTERM: $(cat "$tmp/term.out")"
grep -q "\"name\":\"tick\",\"created\":$n,\"calls\":$n" "$tmp/term/profile.json" \
  || fail "term: profile lacks the $n tasks"

echo "-- SIGTERM to taskscope run ends a program without a handler: 128+15, no orphan, outputs"
start_endings hang hang
kill -TERM "$tspid"
wait_ts
[ "$status" = 143 ] || fail "hang: status $status"
kill -0 "$prog" 2>/dev/null && fail "hang: program $prog still running"
grep -q "endings was killed by signal 15 (Terminated)$" "$tmp/hang.err" \
  || fail "hang: message: $(cat "$tmp/hang.err")"
grep -q '"name":"tick","created":3,"calls":3' "$tmp/hang/profile.json" \
  || fail "hang: the 3 tasks before SIGTERM are not in the profile"

echo "-- SIGINT to the program itself (as Ctrl-C sends it): 128+2, outputs"
start_endings hang int
kill -INT "$prog"
wait_ts
[ "$status" = 130 ] || fail "int: status $status: $(cat "$tmp/int.err")"
grep -q '"name":"tick","created":3,"calls":3' "$tmp/int/profile.json" \
  || fail "int: the 3 tasks before SIGINT are not in the profile"

echo "-- SIGKILL with the profiler off: nothing can be written; the launcher says so"
TASKSCOPE_PROFILER=0 start_endings hang kill9
kill -KILL "$prog"
wait_ts
[ "$status" = 137 ] || fail "kill9: status $status"
grep -q "endings was killed by signal 9 (Killed); what it measured is lost" "$tmp/kill9.err" \
  || fail "kill9: message: $(cat "$tmp/kill9.err")"
[ ! -e "$tmp/kill9" ] || fail "kill9: folder left behind: $(ls -A "$tmp/kill9")"

echo "-- SIGKILL with the profiler off, tracing: the trace stays and converts; said so"
TASKSCOPE_PROFILER=0 TASKSCOPE_TRACE=chrome start_endings hang kill9p
kill -KILL "$prog"
wait_ts
[ "$status" = 137 ] || fail "kill9p: status $status"
grep -q "no crash journal in $tmp/kill9p: the program measured with TASKSCOPE_PROFILER=0, which keeps none" \
  "$tmp/kill9p.err" || fail "kill9p: why no journal: $(cat "$tmp/kill9p.err")"
grep -q "endings was killed by signal 9 (Killed); what it measured is lost but for the outputs listed below" \
  "$tmp/kill9p.err" || fail "kill9p: end: $(cat "$tmp/kill9p.err")"
jq -e '.otherData.trace_status == "not closed: the program was killed before finalizing"' \
  "$tmp/kill9p/trace.json" >/dev/null || fail "kill9p: trace.json: $(head -c 300 "$tmp/kill9p/trace.json")"
! grep -q "re-render with" "$tmp/kill9p.err" || fail "kill9p: a re-render hint without a profile"

# SIGKILL mid-run: the crash journal, the mapping alone (the threads'
# shards, no files beside it), gives every recorded event back.
kill9_check() { # name, N: N tasks per type, one more begun on the main thread
  [ "$status" = 137 ] || fail "$1: status $status: $(cat "$tmp/$1.err")"
  grep -q "endings was killed by signal 9 (Killed) at [0-9.]* s; its outputs were rebuilt from the crash journal, with every event it recorded" \
    "$tmp/$1.err" || fail "$1: message: $(cat "$tmp/$1.err")"
  grep -q "^1,tick,$(($2 + 1)),$2,0,0,1,1," "$tmp/$1/types.csv" || fail "$1: tick: $(cat "$tmp/$1/types.csv")"
  grep -q "^2,work,$2,$2,0,0,0,1," "$tmp/$1/types.csv" || fail "$1: work: $(cat "$tmp/$1/types.csv")"
  grep -q '"ended_by":"SIGKILL"' "$tmp/$1/profile.json" || fail "$1: ended_by"
  grep -q '"events_dropped":0,' "$tmp/$1/profile.json" || fail "$1: events dropped"
  for f in counters.csv taskgraph.dot tasktree.txt; do
    [ -s "$tmp/$1/$f" ] || fail "$1: $f not recovered"
  done
  [ -z "$(ls -A "$tmp/$1" | grep '^\.')" ] || fail "$1: journal files left: $(ls -A "$tmp/$1")"
}
kill9_run() { # name, N, environment...
  local name=$1 n=$2
  shift 2
  [ $# -eq 0 ] || local -x "$@" # the environment of this run only
  start_endings "${FLOOD:-flood}" "$name" "$n"
  # the mapping alone: no other file
  [ "$(cd "$tmp/$name" && ls -A | grep '^\.' | sed 's/^\.taskscope-[0-9]*\.//' | sort | tr '\n' ' ')" = "map running " ] \
    || fail "$name: files beside the mapping: $(ls -A "$tmp/$name")"
  kill -KILL "$prog"
  wait_ts
  kill9_check "$name" "$n"
  [ -z "$(ls /dev/shm/taskscope-"$prog"-* 2>/dev/null)" ] || fail "$name: slots left in /dev/shm"
}
echo "-- SIGKILL mid-run: every task recovered from the mapping alone"
kill9_run kill9j 200000
echo "-- SIGKILL mid-run, the consumer never woke up: every task recovered all the same"
kill9_run kill9r 100000 TASKSCOPE_PERIOD_MS=10000 TASKSCOPE_RING_SIZE=1048576
echo "-- SIGKILL with the smallest ring (TASKSCOPE_RING_SIZE=64): every thread's slot in the file"
# 64 records are 2 KiB: every thread's slot is still a block of the mapping
# (it once had to be a whole number of pages, and slot 1 and up were lost)
kill9_run kill9small 20000 TASKSCOPE_RING_SIZE=64
! grep -q "cannot put thread slot" "$tmp/kill9small.err" || fail "kill9small: $(cat "$tmp/kill9small.err")"
echo "-- SIGKILL with --cpu-time (TASKSCOPE_CPU_TIME=1): the tasks' CPU time recovered too"
kill9_run kill9cpu 20000 TASKSCOPE_CPU_TIME=1
jq -e '.cpu_time == true and ([.types[] | select(.name == "work") | .cpu_ns.count] == [20000]) and
  ([.types[] | select(.name == "work") | .cpu_ns.sum > 0] == [true])' "$tmp/kill9cpu/profile.json" >/dev/null ||
  fail "kill9cpu: $(jq -c '[.cpu_time, .types]' "$tmp/kill9cpu/profile.json")"
grep -v '^#' "$tmp/kill9cpu/types.csv" | head -1 | grep -q ',cpu_sum_ns,cpu_min_ns,cpu_max_ns,cpu_mean_ns,cpu_stddev_ns$' ||
  fail "kill9cpu: types.csv: $(head -2 "$tmp/kill9cpu/types.csv")"
echo "-- SIGKILL with the smallest ring, four threads, by id and through handles: every task recovered"
for how in flood flood_h; do
  d=kill9s4${how#flood}
  TASKSCOPE_RING_SIZE=64 start_endings "$how" "$d" 20000 3
  kill -KILL "$prog"
  wait_ts
  [ "$status" = 137 ] || fail "$d: status $status: $(cat "$tmp/$d.err")"
  grep -q "^1,tick,20001,20000,0,0,1,1," "$tmp/$d/types.csv" || fail "$d: tick: $(cat "$tmp/$d/types.csv")"
  grep -q "^2,work,60000,60000,0,0,0,3," "$tmp/$d/types.csv" || fail "$d: work: $(cat "$tmp/$d/types.csv")"
  ! grep -q "warning" "$tmp/$d.err" || fail "$d: $(cat "$tmp/$d.err")"
done

echo "-- SIGKILL, tasks on handles: every task recovered from the mapping's shards"
FLOOD=flood_h kill9_run kill9s 200000
# the instance graph's 100,000 (the cap) came back from the threads' logs,
# each of them longer than the 65,536 records its shard's directory holds
# itself (the rest through the directory's far part): kept and cut off add
# up to every task
jq -e '.totals | .instances == 100000 and .instances + .instances_cut_off == 400001' \
  "$tmp/kill9s/profile.json" >/dev/null || fail "kill9s: instances: $(jq -c .totals "$tmp/kill9s/profile.json")"
for d in kill9s kill9j; do # the timeline's bins came back too (busy: self time + the open task)
  jq -e '([.types[].self_ns.sum] | add) as $self | $self > 0 and (.timeline.busy_ns | add) >= $self * 0.99' \
    "$tmp/$d/profile.json" >/dev/null || fail "$d: timeline: $(jq -c .timeline "$tmp/$d/profile.json")"
done

echo "-- 150 states a SIGKILL could leave, inside a task's create and end too: each rebuilt whole"
# endings snap copies its mapping from a signal handler on the worker, which
# stands still wherever it was (about one copy in eight lands in the middle
# of an end: the type counted it, the tree not yet, its record still live);
# each copy is rebuilt as the folder of a process that died there, and
# every task counts once: created = ended + unfinished + never ran, the
# tree's calls the types', every task kept or cut off from the graph
mkdir "$tmp/snap" "$tmp/snaps"
TASKSCOPE_RING_SIZE=64 TASKSCOPE_INSTANCE_CAP=16 TASKSCOPE_OUTPUT_DIR="$tmp/snap" \
  TASKSCOPE_OUTPUT_DIR_PREPARED="$tmp/snap" TASKSCOPE_SUMMARY=0 TASKSCOPE_SAMPLE_MS=0 \
  TASKSCOPE_OUTPUTS=json "$endings" snap 150 "$tmp/snaps" >"$tmp/snap.out" 2>"$tmp/snap.err" || true
grep -Eq "^snaps (150|151)$" "$tmp/snap.out" || fail "snap: $(cat "$tmp/snap.out" "$tmp/snap.err")"
snap_pid=$(ls -A "$tmp/snap" | sed -n 's/^\.taskscope-\([0-9]*\)\.running$/\1/p')
[ -n "$snap_pid" ] || fail "snap: no marker: $(ls -A "$tmp/snap")"
bad=""
for k in $(seq 0 149); do
  f="$tmp/snapf"
  rm -rf "$f"
  mkdir "$f"
  mv "$tmp/snaps/$k.map" "$f/.taskscope-$snap_pid.map"
  : >"$f/.taskscope-$snap_pid.running"
  "$ts" recover -q "$f" >"$tmp/snapf.log" 2>&1 || fail "snap $k: recover: $(cat "$tmp/snapf.log")"
  jq -e '(.totals | .tasks_created == .tasks_completed + .tasks_cancelled + .tasks_unfinished +
            .tasks_never_ran and .instances + .instances_cut_off == .tasks_created and
            .anomalies == 0) and
         ([.tree[] | select(.type == "work") | .calls] | add) ==
         ([.types[] | select(.name == "work") | .calls] | add)' "$f/profile.json" >/dev/null ||
    bad="$bad $k:$(jq -c .totals "$f/profile.json")"
done
[ -z "$bad" ] || fail "snap: rebuilt with a task counted twice or not at all:$bad"
"$ts" recover -q "$tmp/snap" >/dev/null 2>&1 || true # what the killed process left
rm -rf "$tmp/snaps" "$tmp/snapf" "$tmp/snap"

echo "-- a damaged mapping: the rest is rebuilt, nothing read past it, no count invented"
# the launcher killed first, then the program: its folder keeps the crash journal,
# which `taskscope merge` rebuilds; 64 KB of garbage over the first shard blocks
mkdir "$tmp/dmg"
start_endings flood_h dmg/rank-0 50000
kill -KILL "$tspid"
wait "$tspid" 2>/dev/null || true
kill -KILL "$prog"
for _ in $(seq 100); do kill -0 "$prog" 2>/dev/null || break; sleep 0.05; done
shfile=$(readlink -f "$tmp/dmg/rank-0/.taskscope-$prog.map")
[ -f "$shfile" ] || fail "dmg: no mapping"
dd if=/dev/urandom of="$shfile" bs=4096 seek=1 count=16 conv=notrunc 2>/dev/null
"$ts" merge -q -o "$tmp/dmgm" "$tmp/dmg" 2>"$tmp/dmgm.err" || fail "dmg: merge failed: $(cat "$tmp/dmgm.err")"
jq -e '[.types[] | select(.name == "tick" or .name == "work")] as $t |
       ($t | all(.calls <= .created and .created <= 50001)) and ([$t[].calls] | add) >= 50000' \
  "$tmp/dmg/rank-0/profile.json" >/dev/null \
  || fail "dmg: counts: $(jq -c '[.types[] | {name, created, calls}]' "$tmp/dmg/rank-0/profile.json")"
rm -f "$shfile"

echo "-- taskscope top: a running program's profile, read from outside"
start_endings flood_h top1 5000
# the type's line: self%, self s, calls, tasks/s, running, name
top_line() { # file, type -> "calls running"
  awk -v t="$2" '$NF == t && $1 ~ /%$/ { print $3, $(NF - 1) }' "$1"
}
"$ts" top -n 1 "$prog" >"$tmp/top1.pid" 2>"$tmp/top1.pid.err" || fail "top pid: $(cat "$tmp/top1.pid.err")"
[ "$(top_line "$tmp/top1.pid" tick)" = "5000 1" ] || fail "top pid: tick: $(cat "$tmp/top1.pid")"
[ "$(top_line "$tmp/top1.pid" work)" = "5000 0" ] || fail "top pid: work: $(cat "$tmp/top1.pid")"
grep -q "^taskscope top: endings (pid $prog, rank 0), running [0-9.]* s: 10.0 k tasks" "$tmp/top1.pid" \
  || fail "top pid: head: $(head -2 "$tmp/top1.pid")"
! grep -q "$(printf '\033')" "$tmp/top1.pid" || fail "top pid: escape codes in plain text"
# the launcher's pid finds the program; two looks, the folder's mapping
"$ts" top -n 2 -d 0.1 "$tspid" >"$tmp/top1.run" 2>&1 || fail "top launcher: $(cat "$tmp/top1.run")"
[ "$(grep -c '^taskscope top: endings' "$tmp/top1.run")" = 2 ] || fail "top -n 2: $(cat "$tmp/top1.run")"
"$ts" top -n 1 "$tmp/top1" >"$tmp/top1.dir" 2>&1 || fail "top folder: $(cat "$tmp/top1.dir")"
[ "$(top_line "$tmp/top1.dir" work)" = "5000 0" ] || fail "top folder: work: $(cat "$tmp/top1.dir")"
"$ts" report "$tmp/top1" >/dev/null 2>"$tmp/top1.rep" && fail "report of a running program's folder"
grep -q "has no profile.json yet: its program (pid $prog) still runs; taskscope top $prog shows it" \
  "$tmp/top1.rep" || fail "report while it runs: $(cat "$tmp/top1.rep")"
echo "-- taskscope top: what a task running now ran so far is in its type's and thread's self time"
# (ended tasks alone, the type read 0.003 s while its fourth task had spun for seconds)
flood_tspid=$tspid flood_prog=$prog
start_endings spin topspin 30000 exit
sleep 1
"$ts" top -n 1 "$prog" >"$tmp/topspin.top" 2>&1 || fail "top spin: $(cat "$tmp/topspin.top")"
awk '$NF == "spinning" && $1 ~ /%$/ { ok = $2 >= 0.9 && $3 == 3 } END { exit !ok }' "$tmp/topspin.top" \
  || fail "top: the running task's time: $(cat "$tmp/topspin.top")"
awk '$2 == "main" { ok = $3 >= 0.9 } END { exit !ok }' "$tmp/topspin.top" \
  || fail "top: the thread's self time: $(cat "$tmp/topspin.top")"
kill -KILL "$prog"
wait "$tspid" 2>/dev/null || true
tspid=$flood_tspid prog=$flood_prog
echo "-- the launcher killed, then the program: top reads the dead one, report points to recover, recover rebuilds"
kill -KILL "$tspid"
wait "$tspid" 2>/dev/null || true
kill -KILL "$prog"
for _ in $(seq 100); do kill -0 "$prog" 2>/dev/null || break; sleep 0.05; done
"$ts" top -n 1 "$tmp/top1" >"$tmp/top1.dead" 2>&1 || fail "top dead: $(cat "$tmp/top1.dead")"
grep -q "^taskscope top: endings (pid $prog, rank 0), ended without its outputs: 10.0 k tasks" \
  "$tmp/top1.dead" || fail "top dead: head: $(cat "$tmp/top1.dead")"
[ "$(top_line "$tmp/top1.dead" tick)" = "5000 1" ] || fail "top dead: tick: $(cat "$tmp/top1.dead")"
"$ts" report "$tmp/top1" >/dev/null 2>"$tmp/top1.rep" && fail "report of a dead program's folder"
grep -q "has no profile.json: its program (pid $prog) died without writing it and nobody rebuilt it; taskscope recover $tmp/top1 does" \
  "$tmp/top1.rep" || fail "report after the kill: $(cat "$tmp/top1.rep")"
# (a program of this build: an uninstrumented one would not load a sanitizer
# build's library; the note comes before the program starts, whatever it does)
"$ts" run --no-summary -o "$tmp/stalerun" -- "$endings" exit3 2>"$tmp/stale.err" >/dev/null || true
grep -q "taskscope: note: $tmp/top1 holds what process $prog left when it died with its launcher ([0-9.]* MB in /dev/shm): taskscope recover $tmp/top1" \
  "$tmp/stale.err" || fail "run: stale mapping: $(cat "$tmp/stale.err")"
# writing the recovered outputs fails (a file size limit): everything stays
(ulimit -f 1; trap '' XFSZ; exec "$ts" recover -q "$tmp/top1") >"$tmp/top1.rec" 2>&1 \
  && fail "recover under a file size limit succeeded: $(cat "$tmp/top1.rec")"
grep -q "cannot write the recovered outputs to $tmp/top1; what process $prog left stays in $tmp/top1 (.taskscope-$prog.\*): 'taskscope recover $tmp/top1' tries again" \
  "$tmp/top1.rec" || fail "recover, failing: $(cat "$tmp/top1.rec")"
[ -e "$tmp/top1/.taskscope-$prog.running" ] && [ -n "$(ls /dev/shm/taskscope-"$prog"-* 2>/dev/null)" ] \
  || fail "recover, failing: what was left was removed: $(ls -A "$tmp/top1")"
"$ts" recover -q "$tmp/top1" >"$tmp/top1.rec" 2>&1 || fail "recover: $(cat "$tmp/top1.rec")"
grep -q "^taskscope recover: $tmp/top1: the outputs of process $prog rebuilt" "$tmp/top1.rec" \
  || fail "recover: message: $(cat "$tmp/top1.rec")"
grep -q "^1,tick,5001,5000,0,0,1,1," "$tmp/top1/types.csv" || fail "recover: tick: $(cat "$tmp/top1/types.csv")"
grep -q "^2,work,5000,5000,0,0,0,1," "$tmp/top1/types.csv" || fail "recover: work: $(cat "$tmp/top1/types.csv")"
[ -z "$(ls -A "$tmp/top1" | grep '^\.')" ] || fail "recover: files left: $(ls -A "$tmp/top1")"
[ -z "$(ls /dev/shm/taskscope-"$prog"-* 2>/dev/null)" ] || fail "recover: /dev/shm left"
"$ts" recover "$tmp/top1" >"$tmp/top1.rec" 2>&1 || fail "recover again: $(cat "$tmp/top1.rec")"
grep -q "nothing to recover" "$tmp/top1.rec" || fail "recover again: $(cat "$tmp/top1.rec")"

echo "-- a measured program's measured child: each process its own folder, both listed"
# the parent (300 tasks) forks and executes the child (200): the child's
# outputs in RUN.endings.PID beside the run's, never in the run's folder
# (which would send the parent's to RUN.1), never over each other's
ticks() { jq -r '[.types[] | select(.name == "tick") | .calls] | add' "$1/profile.json" 2>/dev/null; }
no_numbered() { # dir: no DIR.N folder was made
  [ -z "$(ls -d "$1".[0-9]* 2>/dev/null)" ] || fail "$1: a numbered folder: $(ls -d "$1".*)"
}
"$ts" run --no-summary -o "$tmp/fam" -- "$endings" parent 300 200 >"$tmp/fam.out" 2>"$tmp/fam.err" \
  || fail "fam: status $?: $(cat "$tmp/fam.err")"
child=$(sed -n 's/^child //p' "$tmp/fam.out")
[ -n "$child" ] || fail "fam: no child: $(cat "$tmp/fam.out")"
[ "$(ticks "$tmp/fam")" = 300 ] || fail "fam: the parent's profile: $(ticks "$tmp/fam") tasks; $(ls -A "$tmp/fam")"
[ "$(ticks "$tmp/fam.endings.$child")" = 200 ] \
  || fail "fam: the child's profile: $(ticks "$tmp/fam.endings.$child") tasks; $(ls -d "$tmp"/fam*)"
no_numbered "$tmp/fam"
grep -q "^taskscope: outputs of .*endings in $tmp/fam/: .*profile.json" "$tmp/fam.err" \
  || fail "fam: the run's outputs not listed: $(cat "$tmp/fam.err")"
grep -q "^taskscope: outputs of endings (pid $child, under endings) in $tmp/fam.endings.$child/: .*profile.json" \
  "$tmp/fam.err" || fail "fam: the child's outputs not listed: $(cat "$tmp/fam.err")"
[ -z "$(ls -A "$tmp/fam" "$tmp/fam.endings.$child" | grep '^\.')" ] \
  || fail "fam: files left: $(ls -A "$tmp/fam" "$tmp/fam.endings.$child")"

echo "-- the parent killed after its child finished: the run's end rebuilds the parent's in its folder, the child's stays"
status=0
"$ts" run --no-summary -o "$tmp/famk" -- "$endings" parent 300 200 kill >"$tmp/famk.out" 2>"$tmp/famk.err" \
  || status=$?
[ "$status" = 137 ] || fail "famk: status $status: $(cat "$tmp/famk.err")"
child=$(sed -n 's/^child //p' "$tmp/famk.out")
grep -q "endings was killed by signal 9 (Killed) at [0-9.]* s; its outputs were rebuilt from the crash journal" \
  "$tmp/famk.err" || fail "famk: message: $(cat "$tmp/famk.err")"
[ "$(ticks "$tmp/famk")" = 300 ] || fail "famk: the parent's, rebuilt: $(ticks "$tmp/famk") tasks"
[ "$(ticks "$tmp/famk.endings.$child")" = 200 ] || fail "famk: the child's: $(ticks "$tmp/famk.endings.$child") tasks"
grep -q '"ended_by":"SIGKILL"' "$tmp/famk/profile.json" || fail "famk: the run's profile is not the killed parent's"
! grep -q '"ended_by":"SIGKILL"' "$tmp/famk.endings.$child/profile.json" || fail "famk: the child's profile was replaced"
no_numbered "$tmp/famk"

echo "-- the launcher killed, then the parent: taskscope recover rebuilds the parent's, never touches the child's"
start_endings parent famr 300 200 hang
child=$(sed -n 's/^child //p' "$tmp/famr.out")
[ -n "$child" ] && [ "$(ticks "$tmp/famr.endings.$child")" = 200 ] \
  || fail "famr: the child's: $(ls -d "$tmp"/famr*) $(cat "$tmp/famr.err")"
sums() { (cd "$1" && find . -type f | sort | xargs md5sum); }
sums "$tmp/famr.endings.$child" >"$tmp/famr.before"
kill -KILL "$tspid"
wait "$tspid" 2>/dev/null || true
kill -KILL "$prog"
for _ in $(seq 100); do kill -0 "$prog" 2>/dev/null || break; sleep 0.05; done
"$ts" recover -q "$tmp/famr" >"$tmp/famr.rec" 2>&1 || fail "famr: recover: $(cat "$tmp/famr.rec")"
[ "$(ticks "$tmp/famr")" = 300 ] || fail "famr: the parent's, recovered: $(ticks "$tmp/famr") tasks"
sums "$tmp/famr.endings.$child" | cmp -s - "$tmp/famr.before" || fail "famr: the child's folder changed"
no_numbered "$tmp/famr"

echo "-- the child killed, the parent finishing: said with the command that rebuilds it in its own folder"
"$ts" run --no-summary -o "$tmp/famc" -- "$endings" parent 300 200 childkill >"$tmp/famc.out" 2>"$tmp/famc.err" \
  || fail "famc: status $?: $(cat "$tmp/famc.err")"
child=$(sed -n 's/^child //p' "$tmp/famc.out")
[ "$(ticks "$tmp/famc")" = 300 ] || fail "famc: the parent's: $(ticks "$tmp/famc") tasks"
grep -q "^taskscope: endings (pid $child, under endings) ended without writing its outputs: taskscope recover $tmp/famc.endings.$child rebuilds them" \
  "$tmp/famc.err" || fail "famc: not said: $(cat "$tmp/famc.err")"
"$ts" recover -q "$tmp/famc.endings.$child" >"$tmp/famc.rec" 2>&1 || fail "famc: recover: $(cat "$tmp/famc.rec")"
[ "$(ticks "$tmp/famc.endings.$child")" = 200 ] || fail "famc: the child's, rebuilt: $(ticks "$tmp/famc.endings.$child") tasks"
[ "$(ticks "$tmp/famc")" = 300 ] || fail "famc: the parent's changed"
no_numbered "$tmp/famc"

echo "-- the launcher killed, then the child: taskscope recover on the run's folder rebuilds the child's in its own"
start_endings parent famd 300 200 childhang
child=$(sed -n 's/^child //p' "$tmp/famd.out")
kill -KILL "$tspid"
wait "$tspid" 2>/dev/null || true
kill -KILL "$child"
for _ in $(seq 100); do kill -0 "$prog" 2>/dev/null || break; sleep 0.05; done # the parent then ends
[ "$(ticks "$tmp/famd")" = 300 ] || fail "famd: the parent's: $(ticks "$tmp/famd") tasks"
sums "$tmp/famd" >"$tmp/famd.before"
"$ts" recover "$tmp/famd" >"$tmp/famd.rec" 2>&1 || fail "famd: recover: $(cat "$tmp/famd.rec")"
grep -q "^taskscope recover: $tmp/famd.endings.$child: the outputs of process $child rebuilt" "$tmp/famd.rec" \
  || fail "famd: recover: $(cat "$tmp/famd.rec")"
[ "$(ticks "$tmp/famd.endings.$child")" = 200 ] || fail "famd: the child's, rebuilt: $(ticks "$tmp/famd.endings.$child") tasks"
sums "$tmp/famd" | cmp -s - "$tmp/famd.before" || fail "famd: the parent's folder changed"
no_numbered "$tmp/famd"

echo "-- run -- a script: a program it starts writes into its own folder (said), one it executes into the run's"
printf '#!/bin/sh\n"%s" child 150\necho started\n' "$endings" >"$tmp/starts.sh"
printf '#!/bin/sh\nexec "%s" child 150\n' "$endings" >"$tmp/execs.sh"
chmod +x "$tmp/starts.sh" "$tmp/execs.sh"
"$ts" run --no-summary -o "$tmp/scr" -- "$tmp/starts.sh" >"$tmp/scr.out" 2>"$tmp/scr.err" \
  || fail "scr: status $?: $(cat "$tmp/scr.err")"
[ "$(ls -d "$tmp"/scr.endings.* 2>/dev/null | wc -l)" = 1 ] || fail "scr: folders: $(ls -d "$tmp"/scr*)"
sub=$(ls -d "$tmp"/scr.endings.*)
[ "$(ticks "$sub")" = 150 ] || fail "scr: the program's: $(ticks "$sub") tasks"
grep -q "^taskscope: outputs of endings (pid ${sub##*.}, under starts.sh) in $sub/: .*profile.json" "$tmp/scr.err" \
  || fail "scr: not said: $(cat "$tmp/scr.err")"
! grep -q "never started measuring" "$tmp/scr.err" || fail "scr: $(cat "$tmp/scr.err")"
[ ! -e "$tmp/scr" ] || fail "scr: the run's folder stays: $(ls -A "$tmp/scr")"
"$ts" run --no-summary -o "$tmp/scx" -- "$tmp/execs.sh" >"$tmp/scx.out" 2>"$tmp/scx.err" \
  || fail "scx: status $?: $(cat "$tmp/scx.err")"
[ "$(ticks "$tmp/scx")" = 150 ] || fail "scx: the program's: $(ticks "$tmp/scx") tasks; $(ls -d "$tmp"/scx*)"
grep -q "^taskscope: outputs of .*execs.sh in $tmp/scx/: .*profile.json" "$tmp/scx.err" \
  || fail "scx: not said: $(cat "$tmp/scx.err")"
[ -z "$(find "$tmp" -maxdepth 1 -type d -name 'scx.*')" ] || fail "scx: other folders: $(ls -d "$tmp"/scx*)"

echo "-- damaged parts of what a killed program left: each named, the rest recovered exactly"
# the launcher killed, then the program (flood_h N: N tick and N work tasks
# through handles, one more tick running); then PART is damaged and
# `taskscope recover` rebuilds the folder
killed_pair() { # dir, N (FLOOD: flood_h, or flood for tasks by id)
  start_endings "${FLOOD:-flood_h}" "$1" "$2"
  kill -KILL "$tspid"
  wait "$tspid" 2>/dev/null || true
  kill -KILL "$prog"
  for _ in $(seq 100); do kill -0 "$prog" 2>/dev/null || break; sleep 0.05; done
}
exact() { # dir, N: the counts of flood_h N, recovered
  grep -q "^1,tick,$(($2 + 1)),$2,0,0,1,1," "$tmp/$1/types.csv" || fail "$1: tick: $(cat "$tmp/$1/types.csv")"
  grep -q "^2,work,$2,$2,0,0,0,1," "$tmp/$1/types.csv" || fail "$1: work: $(cat "$tmp/$1/types.csv")"
  # the per-thread figures (report --threads) rebuilt too: the threads' work calls add up
  [ "$(jq '[.threads[].types[]? | select(.type == "work") | .calls] | add' "$tmp/$1/profile.json")" = "$2" ] \
    || fail "$1: per-thread work calls: $(jq -c '[.threads[] | {name, types}]' "$tmp/$1/profile.json")"
}
# the mapping cut short (a full /dev/shm, a copy that stopped): said in one
# line with what is missing, the blocks before the cut recovered
killed_pair dtrunc 3000
shfile=$(readlink -f "$tmp/dtrunc/.taskscope-$prog.map")
size=$(stat -c %s "$shfile")
cut=$((size - 65536)) # the last blocks: the newest of the threads' log chunks
truncate -s $cut "$shfile"
"$ts" recover -q "$tmp/dtrunc" >"$tmp/dtrunc.rec" 2>&1 || fail "dtrunc: $(cat "$tmp/dtrunc.rec")"
grep -q "warning: $tmp/dtrunc/.taskscope-$prog.map is truncated ($cut of its [0-9]* bytes): what the rest held is lost" \
  "$tmp/dtrunc.rec" || fail "dtrunc: message: $(cat "$tmp/dtrunc.rec")"
[ "$(grep -c warning "$tmp/dtrunc.rec")" = 1 ] || fail "dtrunc: more than one warning: $(cat "$tmp/dtrunc.rec")"
jq -e '[.types[] | select(.name == "tick" or .name == "work") | .calls <= 3001] | all' \
  "$tmp/dtrunc/profile.json" >/dev/null || fail "dtrunc: counts: $(cat "$tmp/dtrunc/types.csv")"
# a quarter of the mapping lost from its middle (zeros, as a lost page of
# tmpfs or a partial copy gives; more than any one block, so block headers
# are in it): the bytes said, what whole blocks hold recovered, nothing
# invented.  (Garbage inside a whole block's payload is read as it is: the
# entries carry versions, not checksums; the fuzz target `recover` makes sure
# such a file never crashes or hangs the recovery.)
killed_pair dgarb 3000
shfile=$(readlink -f "$tmp/dgarb/.taskscope-$prog.map")
size=$(stat -c %s "$shfile")
dd if=/dev/zero of="$shfile" bs=4096 seek=$((size / 8192)) count=$((size / 16384)) conv=notrunc 2>/dev/null
"$ts" recover -q "$tmp/dgarb" >"$tmp/dgarb.rec" 2>&1 || fail "dgarb: $(cat "$tmp/dgarb.rec")"
grep -q "warning: $tmp/dgarb/.taskscope-$prog.map: [0-9]* bytes in it are damaged (not whole blocks); what they held is lost" \
  "$tmp/dgarb.rec" || fail "dgarb: message: $(cat "$tmp/dgarb.rec")"
jq -e '[.types[] | select(.name == "tick" or .name == "work") | .calls <= 3001] | all' \
  "$tmp/dgarb/profile.json" >/dev/null || fail "dgarb: counts: $(cat "$tmp/dgarb/types.csv")"
# one block of one thread overwritten (its header, so the walk meets no
# whole block until the next one): the warning names the thread and the
# part, and the other thread's counts are exact.  (flood_h's worker makes
# the 'work' tasks; its slot is the other one with a types chunk.)
blocks() { # file -> "offset kind owner index" per block header (64-byte aligned, magic "TSH1")
  od -An -v -tu4 -w64 "$1" | awk '$1 == 826823508 { print (NR - 1) * 64, $2 % 65536, $3, $4 }'
}
damage_block() { # dir, kind, owner (w: the worker's slot)
  local shfile at
  shfile=$(readlink -f "$tmp/$1/.taskscope-$prog.map")
  blocks "$shfile" >"$tmp/$1.blocks"
  worker=$(awk '$2 == 2 && $3 != 0 { print $3; exit }' "$tmp/$1.blocks")
  at=$(awk -v k="$2" -v o="${3/w/$worker}" '$2 == k && $3 == o { print $1; exit }' "$tmp/$1.blocks")
  [ -n "$worker" ] && [ -n "$at" ] || fail "$1: no block of kind $2 of thread $3: $(cat "$tmp/$1.blocks")"
  dd if=/dev/urandom of="$shfile" bs=64 seek=$((at / 64)) count=2 conv=notrunc 2>/dev/null
  "$ts" recover -q "$tmp/$1" >"$tmp/$1.rec" 2>&1 || fail "$1: $(cat "$tmp/$1.rec")"
}
lost_line() { # dir, what was lost: the warning's words
  grep -q "warning: $tmp/$1/.taskscope-$prog.map: [0-9]* bytes in it are damaged (not whole blocks); what they held is lost ($2), the rest is recovered" \
    "$tmp/$1.rec" || fail "$1: message: $(cat "$tmp/$1.rec")"
}
killed_pair dtypes 3000 # the worker's task types chunk
damage_block dtypes 2 w
lost_line dtypes "thread $worker: task types"
grep -q "^1,tick,3001,3000,0,0,1,1," "$tmp/dtypes/types.csv" || fail "dtypes: tick: $(cat "$tmp/dtypes/types.csv")"
! grep -q "^2,work,[1-9]" "$tmp/dtypes/types.csv" || fail "dtypes: work invented: $(cat "$tmp/dtypes/types.csv")"
killed_pair dshard 3000 # the worker's whole shard
damage_block dshard 1 w
lost_line dshard "thread $worker: its shard (its slot remains, no shard of it does)"
grep -q "^1,tick,3001,3000,0,0,1,1," "$tmp/dshard/types.csv" || fail "dshard: tick: $(cat "$tmp/dshard/types.csv")"
killed_pair dmain 3000 # the main thread's shard: the worker's counts stay whole
damage_block dmain 1 0
lost_line dmain "thread 0 (main): its shard (its slot remains, no shard of it does)"
grep -q "^2,work,3000,3000,0,0,0,1," "$tmp/dmain/types.csv" || fail "dmain: work: $(cat "$tmp/dmain/types.csv")"
killed_pair dslot 3000 # the worker's slot (its name and ring): every count whole
damage_block dslot 13 w
lost_line dslot "thread $worker: its name and ring"
exact dslot 3000
killed_pair dconf 3000 # the configuration block: said, the default outputs, counts whole
damage_block dconf 14 0
grep -q "warning: $tmp/dconf/.taskscope-$prog.map: the program's configuration in it is damaged; the outputs are the default ones" \
  "$tmp/dconf.rec" || fail "dconf: configuration: $(cat "$tmp/dconf.rec")"
lost_line dconf "no thread's shard or slot pointed there"
exact dconf 3000
killed_pair dlog 3000 # the worker's first log chunk (the instance graph's records)
damage_block dlog 19 w
lost_line dlog "thread $worker: instance graph"
exact dlog 3000
# the mapping alone (the default), one name damaged in it
killed_pair dnames 3000
shfile=$(readlink -f "$tmp/dnames/.taskscope-$prog.map")
# the name block of task type 2 (kind 15, table 0, index 2): its name's
# first byte, after the block's 64-byte header and the name's length and
# checksum (the word alone may also be in the folder's path or a counter's
# name: "network")
at=$(blocks "$shfile" | awk '$2 == 15 && $3 == 0 && $4 == 2 { print $1 + 64 + 8; exit }')
[ -n "$at" ] && [ "$(dd if="$shfile" bs=1 skip="$at" count=4 2>/dev/null)" = work ] \
  || fail "dnames: the name 'work' is not where its block says: $(blocks "$shfile")"
printf 'W' | dd of="$shfile" bs=1 seek="$at" conv=notrunc 2>/dev/null
"$ts" recover -q "$tmp/dnames" >"$tmp/dnames.rec" 2>&1 || fail "dnames: $(cat "$tmp/dnames.rec")"
grep -q "$tmp/dnames/.taskscope-$prog.map: 1 names in it are damaged" "$tmp/dnames.rec" || fail "dnames: names: $(cat "$tmp/dnames.rec")"
grep -q "^1,tick,3001,3000,0,0,1,1," "$tmp/dnames/types.csv" || fail "dnames: tick: $(cat "$tmp/dnames/types.csv")"
grep -q '^2,(damaged name 2),3000,3000,0,0,0,1,' "$tmp/dnames/types.csv" \
  || fail "dnames: work: $(cat "$tmp/dnames/types.csv")"
# the mapping's header overwritten: named, its copy read, every task recovered
killed_pair dhead 3000
shfile=$(readlink -f "$tmp/dhead/.taskscope-$prog.map")
dd if=/dev/urandom of="$shfile" bs=512 count=1 conv=notrunc 2>/dev/null
"$ts" recover -q "$tmp/dhead" >"$tmp/dhead.rec" 2>&1 || fail "dhead: $(cat "$tmp/dhead.rec")"
grep -q "warning: $tmp/dhead/.taskscope-$prog.map: its header is damaged (magic, version or checksum); its copy was read" \
  "$tmp/dhead.rec" || fail "dhead: message: $(cat "$tmp/dhead.rec")"
exact dhead 3000
# the header and its copy (the first block after it) overwritten: named in
# one line, nothing invented, everything stays for another try
killed_pair dhead2 3000
shfile=$(readlink -f "$tmp/dhead2/.taskscope-$prog.map")
dd if=/dev/urandom of="$shfile" bs=4096 count=2 conv=notrunc 2>/dev/null
"$ts" recover -q "$tmp/dhead2" >"$tmp/dhead2.rec" 2>&1 && fail "dhead2: recovered: $(cat "$tmp/dhead2.rec")"
grep -q "cannot read $tmp/dhead2/.taskscope-$prog.map: its header is damaged (magic, version or checksum)" \
  "$tmp/dhead2.rec" || fail "dhead2: message: $(cat "$tmp/dhead2.rec")"
[ -e "$shfile" ] || fail "dhead2: the mapping was removed"
rm -f "$shfile"
# /dev/shm emptied after the kill (a batch system): said in one line
killed_pair dshm 3000
rm -f "$(readlink -f "$tmp/dshm/.taskscope-$prog.map")"
"$ts" recover -q "$tmp/dshm" >"$tmp/dshm.rec" 2>&1 && fail "dshm: recovered: $(cat "$tmp/dshm.rec")"
grep -q "/dev/shm/taskscope-$prog-.* is gone (/dev/shm was emptied?): what process $prog measured is lost" \
  "$tmp/dshm.rec" || fail "dshm: message: $(cat "$tmp/dshm.rec")"
# single bytes flipped at chosen places of the worker's shard (issue 30):
# each loss named in one line with the part, the counts exact - what a
# damaged part held is gone (0 'work' tasks) or, where only a count of
# entries was hit, taken from the entries found (3000), the other
# thread's whole.  The shard's block has the pointers to its chunks: the
# first one to its task types (found by value: the process's address of
# that chunk, the header's base + its place in the file), 144 bytes a
# directory (16 pointers, the far one, kind and owner), the node and edge
# directories after it, then the count of task types.
u64() { od -An -v -tu8 -j "$2" -N8 "$1" | tr -d ' '; }
flip() { # file, offset, xor (a number): one byte changed
  local b
  b=$(od -An -v -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\$(printf %03o $((b ^ $3)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
shard_at() { # dir: sets shfile, worker, sblock (the worker's shard block), tblock (its first
  # chunk of task types), types_at (the shard's pointer to it)
  shfile=$(readlink -f "$tmp/$1/.taskscope-$prog.map")
  blocks "$shfile" >"$tmp/$1.blocks"
  worker=$(awk '$2 == 2 && $3 != 0 { print $3; exit }' "$tmp/$1.blocks")
  sblock=$(awk -v o="$worker" '$2 == 1 && $3 == o { print $1; exit }' "$tmp/$1.blocks")
  local want
  tblock=$(awk -v o="$worker" '$2 == 2 && $3 == o && $4 == 0 { print $1; exit }' "$tmp/$1.blocks")
  want=$(($(u64 "$shfile" 24) + tblock + 64))
  types_at=$(od -An -v -tu8 -w8 -j $((sblock + 64)) -N 32768 "$shfile" |
    awk -v w="$want" '$1 == w && !f { print (NR - 1) * 8; f = 1 }')
  [ -n "$sblock" ] && [ -n "$types_at" ] || fail "$1: the worker's shard or its types pointer not found: $(cat "$tmp/$1.blocks")"
  types_at=$((sblock + 64 + types_at))
}
part_line() { # dir, what was lost: first in the list (a build whose layout differs - the
  # sanitizers' - may find a part more, e.g. a count, after it), the rest recovered
  local line
  line=$(grep -F "warning: $tmp/$1/.taskscope-$prog.map: parts of it are damaged (a pointer or block header that leads to no whole block, a count that disagrees with the entries); what they held is lost ($2" \
    "$tmp/$1.rec") || fail "$1: message: $(cat "$tmp/$1.rec")"
  [[ $line == *", the rest is recovered" ]] || fail "$1: message: $line"
  [[ $line == *"lost ($2), the rest"* || $line == *"lost ($2, "* ]] || fail "$1: message: $line"
}
tick_exact() { grep -q "^1,tick,3001,3000,0,0,1,1," "$tmp/$1/types.csv" || fail "$1: tick: $(cat "$tmp/$1/types.csv")"; }
no_work() { ! grep -q "^2,work,[1-9]" "$tmp/$1/types.csv" || fail "$1: work invented: $(cat "$tmp/$1/types.csv")"; }
# the pointer to the task types' chunk: a bit of its third byte (64 KiB away)
killed_pair fptr 3000
shard_at fptr
flip "$shfile" $((types_at + 2)) 1
"$ts" recover -q "$tmp/fptr" >"$tmp/fptr.rec" 2>&1 || fail "fptr: $(cat "$tmp/fptr.rec")"
part_line fptr "thread $worker: task types"
tick_exact fptr
no_work fptr
# the pointer's top byte: out of the file
killed_pair fout 3000
shard_at fout
flip "$shfile" $((types_at + 6)) 128
"$ts" recover -q "$tmp/fout" >"$tmp/fout.rec" 2>&1 || fail "fout: $(cat "$tmp/fout.rec")"
part_line fout "thread $worker: task types (it pointed out of the file)"
tick_exact fout
no_work fout
# the count of task types (3: types 1 and 2) made 2: type 2's entry past it,
# taken all the same
killed_pair fcount 3000
shard_at fcount
[ "$(od -An -tu4 -j $((types_at + 3 * 144)) -N4 "$shfile" | tr -d ' ')" = 3 ] \
  || fail "fcount: the count of task types is not where the layout says"
flip "$shfile" $((types_at + 3 * 144)) 1
"$ts" recover -q "$tmp/fcount" >"$tmp/fcount.rec" 2>&1 || fail "fcount: $(cat "$tmp/fcount.rec")"
part_line fcount "thread $worker: task types (a damaged count, set again from what agrees with it)"
exact fcount 3000
# the calls of the worker's 'work' type (entry 2 of 264 bytes: version,
# created, calls, ...): outvoted by its statistics' three sample counts
killed_pair fcalls 3000
shard_at fcalls
[ "$(u64 "$shfile" $((tblock + 64 + 2 * 264 + 16)))" = 3000 ] \
  || fail "fcalls: the calls of 'work' are not where the layout says"
flip "$shfile" $((tblock + 64 + 2 * 264 + 16 + 1)) 4
"$ts" recover -q "$tmp/fcalls" >"$tmp/fcalls.rec" 2>&1 || fail "fcalls: $(cat "$tmp/fcalls.rec")"
part_line fcalls "thread $worker: task types (a damaged count, set again from what agrees with it)"
exact fcalls 3000
# the shard block's kind (SHARD made NODES): no shard of the worker, named
killed_pair fkind 3000
shard_at fkind
flip "$shfile" $((sblock + 4)) 2
"$ts" recover -q "$tmp/fkind" >"$tmp/fkind.rec" 2>&1 || fail "fkind: $(cat "$tmp/fkind.rec")"
part_line fkind "thread $worker: its shard (its slot remains, no shard of it does)"
tick_exact fkind
no_work fkind
# the shard block's owner made the main thread's: thread 0 has two shard
# blocks in the file (the worker's or the main thread's first: threads start
# in any order); the one whose chunks are thread 0's is read, the other is a
# second shard block, its header damaged; the worker has none
killed_pair fowner 3000
shard_at fowner
flip "$shfile" $((sblock + 8)) "$worker"
"$ts" recover -q "$tmp/fowner" >"$tmp/fowner.rec" 2>&1 || fail "fowner: $(cat "$tmp/fowner.rec")"
part_line fowner "thread 0 (main): a second shard block (its header is damaged); thread $worker: its shard (its slot remains, no shard of it does)"
tick_exact fowner
no_work fowner
# the header of the last task type's name block: its table made the
# counters' (where id 2 is taken): 'work' has no name block left, its
# counts stay under a placeholder, said
killed_pair fname 3000
shfile=$(readlink -f "$tmp/fname/.taskscope-$prog.map")
at=$(blocks "$shfile" | awk '$2 == 15 && $3 == 0 && $4 == 2 { print $1; exit }')
[ -n "$at" ] || fail "fname: no name block of task type 2: $(blocks "$shfile")"
flip "$shfile" $((at + 8)) 1
"$ts" recover -q "$tmp/fname" >"$tmp/fname.rec" 2>&1 || fail "fname: $(cat "$tmp/fname.rec")"
grep -q "$tmp/fname/.taskscope-$prog.map: 1 names in it are damaged" "$tmp/fname.rec" || fail "fname: names: $(cat "$tmp/fname.rec")"
tick_exact fname
grep -q '^2,(damaged name 2),3000,3000,0,0,0,1,' "$tmp/fname/types.csv" || fail "fname: work: $(cat "$tmp/fname/types.csv")"

echo "-- run rebuilds a killed program's outputs and cannot write them: everything stays, one line says how to retry"
# (a non-empty folder where profile.json goes: no file can take its name,
# whoever runs the test, root included)
start_endings flood_h kfail 3000
mkdir -p "$tmp/kfail/profile.json/in-the-way"
kill -KILL "$prog"
wait_ts
[ "$status" = 137 ] || fail "kfail: status $status: $(cat "$tmp/kfail.err")"
grep -q "cannot write the recovered outputs to $tmp/kfail; what process $prog left stays in $tmp/kfail (.taskscope-$prog.\*): 'taskscope recover $tmp/kfail' tries again" \
  "$tmp/kfail.err" || fail "kfail: message: $(cat "$tmp/kfail.err")"
grep -q "endings was killed by signal 9 (Killed); what it measured stays (see above)" "$tmp/kfail.err" \
  || fail "kfail: end: $(cat "$tmp/kfail.err")"
[ -e "$tmp/kfail/.taskscope-$prog.running" ] && [ -e "$(readlink -f "$tmp/kfail/.taskscope-$prog.map")" ] \
  || fail "kfail: what was left was removed: $(ls -A "$tmp/kfail")"
rm -r "$tmp/kfail/profile.json"
"$ts" recover -q "$tmp/kfail" >"$tmp/kfail.rec" 2>&1 || fail "kfail: recover: $(cat "$tmp/kfail.rec")"
exact kfail 3000
[ -z "$(ls -A "$tmp/kfail" | grep '^\.')" ] || fail "kfail: files left: $(ls -A "$tmp/kfail")"

echo "-- an MPI job killed with its launchers: report and merge point to recover, which rebuilds each rank and the global view"
# two ranks of one job as its launcher names them (PMI_*), each under its
# own taskscope run in one run folder; every launcher killed, then every rank
mpi_pids=""
for r in 0 1; do # (rank 1's folder named another way: start_endings logs by name)
  PMI_KVSNAME="tsk-$$" PMI_RANK=$r PMI_SIZE=2 start_endings flood_h "$([ $r = 0 ] || echo ./)mpik" 3000
  mpi_pids="$mpi_pids $prog"
  kill -KILL "$tspid"
  wait "$tspid" 2>/dev/null || true
done
for p in $mpi_pids; do kill -KILL "$p"; done
for p in $mpi_pids; do
  for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
done
[ -d "$tmp/mpik/rank-0" ] && [ -d "$tmp/mpik/rank-1" ] || fail "mpik: rank folders: $(ls -R "$tmp/mpik")"
"$ts" report "$tmp/mpik" >/dev/null 2>"$tmp/mpik.rep" && fail "mpik: report of a dead job's folder"
grep -q "has no profile.json: 2 of its 2 ranks (rank-0, ...) died without writing theirs and nobody rebuilt them; taskscope recover $tmp/mpik does" \
  "$tmp/mpik.rep" || fail "mpik: report: $(cat "$tmp/mpik.rep")"
"$ts" report "$tmp/mpik/rank-1" >/dev/null 2>"$tmp/mpik.rep" && fail "mpik: report of a dead rank's folder"
grep -q "has no profile.json: its program (pid [0-9]*) died without writing it and nobody rebuilt it; taskscope recover $tmp/mpik/rank-1 does" \
  "$tmp/mpik.rep" || fail "mpik: report rank-1: $(cat "$tmp/mpik.rep")"
"$ts" merge -q -o "$tmp/mpikm" "$tmp/mpik/rank-1" >/dev/null 2>"$tmp/mpik.mrg" && fail "mpik: merge of a dead rank's folder"
grep -q "taskscope recover $tmp/mpik/rank-1 does" "$tmp/mpik.mrg" || fail "mpik: merge: $(cat "$tmp/mpik.mrg")"
"$ts" recover -q "$tmp/mpik" >"$tmp/mpik.rec" 2>&1 || fail "mpik: recover: $(cat "$tmp/mpik.rec")"
grep -q "^taskscope recover: $tmp/mpik/global: the job's global view rebuilt from its 2 ranks" "$tmp/mpik.rec" \
  || fail "mpik: recover: $(cat "$tmp/mpik.rec")"
exact mpik/rank-0 3000
exact mpik/rank-1 3000
jq -e '.nranks == 2 and ([.types[] | select(.name == "work") | .calls] | add) == 6000' \
  "$tmp/mpik/global/profile.json" >/dev/null || fail "mpik: global: $(head -c 600 "$tmp/mpik/global/profile.json")"
"$ts" report "$tmp/mpik" >/dev/null 2>"$tmp/mpik.rep" || fail "mpik: report after recover: $(cat "$tmp/mpik.rep")"

echo "-- SIGKILL at random moments: the rebuilt profile has every task the program saw end"
# endings count: four threads of short tasks, the count of ended ones written
# every 10 ms; killed after 50-440 ms, whatever it was doing
kill_random() { # name, runs, handles|ids, environment...
  local name=$1 runs=$2 how=$3 r d seen got
  shift 3
  [ $# -eq 0 ] || local -x "$@"
  for r in $(seq "$runs"); do
    d=$name-$r
    start_endings count "$d" 3 "$tmp/$d.count" "$how"
    sleep "0.$(printf %02d $((RANDOM % 40 + 5)))"
    kill -KILL "$prog"
    wait_ts
    read -r seen samples events <"$tmp/$d.count" || seen=0
    got=$(awk -F, '$2 == "tick" || $2 == "work" { s += $4 } END { print s + 0 }' "$tmp/$d/types.csv" 2>/dev/null || true)
    [ "${got:-0}" -ge "$seen" ] && [ "$seen" -gt 0 ] \
      || fail "$d: ${got:-no} tasks rebuilt, the program saw $seen end: $(cat "$tmp/$d.err")"
    ! grep -q "damaged" "$tmp/$d.err" || fail "$d: a SIGKILL damaged nothing: $(cat "$tmp/$d.err")"
    # the counter samples, custom events and messages (the shards', or the
    # consumer's with ids) are all there too
    got=$(awk -F, '$2 == "every16" { print $3 }' "$tmp/$d/counters.csv" 2>/dev/null || true)
    [ "${got:-0}" -ge "$samples" ] || fail "$d: ${got:-no} counter samples rebuilt, the program made $samples"
    got=$(jq '[.events[] | select(.name == "every64") | .count] | add // 0' "$tmp/$d/profile.json")
    [ "${got:-0}" -ge "$events" ] || fail "$d: ${got:-no} custom events rebuilt, the program made $events"
    got=$(jq '[.messages[] | select(.peer == 1) | .sent] | add // 0' "$tmp/$d/profile.json")
    [ "${got:-0}" -ge "$events" ] || fail "$d: ${got:-no} messages rebuilt, the program sent $events"
    rm -rf "${tmp:?}/$d"
  done
}
kill_random krh 20 handles
kill_random kri 10 ids
for size in 64 1048576; do # the smallest ring and a large one
  kill_random "krh$size" 3 handles TASKSCOPE_RING_SIZE=$size
  kill_random "kri$size" 3 ids TASKSCOPE_RING_SIZE=$size
done

echo "-- SIGKILL while tracing: the trace holds what was drained, says it was not closed, converts"
kill9_run kill9t 100000 TASKSCOPE_TRACE=chrome
grep -q '"trace_status":"not closed: the program was killed before finalizing"' \
  "$tmp/kill9t/trace.json" || fail "kill9t: trace.json: $(head -c 300 "$tmp/kill9t/trace.json")"
grep -q "taskscope: $tmp/kill9t/trace.json: [0-9]* task stays" "$tmp/kill9t.err" \
  || fail "kill9t: conversion line: $(cat "$tmp/kill9t.err")"
# the ready line comes after 100,000 ticks: the trace has at least those drained before it
[ "$(grep -c '"name":"tick"' "$tmp/kill9t/trace.json")" -gt 0 ] || fail "kill9t: no tick slices"

echo "-- convert: a traced run's folder into every format; the errors"
"$ts" run -q --trace -o "$tmp/traced" -- "$example" 200000 2 >/dev/null 2>"$tmp/traced.err" \
  || fail "traced run: $(cat "$tmp/traced.err")"
[ -s "$tmp/traced/trace.tsct" ] && [ -s "$tmp/traced/trace.json" ] || fail "traced run: files"
"$ts" convert "$tmp/traced" --to all 2>"$tmp/conv.err" || fail "convert all: $(cat "$tmp/conv.err")"
for f in trace.json trace.prv trace.pcf trace.row timeline.csv timeline.gp; do
  [ -s "$tmp/traced/$f" ] || fail "convert all: $f missing"
done
grep -q "taskscope: $tmp/traced/trace.prv: [0-9]* task stays" "$tmp/conv.err" \
  || fail "convert: its line: $(cat "$tmp/conv.err")"
if command -v otf2-print >/dev/null; then
  otf2-print "$tmp/traced/trace-otf2/traces.otf2" >/dev/null || fail "otf2-print of the converted run"
fi
"$ts" convert "$tmp/traced/trace.tsct" --to chrome -o - -q >"$tmp/stdout.json" || fail "convert -o -"
cmp -s "$tmp/stdout.json" "$tmp/traced/trace.json" || fail "convert -o -: not the same JSON"
status=0; "$ts" convert "$tmp/traced" --to vampir 2>"$tmp/e" || status=$?
[ "$status" = 2 ] && grep -q "^taskscope convert: --to vampir: expected chrome, otf2, paraver, timeline, all (a trace) or folded, hatchet, tau, treedot (a profile)$" "$tmp/e" \
  || fail "convert --to vampir: $status $(cat "$tmp/e")"
status=0; "$ts" convert "$tmp/traced" --to chrome,otf2 -o x 2>"$tmp/e" || status=$?
[ "$status" = 2 ] || fail "convert -o with two formats: $status"
status=0; "$ts" convert "$tmp/out" --to chrome 2>"$tmp/e" || status=$?
[ "$status" = 1 ] && grep -q "holds no trace.tsct" "$tmp/e" || fail "convert of an untraced run: $status $(cat "$tmp/e")"
status=0; "$ts" convert "$tmp/traced/profile.json" --to chrome 2>"$tmp/e" || status=$?
[ "$status" = 1 ] && grep -q "not a taskscope trace" "$tmp/e" || fail "convert of a profile: $status $(cat "$tmp/e")"
"$ts" convert --help | grep -q -- "--to LIST" || fail "convert --help"

echo "-- the task tree for other tools: at finalize, and converted from profile.json alike"
"$ts" run -q --outputs all,folded,hatchet,tau,treedot -o "$tmp/trees" -- "$example" 200000 2 \
  >/dev/null 2>"$tmp/trees.err" || fail "trees run: $(cat "$tmp/trees.err")"
for f in stacks.folded hatchet.json tau/profile.0.0.0 tasktree.dot; do
  [ -s "$tmp/trees/$f" ] || fail "trees: $f missing"
done
# 200000 elements: 64 leaf_sort tasks below sort, as in types.csv
grep -q '^"\.TAU application => sort => leaf_sort" 64 0 ' "$tmp/trees/tau/profile.0.0.0" \
  || fail "tau: $(cat "$tmp/trees/tau/profile.0.0.0")"
grep -q '^sort;leaf_sort [0-9]*$' "$tmp/trees/stacks.folded" || fail "folded: $(cat "$tmp/trees/stacks.folded")"
if [ "$has_jansson" = 1 ]; then
  for f in folded hatchet tau treedot; do
    "$ts" convert "$tmp/trees/profile.json" --to $f -o "$tmp/conv.$f" 2>"$tmp/e" || fail "convert --to $f: $(cat "$tmp/e")"
  done
  cmp -s "$tmp/conv.folded" "$tmp/trees/stacks.folded" || fail "convert: folded differs"
  cmp -s "$tmp/conv.hatchet" "$tmp/trees/hatchet.json" || fail "convert: hatchet differs"
  cmp -s "$tmp/conv.tau" "$tmp/trees/tau/profile.0.0.0" || fail "convert: tau differs"
  cmp -s "$tmp/conv.treedot" "$tmp/trees/tasktree.dot" || fail "convert: treedot differs"
  # a folder: next to its profile.json, with the finalize names
  rm -r "$tmp/trees/tau"
  "$ts" convert -q "$tmp/trees" --to tau || fail "convert of a folder to tau"
  cmp -s "$tmp/conv.tau" "$tmp/trees/tau/profile.0.0.0" || fail "convert of a folder: tau"
  printf '{"schema":"taskscope-profile",' >"$tmp/bad.json"
  status=0; "$ts" convert "$tmp/bad.json" --to folded 2>"$tmp/e" || status=$?
  [ "$status" = 1 ] && grep -q "^taskscope convert: .*bad.json" "$tmp/e" || fail "convert of corrupt JSON: $status $(cat "$tmp/e")"
fi
status=0; "$ts" convert "$tmp/nothere.json" --to folded 2>"$tmp/e" || status=$?
[ "$status" = 1 ] || fail "convert of a missing profile: $status"

if [ "$has_jansson" = 1 ]; then
  echo "-- long type names: whole in the summary, diff and the global view's table"
  long="implicit task main (a_rather_long_file_name_of_a_stencil_code.c:123)"
  mkdir "$tmp/longname"
  jq -c --arg n "$long" '(.types[] | select(.name == "work") | .name) = $n' \
    "$src/tests/golden/profile.json" >"$tmp/longname/profile.json"
  "$ts" report "$tmp/longname" >"$tmp/long.report" 2>&1 || fail "long name: report: $(cat "$tmp/long.report")"
  "$ts" diff "$tmp/longname/profile.json" "$tmp/longname/profile.json" >"$tmp/long.diff" 2>&1 \
    || fail "long name: diff: $(cat "$tmp/long.diff")"
  "$ts" merge -o "$tmp/longg" "$tmp/longname/profile.json" >"$tmp/long.merge" 2>&1 \
    || fail "long name: merge: $(cat "$tmp/long.merge")"
  for out in report diff merge; do
    grep -qF "$long " "$tmp/long.$out" || fail "long name cut in $out: $(cat "$tmp/long.$out")"
  done

  echo "-- merge: memory from the ranks present, never from the number a profile claims"
  # one 5 KB profile claiming rank 5 of 65536 (once: two 65536 x 65536 matrices, 24 GB
  # and killed); within 1 GiB of address space (not under AddressSanitizer or
  # ThreadSanitizer, whose shadow memory needs terabytes of it)
  mkdir "$tmp/claim" "$tmp/claim300"
  jq -c '.nranks = 65536 | .rank = 5 | .messages = [{"peer":65535,"sent":2,"sent_bytes":64,
         "recv":0,"recv_bytes":0,"coll_sent":0,"coll_sent_bytes":0,"coll_recv":0,"coll_recv_bytes":0}]' \
    "$src/tests/golden/profile.json" >"$tmp/claim/profile.json"
  # (ldd's whole output first: `ldd | grep -q` under pipefail fails when grep
  # stops reading before ldd is done)
  limit=unlimited
  case $(ldd "$ts") in *libasan* | *libtsan*) ;; *) limit=1048576 ;; esac
  status=0
  (ulimit -v $limit; "$ts" merge -o "$tmp/claimg" "$tmp/claim/profile.json") >/dev/null \
    2>"$tmp/claim.err" || status=$?
  [ "$status" = 0 ] || fail "merge of a claim of 65536 ranks: status $status: $(cat "$tmp/claim.err")"
  grep -q "^taskscope merge: the profiles are not the ranks of one job (they claim 65536 ranks, 1 present: more missing than 1024 or than are present): they are ranks 0 to 0 in the order given$" \
    "$tmp/claim.err" || fail "merge of a claim of 65536 ranks: $(cat "$tmp/claim.err")"
  [ "$(jq -c '[.global.nranks, .global.ranks_present, .message_matrix]' "$tmp/claimg/profile.json")" \
    = '[1,1,{"bytes":[[0]],"messages":[[0]]}]' ] || fail "merge of a claim: $(jq -c .global "$tmp/claimg/profile.json")"
  # 300 ranks claimed, 299 missing: believed; the message matrix written as its pairs
  jq -c '.nranks = 300 | .rank = 5 | .messages = [{"peer":299,"sent":2,"sent_bytes":64,
         "recv":0,"recv_bytes":0,"coll_sent":0,"coll_sent_bytes":0,"coll_recv":0,"coll_recv_bytes":0}]' \
    "$src/tests/golden/profile.json" >"$tmp/claim300/profile.json"
  "$ts" merge -o "$tmp/claimg300" "$tmp/claim300/profile.json" >/dev/null 2>"$tmp/claim300.err" \
    || fail "merge of rank 5 of 300: $(cat "$tmp/claim300.err")"
  grep -q "^taskscope merge: 299 of 300 ranks missing: 0 1 2 3 4 6 7 " "$tmp/claim300.err" \
    || fail "merge of rank 5 of 300: $(cat "$tmp/claim300.err")"
  [ "$(jq -c .message_matrix "$tmp/claimg300/profile.json")" = '{"pairs":[[5,299,64,2]]}' ] \
    || fail "merge of rank 5 of 300: $(jq -c .message_matrix "$tmp/claimg300/profile.json")"
  [ "$(cat "$tmp/claimg300/messages.csv")" = "$(printf 'from,to,bytes,messages\n5,299,64,2')" ] \
    || fail "merge of rank 5 of 300: messages.csv: $(cat "$tmp/claimg300/messages.csv")"
  if command -v gnuplot >/dev/null; then
    [ -s "$tmp/claimg300/messages.svg" ] && ! grep -q "gnuplot failed" "$tmp/claim300.err" \
      || fail "merge of rank 5 of 300: messages.svg: $(cat "$tmp/claim300.err")"
  fi
fi

echo "-- SIGKILL with a small instance cap: the kept instances and the dropped ones add up"
kill9_run kill9c 100000 TASKSCOPE_INSTANCE_CAP=1000 \
  TASKSCOPE_OUTPUTS=all,tasks
jq -e '(.tasks | length) == .totals.instances and .totals.instances <= 1000 and .totals.instances > 0
       and .totals.instances + .totals.instances_cut_off
           == .totals.tasks_completed + .totals.tasks_cancelled + .totals.tasks_unfinished
              + .totals.tasks_never_ran' "$tmp/kill9c/profile.json" >/dev/null \
  || fail "kill9c: instances: $(jq -c .totals "$tmp/kill9c/profile.json")"

echo "-- SIGKILL with 80 threads alive: every thread's slot and shard recovered"
start_endings flood kill9m 2000 80
kill -KILL "$prog"
wait_ts
[ "$status" = 137 ] || fail "kill9m: status $status"
grep -q "^1,tick,2001,2000,0,0,1,1," "$tmp/kill9m/types.csv" || fail "kill9m: tick: $(cat "$tmp/kill9m/types.csv")"
grep -q "^2,work,160000,160000,0,0,0,80," "$tmp/kill9m/types.csv" \
  || fail "kill9m: work: $(cat "$tmp/kill9m/types.csv")"
[ -z "$(ls /dev/shm/taskscope-"$prog"-* 2>/dev/null)" ] || fail "kill9m: slots left in /dev/shm"

echo "-- a program that never calls tscope_finalize still gets its outputs"
"$ts" run --no-summary -o "$tmp/forgot" -- "$forgetful" 2>"$tmp/stderr6" || fail "forgetful failed"
grep -q "exited without tscope_finalize(); finalizing now" "$tmp/stderr6" || fail "at-exit note: $(cat "$tmp/stderr6")"
grep -q '"name":"forgotten","created":1,"calls":1' "$tmp/forgot/profile.json" || fail "at-exit profile"
# a program that knows nothing of taskscope (the pthread adapter started and
# ends measurement): no note about a tscope_finalize it could not call
case $(ldd "$ts") in
  *libasan* | *libtsan*)
    echo "SKIPPED the plain program's at-exit note: a sanitizer build's adapter does not load into an uninstrumented program"
    ;;
  *)
    "$ts" run --no-summary -o "$tmp/plain" -- "$(command -v true)" 2>"$tmp/stderr6b" || fail "true failed"
    grep -q "exited without tscope_finalize" "$tmp/stderr6b" && fail "at-exit note for a plain program: $(cat "$tmp/stderr6b")"
    grep -q '"name":"true"' "$tmp/plain/profile.json" || fail "plain program's profile: $(head -c 300 "$tmp/plain/profile.json")"
    ;;
esac

echo "-- unwritable output folder: one error line, the program still succeeds"
TASKSCOPE_OUTPUT_DIR=/proc/taskscope-forbidden/x "$example" 5000 1 >/dev/null 2>"$tmp/stderr5" \
  || fail "program failed because of the output folder"
grep -q "taskscope: error: cannot create output folder /proc/taskscope-forbidden/x" "$tmp/stderr5" \
  || fail "output folder error: $(cat "$tmp/stderr5")"

if [ "$has_jansson" = 0 ]; then
  echo "SKIPPED report checks (golden re-render, --sort, --rows, --tree, --dot, corrupt inputs): $no_jansson_reason"
  echo "-- report without libjansson: one line saying so, exit 1"
  status=0
  "$ts" report "$src/tests/golden/profile.json" >"$tmp/report.txt" 2>"$tmp/e0" || status=$?
  [ "$status" = 1 ] || fail "report without libjansson: status $status"
  [ "$(wc -l <"$tmp/e0")" = 1 ] && grep -q "built without libjansson-dev" "$tmp/e0" \
    || fail "report without libjansson: $(cat "$tmp/e0")"
  status=0
  "$ts" diff "$src/tests/golden/profile.json" "$src/tests/golden/profile.json" 2>"$tmp/e0" || status=$?
  [ "$status" = 1 ] && [ "$(wc -l <"$tmp/e0")" = 1 ] && grep -q "built without libjansson-dev" "$tmp/e0" \
    || fail "diff without libjansson: $status $(cat "$tmp/e0")"
else
  echo "-- report re-renders the golden profile exactly"
  "$ts" report "$src/tests/golden/profile.json" >"$tmp/report.txt"
  diff -u "$src/tests/golden/summary.txt" "$tmp/report.txt" || fail "report differs from golden summary"
  "$ts" report --sort calls --rows 1 "$tmp/out" >"$tmp/r2"
  [ "$(sed -n 5p "$tmp/r2" | awk '{print $1}')" = sort ] || fail "sort by calls: $(cat "$tmp/r2")"
  grep -q "^\.\.\. 3 more task types" "$tmp/r2" || fail "rows limit"
  # --rows limits the counter table too (the sampled run has several counters
  # with enough samples to be shown)
  "$ts" report --rows 1 "$tmp/sampled" >"$tmp/r3"
  [ "$(awk '/^counter /{c=1;next} c&&/^\.\.\. [0-9]+ more counters/{m=1;next} c&&/ left out: /{next} c&&NF==0{c=0} c{n++} END{print n+0, m+0}' "$tmp/r3")" = "1 1" ] \
    || fail "rows limit on counters: $(cat "$tmp/r3")"
  "$ts" report --tree "$tmp/out" | grep -q "leaf_sort  calls 64" || fail "report --tree"

  echo "-- report --threads: a table per program thread whose calls add up to the type's"
  # the threads' own shards (profile mode) and the rings' replay (naive mode)
  for mode in profile naive; do
    "$ts" run -q --mode $mode -o "$tmp/thr-$mode" -- "$example" 200000 2 >/dev/null 2>&1 \
      || fail "threads $mode: run"
    "$ts" report --threads --rows 0 "$tmp/thr-$mode" >"$tmp/thr.txt" 2>&1 || fail "report --threads: $(cat "$tmp/thr.txt")"
    [ "$(grep -c '^thread [0-9]* (' "$tmp/thr.txt")" = 2 ] || fail "threads $mode: two tables: $(cat "$tmp/thr.txt")"
    grep -q "^per thread: 2 threads of the program (taskscope's own left out: [0-9]* taskscope-sampler)$" \
      "$tmp/thr.txt" || fail "threads $mode: header: $(cat "$tmp/thr.txt")"
    # the type table's calls (9 figures after the name) = the sum of the
    # thread tables' (6 figures after the name), per type, in the text
    sums=$(awk '/^task type .* threads$/ {t = 1; next} /^task type / {h = 1; next} NF == 0 {t = h = 0}
                t {n = $1; for (i = 2; i <= NF - 9; i++) n = n " " $i; type[n] = $(NF - 8)}
                h {n = $1; for (i = 2; i <= NF - 6; i++) n = n " " $i; thr[n] += $(NF - 5); k++}
                END {for (n in type) if (type[n] != thr[n] + 0) print "type " n ": " type[n] " calls, threads " thr[n] + 0;
                     if (!k) print "no thread rows"}' "$tmp/thr.txt")
    [ -z "$sums" ] || fail "threads $mode: $sums: $(cat "$tmp/thr.txt")"
    # profile.json: each thread's types, and their calls add up to the type's
    [ "$(jq -c '[.types[] | select(.calls > 0) | {(.name): .calls}] | add' "$tmp/thr-$mode/profile.json")" = \
      "$(jq -c '[.threads[] | .types[]? | {n: .type, c: .calls}] | sort_by(.n) | group_by(.n)
                | map({(.[0].n): (map(.c) | add)}) | add' "$tmp/thr-$mode/profile.json" |
         jq -c --slurpfile p "$tmp/thr-$mode/profile.json" '. as $s | [$p[0].types[] | select(.calls > 0) | {(.name): $s[.name]}] | add')" ] \
      || fail "threads $mode: profile.json: $(jq -c '.threads' "$tmp/thr-$mode/profile.json")"
  done
  "$ts" report --threads --sort calls --rows 1 "$tmp/thr-profile" | grep -q "^\.\.\. [0-9]* more task types (show all with --rows 0)$" \
    || fail "report --threads --rows 1"
  status=0
  "$ts" report --threads --dot "$tmp/thr-profile" >/dev/null 2>"$tmp/e" || status=$?
  [ "$status" = 2 ] && [ "$(cat "$tmp/e")" = "taskscope report: --threads cannot be combined with --dot" ] \
    || fail "report --threads --dot: $status $(cat "$tmp/e")"

  echo "-- diff: two profiles with known differences"
  # B: 'work' takes twice the self time, 'main' is renamed, the run is longer
  jq -c '.types[1].self_ns.sum = 7000 | .types[1].self_ns.total = 7000 | .types[1].self_ns.max = 5000 | .types[1].self_ns.mean = 3500
         | .types[0].name = "main2" | .totals.elapsed_ns = 9000' \
    "$src/tests/golden/profile.json" >"$tmp/b.json" || fail "jq: cannot make the second profile"
  "$ts" diff "$src/tests/golden/profile.json" "$tmp/b.json" >"$tmp/diff.txt" || fail "diff failed"
  [ "$(sed -n 1p "$tmp/diff.txt")" = "run length: A 0.008 ms, B 0.009 ms (+0.001 ms, +7.8%)" ] \
    || fail "diff: head: $(cat "$tmp/diff.txt")"
  # largest change in self time first: work +3.5 us (+100%), then main gone and main2 new
  [ "$(sed -n 3p "$tmp/diff.txt" | awk '{print $1, $2, $3, $NF}')" = "work 2 2 +100.0%" ] \
    || fail "diff: first row: $(cat "$tmp/diff.txt")"
  grep -q "^main  *1  *- .* gone$" "$tmp/diff.txt" || fail "diff: main gone: $(cat "$tmp/diff.txt")"
  grep -q "^main2  *-  *1 .* new$" "$tmp/diff.txt" || fail "diff: main2 new: $(cat "$tmp/diff.txt")"
  grep -q '^leaf, "quoted" .* +0.0%$' "$tmp/diff.txt" || fail "diff: unchanged row"
  [ "$("$ts" diff --sort name --rows 1 "$src/tests/golden/profile.json" "$tmp/b.json" | sed -n '3p;4p' | cut -c1-14)" \
    = "$(printf 'leaf, "quoted"\n(3 more task t')" ] || fail "diff --sort name --rows 1"
  status=0
  "$ts" diff "$src/tests/golden/profile.json" "$tmp/none.json" 2>"$tmp/e" || status=$?
  [ "$status" = 1 ] && grep -q "^taskscope diff: $tmp/none.json: unable to open" "$tmp/e" \
    || fail "diff of a missing file: $status $(cat "$tmp/e")"
  status=0
  "$ts" diff --sort size a b 2>"$tmp/e" || status=$?
  [ "$status" = 2 ] && grep -q "expected impact or name" "$tmp/e" || fail "diff --sort size: $status"
  "$ts" report --dot "$tmp/out" | grep -q "^digraph taskscope" || fail "report --dot"

  echo "-- report --deps: the critical path of a known task graph"
  # main (0-12 ms, 1 ms of self time, on thread 1) creates a, b, c, d, e
  # (each on a thread of its own) and waits from 10 to 12 ms in a taskwait
  # (a wait: its 1.9 ms of self time are no work); a diamond of
  # dependencies a -> b RAW, a -> c RAW, b -> d RAW, c -> d WAR, and d ->
  # main WAW. main's work is spread over its 10 ms outside the taskwait:
  # 0.1 ms by the time it creates a, so the path is main (0.1) -> a (2) ->
  # c (5) -> d (2), joined at the taskwait's end: 9.1 ms of the 13 ms all
  # six tasks did (b: 2, e: 1). Left out: the live task 7, the remote edge
  # 3 -> 4 (task 3 of rank 1, not b), the edge from task 1000 (not kept),
  # d -> main (main began before d ended). Times in ms; each array set here,
  # whatever the golden has.
  jq_deps='
    def task($id; $parent; $type; $state; $b; $e; $self):
      {id: $id, parent: $parent, type_id: $type, thread: $id, state: $state,
       create_ns: ($b * 1e6), begin_ns: ($b * 1e6), end_ns: ($e * 1e6), self_ns: ($self * 1e6),
       running_ns: (($e - $b) * 1e6), elapsed_ns: (($e - $b) * 1e6)};
    def dep($from; $to; $kind; $remote):
      {from: $from, to: $to}
      + (if $remote then {kind: $kind} else {hazards: [$kind], addresses: 1, addr: "0x0"} end)
      + {remote: $remote, from_rank: (if $remote then 1 else 0 end), to_rank: 0};
    def pair($f; $t; $count; $raw; $war; $waw; $remote):
      {from_id: $f, from: "x", to_id: $t, to: "y", count: $count, raw: $raw, war: $war,
       waw: $waw, mutex: 0, remote: $remote};
    .version = 3 | .totals.elapsed_ns = 12.5e6 | del(.critical_path)
    | .types = [range(6) as $i | .types[0] | .id = $i + 1 | .name = (["main","a","b","c","d","taskwait"][$i])]
    | .types[5].wait = true
    | .dependencies = [pair(0;4;2;0;0;0;1), pair(2;3;1;1;0;0;0), pair(2;4;1;1;0;0;0),
                       pair(3;5;1;1;0;0;0), pair(4;5;1;0;1;0;0), pair(5;1;1;0;0;1;0)]
    | .tasks = [task(2;1;2;"done";1;3;2), task(3;1;3;"done";3;5;2), task(4;1;4;"done";3;8;5),
                task(5;1;5;"done";8;10;2), task(6;1;3;"done";9;10;1), task(8;1;6;"done";10;12;1.9),
                task(1;0;1;"done";0;12;1), task(7;1;2;"live";11;0;0)]
    | .tasks[5].thread = 1
    | .task_deps = [dep(2;3;"RAW";false), dep(2;4;"RAW";false), dep(3;5;"RAW";false),
                    dep(4;5;"WAR";false), dep(3;4;"in";true), dep(1000;3;"RAW";false),
                    dep(5;1;"WAW";false)]'
  jq -c "$jq_deps" "$src/tests/golden/profile.json" >"$tmp/dag.json" || fail "jq: cannot make the DAG profile"
  "$ts" report --deps "$tmp/dag.json" >"$tmp/cp.txt" 2>"$tmp/e" || fail "report --deps: $(cat "$tmp/e")"
  cat >"$tmp/cp.want" <<'WANT'
critical path: 9.100 ms of work in 5 steps (72.8% of the run's 12.500 ms)
all work: 13.000 ms in 6 tasks; parallelism (work / path) 1.43
type-level dependencies: 7 edges between 6 type pairs: RAW 3, WAR 1, WAW 1, remote 1, other 1
 step  type  task     from ms       to ms     work ms  next
    1  main     1       0.000       1.000       0.100  created
    2  a        2       1.000       3.000       2.000  RAW
    3  c        4       3.000       8.000       5.000  WAR
    4  d        5       8.000      10.000       2.000  joined
    5  main     1      12.000      12.000       0.000  -
the path by type:
   54.9%       5.000 ms  c
   22.0%       2.000 ms  a
   22.0%       2.000 ms  d
    1.1%       0.100 ms  main
WANT
  diff -u "$tmp/cp.want" "$tmp/cp.txt" || fail "report --deps: the critical path differs"
  # --rows 2: the last two steps, numbered as before, and what was left out
  "$ts" report --deps --rows 2 "$tmp/dag.json" >"$tmp/cp2.txt" || fail "report --deps --rows 2"
  { sed -n 1,4p "$tmp/cp.want"; echo "... 3 earlier steps (--rows 0 lists them all)"; sed -n '8,$p' "$tmp/cp.want"; } \
    | diff -u - "$tmp/cp2.txt" || fail "report --deps --rows 2"
  # without the wait mark (a version 2 profile) the taskwait's waiting is
  # work: main's 1 ms spreads over all its 12 ms, the taskwait is a step
  jq -c '.version = 2 | del(.types[5].wait) | .dependencies |= map(del(.mutex)) | .task_deps |= map(if .remote then . else {from, to, kind: .hazards[0], remote, from_rank, to_rank} end)' "$tmp/dag.json" >"$tmp/dag2.json"
  "$ts" report --deps "$tmp/dag2.json" >"$tmp/cp3.txt" 2>"$tmp/e" || fail "report --deps of version 2: $(cat "$tmp/e")"
  grep -qx "no task type is marked as a wait (profiles before version 3 mark none): every task's self time counts as work" "$tmp/cp3.txt" \
    && grep -q "^    [0-9]  taskwait " "$tmp/cp3.txt" || fail "report --deps of version 2: $(cat "$tmp/cp3.txt")"
  # the path profile.json carries is read back when it has no tasks[]
  jq -c '.tasks = []' "$src/tests/golden/profile.json" >"$tmp/stored.json"
  "$ts" report --deps "$tmp/stored.json" >"$tmp/cp4.txt" 2>"$tmp/e" || fail "report --deps of the golden profile: $(cat "$tmp/e")"
  check_path=$(jq -r '.critical_path.steps | length' "$src/tests/golden/profile.json")
  [ "$(awk '$1 ~ /^[0-9]+$/ && NF >= 6' "$tmp/cp4.txt" | wc -l)" = "$check_path" ] \
    && grep -q "^critical path: 0.008 ms of work in $check_path steps" "$tmp/cp4.txt" \
    || fail "report --deps of the golden profile: $(cat "$tmp/cp4.txt")"
  # the DOT graph of the same profile: dashed dependency edges, "unknown" for type 0
  "$ts" report --dot "$tmp/dag.json" >"$tmp/dag.dot" || fail "report --dot of the DAG"
  grep -qx '  "unknown" -> "t4" \[style=dashed, color="#1f77b4", fontcolor="#1f77b4", label="remote 1, other 1"\];' \
    "$tmp/dag.dot" || fail "dot: edge from unknown: $(cat "$tmp/dag.dot")"
  grep -qx '  "t4" -> "t5" \[style=dashed, color="#1f77b4", fontcolor="#1f77b4", label="WAR 1"\];' \
    "$tmp/dag.dot" || fail "dot: dependency edge: $(cat "$tmp/dag.dot")"
  if command -v dot >/dev/null; then dot -Tsvg "$tmp/dag.dot" -o /dev/null || fail "dot of the DAG"; fi
  # a cycle (bad input: two tasks that waited for each other): neither
  # began after the other ended, so no edge is followed; the path is the
  # task that ended with the longer path (a tie: the first)
  jq -c "$jq_deps"' | .tasks = [task(1;0;1;"done";0;4;1), task(2;0;2;"done";1;4;1)]
    | .task_deps = [dep(1;2;"RAW";false), dep(2;1;"WAR";false)]' "$src/tests/golden/profile.json" >"$tmp/cycle.json"
  "$ts" report --deps "$tmp/cycle.json" >"$tmp/cycle.txt" || fail "report --deps of a cycle"
  [ "$(head -1 "$tmp/cycle.txt")" = "critical path: 1.000 ms of work in 1 step (8.0% of the run's 12.500 ms)" ] \
    && [ "$(sed -n 5p "$tmp/cycle.txt" | awk '{print $1, $2, $3, $(NF - 1), $NF}')" = "1 main 1 1.000 -" ] \
    || fail "report --deps of a cycle: $(cat "$tmp/cycle.txt")"
  # no tasks kept: said, status 0
  jq -c '.version = 2 | .dependencies = [] | .tasks = [] | .task_deps = [] | del(.critical_path)' "$src/tests/golden/profile.json" >"$tmp/notasks.json"
  "$ts" report --deps "$tmp/notasks.json" >"$tmp/nt.txt" 2>"$tmp/e" || fail "report --deps without tasks: $(cat "$tmp/e")"
  [ "$(cat "$tmp/nt.txt")" = "$(printf '%s\n' "no task instances in this profile (they are written when the run recorded dependencies, or with TASKSCOPE_OUTPUTS=all,tasks)" "type-level dependencies: none")" ] \
    || fail "report --deps without tasks: $(cat "$tmp/nt.txt")"
  # a bad file: one line naming the field, status 1; a bad combination: status 2
  jq -c '.task_deps[4].kind = "XYZ"' "$tmp/dag.json" >"$tmp/badkind.json"
  status=0
  "$ts" report --deps "$tmp/badkind.json" >/dev/null 2>"$tmp/e" || status=$?
  [ "$status" = 1 ] && [ "$(cat "$tmp/e")" = "taskscope report: $tmp/badkind.json: field 'task_deps[4].kind' is \"XYZ\" (expected RAW, WAR, WAW, in, out, copyin or a number)" ] \
    || fail "report --deps of a bad kind: $status $(cat "$tmp/e")"
  jq -c '.task_deps[3].hazards = ["WAR", "XYZ"]' "$tmp/dag.json" >"$tmp/badhazard.json"
  status=0
  "$ts" report --deps "$tmp/badhazard.json" >/dev/null 2>"$tmp/e" || status=$?
  [ "$status" = 1 ] && [ "$(cat "$tmp/e")" = "taskscope report: $tmp/badhazard.json: field 'task_deps[3].hazards[1]' is not RAW, WAR, WAW or mutex" ] \
    || fail "report --deps of a bad hazard: $status $(cat "$tmp/e")"
  jq -c 'del(.task_deps)' "$tmp/dag.json" >"$tmp/nodeps.json"
  status=0
  "$ts" report --deps "$tmp/nodeps.json" >/dev/null 2>"$tmp/e" || status=$?
  [ "$status" = 1 ] && grep -qx "taskscope report: $tmp/nodeps.json: field 'task_deps' is missing or has the wrong type (expected an array)" "$tmp/e" \
    || fail "version 2 without task_deps: $status $(cat "$tmp/e")"
  status=0
  "$ts" report --deps "$tmp/none.json" 2>"$tmp/e" || status=$?
  [ "$status" = 1 ] && [ "$(wc -l <"$tmp/e")" = 1 ] || fail "report --deps of a missing file: $status $(cat "$tmp/e")"
  status=0
  "$ts" report --deps --dot "$tmp/dag.json" >/dev/null 2>"$tmp/e" || status=$?
  [ "$status" = 2 ] && [ "$(cat "$tmp/e")" = "taskscope report: --deps cannot be combined with --dot or --tree" ] \
    || fail "report --deps --dot: $status $(cat "$tmp/e")"

  echo "-- corrupt inputs give one line naming the file and the problem"
  head -c 300 "$src/tests/golden/profile.json" >"$tmp/trunc.json"
  "$ts" report "$tmp/trunc.json" 2>"$tmp/e1" && fail "truncated accepted"
  grep -q "^taskscope report: $tmp/trunc.json: line [0-9]*, column [0-9]*: " "$tmp/e1" || fail "syntax error: $(cat "$tmp/e1")"
  echo '{"schema":"other","version":1}' >"$tmp/other.json"
  "$ts" report "$tmp/other.json" 2>"$tmp/e2" && fail "wrong schema accepted"
  grep -q "not a taskscope profile" "$tmp/e2" || fail "schema error"
  sed 's/"calls":1,/"callz":1,/' "$src/tests/golden/profile.json" >"$tmp/field.json"
  "$ts" report "$tmp/field.json" 2>"$tmp/e3" && fail "missing field accepted"
  grep -q "field 'types\[0\].calls' is missing or has the wrong type" "$tmp/e3" || fail "field error: $(cat "$tmp/e3")"
  "$ts" report "$tmp/nothing-here" 2>"$tmp/e4" && fail "missing file accepted"
  [ "$(wc -l <"$tmp/e4")" = 1 ] || fail "one line for a missing file"
  "$ts" report --rows -3 "$tmp/out" 2>/dev/null && fail "negative rows accepted"
fi

echo "-- taskscope model: Extra-P inputs, predictions, JSON, composition, errors"
"$ts" model --help | grep -q -- "--no-cv" || fail "model --help"
"$ts" model "$src/tests/data/model/small.txt" >"$tmp/m1" || fail "model exit"
grep -qx 'solve \[time\]: 2.0 + 0.01 \* n^(2)  (RSS .*, SMAPE .*, adj. R^2 1)' "$tmp/m1" || fail "model line: $(cat "$tmp/m1")"
grep -qx 'main->io \[time\]: 5.0 + 3.0 \* log2(n)^(1)  (RSS 0, SMAPE 0, adj. R^2 1)' "$tmp/m1" || fail "log model: $(cat "$tmp/m1")"
"$ts" model --predict n=1024 "$src/tests/data/model/small.txt" | grep -q '^  at n=1024: 10487.76  (expected error .*%: the model.s SMAPE; extrapolated beyond the measured range)$' || fail "prediction"
if [ "$has_jansson" = 1 ]; then
  for f in small_new.json small_old.json small.jsonl small_talpas.txt; do
    "$ts" model "$src/tests/data/model/$f" | diff - "$tmp/m1" >/dev/null || fail "$f differs from the text input"
  done
  "$ts" model --json "$src/tests/data/model/small.txt" | head -1 >"$tmp/m.json"
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["callpath"]=="solve" and d["terms"][0]["factors"][0]["exponent"]==[2,1] and abs(d["constant"]-2)<1e-9, d' "$tmp/m.json" || fail "--json"
else
  echo "SKIPPED model checks of JSON inputs (Extra-P JSON, JSON Lines, Talpas): $no_jansson_reason"
fi
"$ts" model "$src/tests/data/model/two_params.txt" | grep -q 'kernel \[time\]: 3.00149.* + 0.50024.* \* x^(1) \* log2(y)^(1)' || fail "two parameters"
printf 'PARAMETER n\nPOINTS 1 2\nREGION r\nDATA 1\nDATA x\n' >"$tmp/bad.txt"
"$ts" model "$tmp/bad.txt" 2>"$tmp/e5" && fail "bad input accepted"
grep -qx "taskscope model: $tmp/bad.txt:5: DATA: 'x' is not a number" "$tmp/e5" || fail "model error: $(cat "$tmp/e5")"
"$ts" model --terms 9 "$src/tests/data/model/small.txt" 2>/dev/null && fail "--terms 9 accepted"
printf 'qsort: 1.0 + 0.01 * n^(1) * log2(n)^(1)\ninc: 0.2 + 0.001 * n^(1)\n' >"$tmp/models.txt"
"$ts" model compose 'tpool(2, pipe(inc, qsort))' --models "$tmp/models.txt" --at n=1024 >"$tmp/c1" || fail "compose exit"
grep -qx 'tpool(2, pipe(inc, qsort)) = 0.5 + 0.005 \* n^(1) \* log2(n)^(1)' "$tmp/c1" || fail "compose: $(cat "$tmp/c1")"
grep -qx '  at n=1024: 51.7' "$tmp/c1" || fail "compose value: $(cat "$tmp/c1")"
"$ts" model compose 'pipe(inc, nosuch)' --models "$tmp/models.txt" 2>"$tmp/e6" && fail "unknown model accepted"
# the output of 'taskscope model' is a models file: fit, then compose
"$ts" model "$src/tests/data/model/small.txt" >"$tmp/fitted.txt"
"$ts" model compose 'tpool(4, solve)' --models "$tmp/fitted.txt" --at n=100 >"$tmp/c2" || fail "compose fitted"
grep -qx 'tpool(4, solve) = 0.5 + 0.0025 \* n^(2)' "$tmp/c2" || fail "compose fitted: $(cat "$tmp/c2")"
grep -qx '  at n=100: 25.5' "$tmp/c2" || fail "compose fitted value: $(cat "$tmp/c2")"
grep -q "no model named 'nosuch'" "$tmp/e6" || fail "compose error"
# equal order: the larger stage at the top of the measured range (--range), not the larger constant
printf 'small: 500 + 0.01 * n^(1) * log2(n)^(1)\nbig: -30000 + 6 * n^(1) * log2(n)^(1)\n' >"$tmp/tie.txt"
"$ts" model compose 'pipe(small, big)' --models "$tmp/tie.txt" --range n=1024:262144 >"$tmp/c3" || fail "compose --range"
grep -qx 'pipe(small, big) = -30000.0 + 6.0 \* n^(1) \* log2(n)^(1)' "$tmp/c3" || fail "compose --range: $(cat "$tmp/c3")"
"$ts" model compose 'pipe(small, big)' --models "$tmp/tie.txt" >"$tmp/c4" || fail "compose without --range"
grep -qx 'pipe(small, big) = 500.0 + 0.01 \* n^(1) \* log2(n)^(1)' "$tmp/c4" || fail "compose without --range: $(cat "$tmp/c4")"
"$ts" model compose 'pipe(small, big)' --models "$tmp/tie.txt" --range n=5 2>"$tmp/e7" && fail "bad --range accepted"
grep -qx "taskscope model compose: --range n=5: expected NAME=LO:HI with LO <= HI" "$tmp/e7" || fail "--range error: $(cat "$tmp/e7")"
# the parameter is found under a logarithm too (a first model with log2(n) terms only), and
# call paths as Extra-P names them compose: main(), main->solve, or any name in quotes
printf 'logs: 1 + 2 * log2(n)^(1)\nmain(): 3 + 1 * n^(1)\nmain->solve: 2 * n^(2)\nx y [time]: 5\n' >"$tmp/paths.txt"
"$ts" model compose 'pipe(logs, tpool(2, main()), main->solve, "x y")' --models "$tmp/paths.txt" \
  --at n=8 >"$tmp/c5" 2>"$tmp/e8" || fail "compose call paths: $(cat "$tmp/e8")"
[ "$(sed -n 2p "$tmp/c5")" = "  at n=8: 128" ] || fail "compose call paths: $(cat "$tmp/c5")"
for e in logs 'tpool(2, main())' '"x y"'; do # each alone: its own value
  "$ts" model compose "$e" --models "$tmp/paths.txt" --at n=8 | sed -n 2p >>"$tmp/c6"
done
[ "$(cat "$tmp/c6" | tr -d ' ' | tr '\n' ' ')" = "atn=8:7 atn=8:5.5 atn=8:5 " ] \
  || fail "compose each call path: $(cat "$tmp/c6")"

# overflow is an error naming what overflowed, never inf or nan printed with status 0
printf 'big: 1e308 + 1e308 * n^(2)\n' >"$tmp/big.txt"
for c in "tpool(0.5, big)||composition 'tpool(0.5, big)', at character 16: tpool: a coefficient divided by the workers overflows (not finite)" \
  "big|--at n=10|the value of big at n=10 overflows (not finite)"; do
  e=${c%%|*} rest=${c#*|} at=${rest%%|*} want=${rest#*|} status=0
  # shellcheck disable=SC2086 # --at and its value, two words, or none
  "$ts" model compose "$e" --models "$tmp/big.txt" $at >"$tmp/c7" 2>"$tmp/e9" || status=$?
  [ "$status" = 1 ] && [ "$(cat "$tmp/e9")" = "taskscope model compose: $want" ] && ! grep -qi 'inf\|nan' "$tmp/c7" \
    || fail "compose overflow $e: status $status: $(cat "$tmp/e9" "$tmp/c7")"
done
for m in "1e308 * 10 * n^(1)|model '1e308 * 10 * n^(1)', at character 9: the product of the numbers overflows (not finite)" \
  "1e308 + 1e308|model '1e308 + 1e308', at character 14: the sum of the constants overflows (not finite)" \
  "1e999 * n^(1)|model '1e999 * n^(1)', at character 1: a number out of the range of a double (not finite)"; do
  printf 'huge: %s\n' "${m%%|*}" >"$tmp/huge.txt"
  status=0
  "$ts" model compose huge --models "$tmp/huge.txt" >"$tmp/c7" 2>"$tmp/e9" || status=$?
  [ "$status" = 1 ] && [ "$(cat "$tmp/e9")" = "taskscope model compose: $tmp/huge.txt:1: ${m#*|}" ] \
    || fail "compose of ${m%%|*}: status $status: $(cat "$tmp/e9" "$tmp/c7")"
done
printf 'PARAMETER n\nPOINTS 1 2 3 4 5\nREGION r\nDATA 1e308\nDATA 1.5e308\nDATA 1.7e308\nDATA 1.2e308\nDATA 1.6e308\n' >"$tmp/bigdata.txt"
status=0
"$ts" model "$tmp/bigdata.txt" >"$tmp/c7" 2>"$tmp/e9" || status=$?
[ "$status" = 1 ] && [ "$(cat "$tmp/e9")" = "taskscope model: r [time]: the fit overflows (its sums of the values are not finite: values too large for a double)" ] \
  && ! grep -qi 'inf\|nan' "$tmp/c7" || fail "model of 1e308 values: status $status: $(cat "$tmp/e9" "$tmp/c7")"
# every error of taskscope model starts with its name, as every command's
printf 'no colon here\n' >"$tmp/nocolon.txt"
"$ts" model compose x --models "$tmp/nocolon.txt" 2>"$tmp/e9" && fail "a line without a colon accepted"
[ "$(cat "$tmp/e9")" = "taskscope model compose: $tmp/nocolon.txt:1: expected 'NAME: MODEL'" ] \
  || fail "models file error: $(cat "$tmp/e9")"
for args in "--bogus x" "--terms" "--format"; do
  status=0
  # shellcheck disable=SC2086 # the options, several words
  "$ts" model $args 2>"$tmp/e9" >/dev/null || status=$?
  [ "$status" = 2 ] && [ "$(sed -n 1p "$tmp/e9" | cut -c1-17)" = "taskscope model: " ] \
    || fail "model $args: status $status: $(cat "$tmp/e9")"
done

if [ "$has_jansson" = 0 ]; then
  echo "SKIPPED taskscope model on profiles: $no_jansson_reason"
else
  echo "-- taskscope model on profiles labelled with parameter values"
  args=()
  for n in 50000 100000 200000 400000 800000; do
    "$ts" run --no-summary -o "$tmp/run$n" -- "$example" $n 1 >/dev/null 2>&1 || fail "run $n"
    args+=(--param n=$n "$tmp/run$n")
  done
  "$ts" model "${args[@]}" >"$tmp/m2" || fail "model on profiles"
  # n / 3125 leaves (halving until <= 4096 elements): calls grow linearly
  grep -q '^leaf_sort \[calls\]: .*0.00032 \* n^(1)  ' "$tmp/m2" || fail "leaf_sort calls model: $(cat "$tmp/m2")"
  grep -q '^leaf_sort \[self_mean_ns\]: ' "$tmp/m2" || fail "time model"
  grep -q '^leaf_sort \[elapsed_mean_ns\]: ' "$tmp/m2" || fail "elapsed model"
fi
echo "test_cli: all checks passed"

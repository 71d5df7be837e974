#!/usr/bin/env bash
# test_cli.sh - the taskscope tool end to end: run the bundled example,
# re-render its profile, golden report output, and clear one-line errors for
# bad input.  usage: test_cli.sh TASKSCOPE TASKTREE SOURCE_DIR FORGETFUL
set -euo pipefail
ts=$1 example=$2 src=$3 forgetful=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
has_jansson=1
"$ts" report "$src/tests/golden/profile.json" >/dev/null 2>"$tmp/probe" || has_jansson=0
grep -q "built without libjansson" "$tmp/probe" && has_jansson=0

echo "-- help"
"$ts" --help | grep -q "run \[options\] -- PROGRAM" || fail "taskscope --help"
"$ts" run --help | grep -q -- "--output DIR" || fail "run --help"
"$ts" report --help | grep -q -- "--sort KEY" || fail "report --help"
"$ts" bogus 2>/dev/null && fail "unknown command accepted"

echo "-- run the example"
"$ts" run -o "$tmp/out" -- "$example" 200000 2 >"$tmp/stdout" 2>"$tmp/stderr" || fail "run exit $?"
grep -q "sorted 200000 integers with 2 threads: ok" "$tmp/stdout" || fail "example output"
grep -q "^leaf_sort " "$tmp/stderr" || fail "summary printed: $(cat "$tmp/stderr")"
grep -q "taskscope: outputs of .* in $tmp/out/" "$tmp/stderr" || fail "outputs location"
for f in profile.json types.csv counters.csv taskgraph.dot tasktree.txt; do
  [ -s "$tmp/out/$f" ] || fail "missing $f"
done
# 200000 elements, leaves of <= 4096: 64 leaves, 63 merges, 127 sorts
grep -q '^3,leaf_sort,64,64,' <(sed 's/^[0-9]*,/3,/' "$tmp/out/types.csv" | grep leaf_sort) \
  || fail "leaf_sort counts: $(cat "$tmp/out/types.csv")"
awk -F, '$2=="sort" && $4!=127 {exit 1} $2=="merge" && $4!=63 {exit 1}' "$tmp/out/types.csv" \
  || fail "sort/merge counts"
if command -v dot >/dev/null; then dot -Tsvg "$tmp/out/taskgraph.dot" -o /dev/null || fail "dot"; fi

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

echo "-- a program without the library"
"$ts" run -o "$tmp/none" -- true 2>"$tmp/stderr4" || fail "true failed"
grep -q "wrote no outputs" "$tmp/stderr4" || fail "no-output note"
[ ! -e "$tmp/none" ] || fail "empty folder left behind"

echo "-- a program that never calls tscope_finalize still gets its outputs"
"$ts" run --no-summary -o "$tmp/forgot" -- "$forgetful" 2>"$tmp/stderr6" || fail "forgetful failed"
grep -q "exited without tscope_finalize(); finalizing now" "$tmp/stderr6" || fail "at-exit note: $(cat "$tmp/stderr6")"
grep -q '"name":"forgotten","created":1,"calls":1' "$tmp/forgot/profile.json" || fail "at-exit profile"

echo "-- unwritable output folder: one error line, the program still succeeds"
TASKSCOPE_OUTPUT_DIR=/proc/taskscope-forbidden/x "$example" 5000 1 >/dev/null 2>"$tmp/stderr5" \
  || fail "program failed because of the output folder"
grep -q "taskscope: error: cannot create output folder /proc/taskscope-forbidden/x" "$tmp/stderr5" \
  || fail "output folder error: $(cat "$tmp/stderr5")"

if [ $has_jansson = 0 ]; then
  echo "SKIPPED report checks: taskscope was built without libjansson-dev (./scripts/setup installs it)"
  exit 0
fi

echo "-- report re-renders the golden profile exactly"
"$ts" report "$src/tests/golden/profile.json" >"$tmp/report.txt"
diff -u "$src/tests/golden/summary.txt" "$tmp/report.txt" || fail "report differs from golden summary"
"$ts" report --sort calls --rows 1 "$tmp/out" >"$tmp/r2"
[ "$(sed -n 5p "$tmp/r2" | awk '{print $1}')" = sort ] || fail "sort by calls: $(cat "$tmp/r2")"
grep -q "^\.\.\. 3 more task types" "$tmp/r2" || fail "rows limit"
"$ts" report --tree "$tmp/out" | grep -q "leaf_sort  calls 64" || fail "report --tree"
"$ts" report --dot "$tmp/out" | grep -q "^digraph taskscope" || fail "report --dot"

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
echo "test_cli: all checks passed"

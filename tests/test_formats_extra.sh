#!/usr/bin/env bash
# test_formats_extra.sh - a format is one file and one list entry: the test
# build's taskscope-extra has two more (tests/formats/counts.c, an output
# format, and stays.c, a trace format, listed by tests/CMakeLists.txt), and
# `formats`, `run`, `convert` and their help find them, with the same words
# everywhere (test_formats.sh, without the docs); a program built with them
# writes counts.txt, taskscope-extra converts its trace to stays.txt.  The
# build's own taskscope has neither.
#   usage: test_formats_extra.sh TASKSCOPE_EXTRA TASKTREE_EXTRA TASKSCOPE SOURCE_DIR
set -u
ts=$1
prog=$2
base=$3
src=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$ts" formats >"$tmp/formats" || fail "formats: status $?"
grep -q '^| `counts`, `calls` | `counts.txt` | no | yes | ' "$tmp/formats" \
  || fail "formats has no counts row: $(cat "$tmp/formats")"
grep -q '^| `stays`, `slices` | `stays.txt` | - | rank by rank | ' "$tmp/formats" \
  || fail "formats has no stays row: $(cat "$tmp/formats")"
"$base" formats | grep -q 'counts\|stays' && fail "the build's taskscope has the test formats"
st=0; "$base" run --trace=stays 2>/dev/null || st=$?
[ $st = 2 ] || fail "the build's taskscope took --trace stays: $st"

# run, convert and the help take every word of every format, the extra ones too
bash "$src/tests/test_formats.sh" "$ts" "$src" 0 || fail "test_formats.sh on taskscope-extra"
"$ts" run --help | grep -q " counts, tasks " || fail "run --help: $("$ts" run --help | grep -A3 outputs)"
"$ts" convert --help | grep -q "^  stays " || fail "convert --help names no stays"

# end to end: the program writes counts.txt, run converts its trace into stays.txt
"$ts" run -q --no-preload --trace=slices --outputs=json,calls -o "$tmp/out" -- "$prog" 20000 2 \
  >/dev/null 2>"$tmp/run.err" || fail "run: $(cat "$tmp/run.err")"
[ -s "$tmp/out/stays.txt" ] || fail "run wrote no stays.txt: $(ls "$tmp/out") $(cat "$tmp/run.err")"
[ -f "$tmp/out/trace.json" ] && fail "run converted to chrome, not asked for"
grep -q '^sort [1-9]' "$tmp/out/counts.txt" || fail "counts.txt: $(cat "$tmp/out/counts.txt" 2>&1)"
[ "$(wc -l <"$tmp/out/counts.txt")" = 4 ] || fail "counts.txt: not 4 types: $(cat "$tmp/out/counts.txt")"
awk 'NF != 4 || $3 < $2 { bad = 1 } END { exit bad }' "$tmp/out/stays.txt" \
  || fail "stays.txt: a line not THREAD BEGIN END TYPE: $(head -3 "$tmp/out/stays.txt")"
# convert finds them too: the trace again, counts from the saved profile
"$ts" convert -q "$tmp/out" --to STAYS -o "$tmp/again.txt" || fail "convert --to STAYS"
cmp -s "$tmp/out/stays.txt" "$tmp/again.txt" || fail "convert --to stays: not run's stays.txt"
if "$ts" convert -q "$tmp/out/profile.json" --to calls -o "$tmp/counts.txt" 2>"$tmp/e"; then
  cmp -s "$tmp/out/counts.txt" "$tmp/counts.txt" || fail "convert --to calls: not run's counts.txt"
else
  grep -q "without JSON reading\|jansson" "$tmp/e" || fail "convert --to calls: $(cat "$tmp/e")"
fi

if [ $fails -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "ok: counts and stays, each one file and one entry, found by formats, run, convert and --help"

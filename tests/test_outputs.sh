#!/usr/bin/env bash
# test_outputs.sh - every output valid or absent (issue 30, point 4):
#  - a full disk, simulated by a file size limit (RLIMIT_FSIZE, `ulimit -f`:
#    it holds for root too, where a read-only folder does not), around
#    `taskscope convert` and `taskscope run`: each trace format leaves its
#    files whole or nothing (no temporary file either), says which file and
#    why in one line, and `run` lists no file that failed;
#  - task types named with every byte value 0x01..0xFF (tests/bytenames.c):
#    profile.json, hatchet.json and the Chrome trace are valid UTF-8 and
#    valid JSON, the names stay distinct, and report, diff and merge read
#    them.
# usage: test_outputs.sh TASKSCOPE TASKTREE BYTENAMES HAVE_JANSSON
set -uo pipefail
ts=$1 example=$2 bytenames=$3 has_jansson=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# valid UTF-8 (iconv refuses anything else) and valid JSON (jq)
valid_json() { iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1 && jq empty "$1" >/dev/null 2>&1; }
# no temporary file left in a folder
no_tmp() { ! ls -a "$1" | grep -q '\.tmp$'; }

echo "-- a trace converted under a file size limit: nothing left, the file and the reason said"
"$ts" run -q --trace=on -o "$tmp/tr" -- "$example" 200000 2 >/dev/null 2>"$tmp/tr.err" \
  || fail "traced run: $(cat "$tmp/tr.err")"
# limited KIB OUTFILE COMMAND...: the command under a file size limit, its
# stderr through a pipe into OUTFILE (the limit would cut a file); its status
limited() {
  local kib=$1 out=$2
  shift 2
  (
    trap '' XFSZ
    ulimit -f "$kib"
    exec "$@" 2>&1 >/dev/null
  ) | cat >"$out"
  return "${PIPESTATUS[0]}"
}
for to in chrome timeline paraver otf2 gz; do
  case $to in
    chrome) args=(--to chrome) file=trace.json left="trace.json" ;;
    timeline) args=(--to timeline) file=timeline.csv left="timeline.csv timeline.gp timeline.svg" ;;
    paraver) args=(--to paraver) file=trace.prv left="trace.prv trace.pcf trace.row" ;;
    otf2) args=(--to otf2) file=trace-otf2 left="trace-otf2" ;;
    gz) args=(--to chrome -o "$tmp/tr/trace.json.gz") file=trace.json.gz left="trace.json.gz" ;;
  esac
  kib=1
  [ $to = otf2 ] && kib=0 # each of the archive's files is smaller than 1 KiB
  limited $kib "$tmp/$to.err" "$ts" convert "$tmp/tr/trace.tsct" "${args[@]}"
  status=$?
  if grep -q "built without" "$tmp/$to.err"; then
    echo "SKIPPED $to: $(cat "$tmp/$to.err")"
    continue
  fi
  [ "$status" = 1 ] || fail "$to: status $status: $(cat "$tmp/$to.err")"
  [ "$(wc -l <"$tmp/$to.err")" = 1 ] || fail "$to: not one line: $(cat "$tmp/$to.err")"
  case $to in
    otf2) grep -q "^taskscope convert: cannot write the OTF2 archive $tmp/tr/trace-otf2: " \
            "$tmp/$to.err" || fail "$to: message: $(cat "$tmp/$to.err")" ;;
    *) grep -qx "taskscope convert: writing $tmp/tr/$file failed: File too large" "$tmp/$to.err" \
         || fail "$to: message: $(cat "$tmp/$to.err")" ;;
  esac
  for f in $left; do
    [ ! -e "$tmp/tr/$f" ] || fail "$to: $f left behind"
  done
  no_tmp "$tmp/tr" || fail "$to: temporary file left: $(ls "$tmp/tr")"
  grep -q "the output failed" "$tmp/$to.err" && fail "$to: no file, no reason"
done
# a picture gnuplot cannot write whole (here the data fits, the PNG does
# not; a slower build's bigger trace may not fit at all) is removed and
# said, never announced as drawn
if command -v gnuplot >/dev/null; then
  limited 4 "$tmp/png.err" "$ts" convert "$tmp/tr/trace.tsct" --to timeline
  if grep -q "gnuplot failed on $tmp/tr/timeline.gp" "$tmp/png.err"; then
    grep -q "timeline.svg drawn" "$tmp/png.err" && fail "png: failed and said drawn: $(cat "$tmp/png.err")"
    [ ! -e "$tmp/tr/timeline.svg" ] || fail "png: partial timeline.svg left"
  elif grep -q "timeline.svg drawn" "$tmp/png.err"; then
    [ -s "$tmp/tr/timeline.svg" ] || fail "png: said drawn, not there"
  fi
  rm -f "$tmp/tr/timeline".*
fi
# without the limit every one of them is written, whole
"$ts" convert -q "$tmp/tr/trace.tsct" --to chrome 2>"$tmp/conv.err" || fail "convert: $(cat "$tmp/conv.err")"
valid_json "$tmp/tr/trace.json" || fail "trace.json is not valid JSON"

echo "-- taskscope run under a file size limit: what failed is said, absent and not listed"
limited 8 "$tmp/full.err" "$ts" run --no-summary --trace=chrome,timeline -o "$tmp/full" \
  -- "$example" 400000 2
grep -q "writing $tmp/full/trace.json failed: File too large" "$tmp/full.err" \
  || fail "full: trace.json's failure: $(cat "$tmp/full.err")"
grep -q "the output failed" "$tmp/full.err" && fail "full: a failure without file or reason"
no_tmp "$tmp/full" || fail "full: temporary file left: $(ls "$tmp/full")"
for f in $(sed -n "s|.*writing $tmp/full/\([^ ]*\) failed.*|\1|p" "$tmp/full.err"); do
  [ ! -e "$tmp/full/$f" ] || fail "full: failed $f left behind"
  grep "outputs of" "$tmp/full.err" | grep -q " $f\b" && fail "full: failed $f listed"
done
for f in "$tmp"/full/*.json; do
  [ -e "$f" ] || continue
  valid_json "$f" || fail "full: $f is not valid JSON"
done
[ ! -e "$tmp/full/timeline.csv" ] || [ -s "$tmp/full/timeline.gp" ] \
  || fail "full: timeline.csv without its script"

echo "-- a picture's data that failed: its script is not written (it would draw nothing)"
limited 1 "$tmp/small.err" "$ts" run --no-summary -o "$tmp/small" -- "$example" 200000 2
pairs=0
for pair in concurrency.csv:concurrency.gp threads.csv:heatmap.gp durations.csv:scatter.gp; do
  data=${pair%%:*} script=${pair#*:}
  grep -q "writing $tmp/small/$data failed: File too large" "$tmp/small.err" || continue
  pairs=$((pairs + 1))
  [ ! -e "$tmp/small/$script" ] || fail "small: $script written without its $data"
  [ ! -e "$tmp/small/${script%.gp}.svg" ] || fail "small: ${script%.gp}.svg drawn without its $data"
  grep "outputs of" "$tmp/small.err" | grep -q " $script\b" && fail "small: $script listed"
done
# concurrency.csv and threads.csv of this run are over 1 KiB on every machine
# (a row per time bin and type or thread), their scripts under it
[ $pairs -ge 1 ] || fail "small: no data file failed under a 1 KiB limit: $(cat "$tmp/small.err")"

echo "-- names of every byte value: valid JSON everywhere, distinct, read back"
"$ts" run -q --trace=chrome --outputs=json,hatchet -o "$tmp/bytes" -- "$bytenames" \
  >/dev/null 2>"$tmp/bytes.err" || fail "bytenames: $(cat "$tmp/bytes.err")"
for f in profile.json hatchet.json trace.json; do
  valid_json "$tmp/bytes/$f" || fail "bytes: $f is not valid UTF-8 JSON"
done
types=264 # 255 one-byte names, one of all 255 bytes, eight others (bytenames.c)
n=$(jq '[.types[].name] | length' "$tmp/bytes/profile.json")
[ "$n" = $types ] || fail "bytes: profile.json has $n types, want $types"
n=$(jq '[.types[].name] | unique | length' "$tmp/bytes/profile.json")
m=$(jq '[.types[].name] | length' "$tmp/bytes/profile.json")
[ "$n" = "$m" ] || fail "bytes: profile.json: $n distinct names of $m"
n=$(jq '[.traceEvents[] | select(.ph == "B") | .name] | unique | length' "$tmp/bytes/trace.json")
[ "$n" = $types ] || fail "bytes: trace.json has $n distinct task names, want $types"
# the written form (docs/output-formats.md): a byte that is not UTF-8 as
# U+EF00 + its value, valid UTF-8 as it is, control characters \u00XX
for name in 'caf\uefe9' 'caf\u00e9' 'caf\uefe9x' 'snow\uefe2\uef98' 'snow\u2603' \
  'overlong\uefc0\uefaf' 'b\u0001' 'b\u007f' 'b\uef80' 'b\uefff' 'quote"back\\slash'; do
  want=1
  [ "$name" = 'caf\uefe9x' ] && want=0
  n=$(jq "[.types[] | select(.name == \"$(printf '%s' "$name" | sed 's/"/\\"/g')\")] | length" \
    "$tmp/bytes/profile.json")
  [ "$n" = $want ] || fail "bytes: $n types named $name, want $want"
done
grep -q 'caf\\uefe9' "$tmp/bytes/profile.json" || fail "bytes: Latin-1 é not written \\uefe9"
if [ "$has_jansson" = 1 ]; then
  "$ts" report --rows 0 "$tmp/bytes" >"$tmp/report.out" 2>"$tmp/report.err" \
    || fail "bytes: report: $(cat "$tmp/report.err")"
  grep -q "quote\"back\\\\slash" "$tmp/report.out" || fail "bytes: report lacks a name"
  "$ts" diff "$tmp/bytes" "$tmp/bytes" >/dev/null 2>"$tmp/diff.err" \
    || fail "bytes: diff: $(cat "$tmp/diff.err")"
  # merge reads the ranks' profiles and writes the global view's from them
  mkdir "$tmp/job" && cp -r "$tmp/bytes" "$tmp/job/rank-0" && cp -r "$tmp/bytes" "$tmp/job/rank-1"
  "$ts" merge -q -o "$tmp/merged" "$tmp/job" >/dev/null 2>"$tmp/merge.err" \
    || fail "bytes: merge: $(cat "$tmp/merge.err")"
  valid_json "$tmp/merged/profile.json" || fail "bytes: merged profile.json is not valid UTF-8 JSON"
  n=$(jq '[.types[].name] | unique | length' "$tmp/merged/profile.json")
  [ "$n" = $types ] || fail "bytes: merged profile.json has $n distinct names, want $types"
else
  echo "SKIPPED report and diff: taskscope was built without libjansson-dev"
fi

[ $fails = 0 ] || exit 1
echo "test_outputs: ok"

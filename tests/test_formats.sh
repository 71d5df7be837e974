#!/usr/bin/env bash
# test_formats.sh - one list of formats, the same words everywhere: the
# tables `taskscope formats` prints from the list (src/core/formats.h) are
# the tables of docs/output-formats.md and docs/tracing.md, row for row;
# every word of every format is taken by `run --outputs` / `run --trace`
# (the configuration's words) and by `convert --to` where it converts;
# every format is named in `run --help` and `convert --help`, and in the
# accepted values of docs/configuration.md.
#   usage: test_formats.sh TASKSCOPE SOURCE_DIR [DOCS: 0 to skip the docs]
set -u
ts=$1
src=$2
docs=${3:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$ts" formats >"$tmp/formats" || fail "taskscope formats: status $?"
# the two tables: rows after the heading that names each
awk '/^output formats/ { t = "out" } /^trace formats/ { t = "trace" }
     /^\| `/ { print > (dir "/" t ".rows") }' dir="$tmp" "$tmp/formats"
[ -s "$tmp/out.rows" ] && [ -s "$tmp/trace.rows" ] || fail "formats printed no table: $(cat "$tmp/formats")"

# A table of a doc: the rows below the header line the list's table has.
doc_rows() { # doc, header
  awk -v h="$2" '$0 == h { on = 1; next } on && /^\|---/ { next } on && /^\| / { print; next }
                 on { on = 0 }' "$1"
}
if [ "$docs" = 1 ]; then
  for t in out:docs/output-formats.md trace:docs/tracing.md; do
    kind=${t%%:*} doc=$src/${t#*:}
    header=$(grep -m1 -B2 -F "$(head -1 "$tmp/$kind.rows")" "$tmp/formats" | head -1)
    doc_rows "$doc" "$header" >"$tmp/$kind.doc"
    diff "$tmp/$kind.rows" "$tmp/$kind.doc" >"$tmp/diff" \
      || fail "${t#*:}'s table differs from 'taskscope formats' (< the list, > the doc):
$(cat "$tmp/diff")"
  done
fi

# The words of a row: `a`, `b` in its first column.
row_words() { sed 's/^| \([^|]*\) |.*/\1/; s/[`,]//g' <<<"$1"; }
conf=$src/docs/configuration.md
while IFS= read -r row; do
  words=$(row_words "$row")
  name=${words%% *}
  from_profile=$(awk -F' [|] ' '{ print $4 }' <<<"$row")
  for w in $words; do
    st=0; "$ts" run --outputs="$w" 2>"$tmp/e" || st=$?
    [ $st = 2 ] && grep -qx "taskscope run: no program given" "$tmp/e" \
      || fail "run --outputs $w: $st $(head -1 "$tmp/e")"
    if [ "$from_profile" = yes ]; then
      st=0; "$ts" convert "$tmp/none.json" --to "$w" 2>"$tmp/e" || st=$?
      [ $st = 1 ] || fail "convert --to $w (an output format from a profile): $st $(cat "$tmp/e")"
    fi
    [ "$docs" = 1 ] && { grep '^| `TASKSCOPE_OUTPUTS`' "$conf" | grep -q "[ :,]$w[,|]" \
      || fail "docs/configuration.md: TASKSCOPE_OUTPUTS lacks $w"; }
  done
  "$ts" run --help | grep -q "[ ,]$name\([ ,]\|$\)" || fail "run --help names no output format $name"
  if [ "$from_profile" = yes ]; then
    "$ts" convert --help | grep -q "^  $name " || fail "convert --help names no $name"
  fi
done <"$tmp/out.rows"

while IFS= read -r row; do
  words=$(row_words "$row")
  name=${words%% *}
  for w in $words; do
    st=0; "$ts" run --trace="$w" 2>"$tmp/e" || st=$?
    [ $st = 2 ] && grep -qx "taskscope run: no program given" "$tmp/e" \
      || fail "run --trace $w: $st $(head -1 "$tmp/e")"
    st=0; "$ts" convert "$tmp/none" --to "$w" 2>"$tmp/e" || st=$?
    [ $st = 1 ] && grep -q "no such file" "$tmp/e" \
      || fail "convert --to $w: $st $(cat "$tmp/e")"
    [ "$docs" = 1 ] && { grep '^| `TASKSCOPE_TRACE`' "$conf" | grep -q "[ :,]$w[,|]" \
      || fail "docs/configuration.md: TASKSCOPE_TRACE lacks $w"; }
  done
  "$ts" run --help | grep -q "[ ,]$name\([ ,]\|$\)" || fail "run --help names no trace format $name"
  "$ts" convert --help | grep -q "^  $name " || fail "convert --help names no $name"
done <"$tmp/trace.rows"

# and a word of no format is refused by each
st=0; "$ts" run --trace=vampir 2>/dev/null || st=$?
[ $st = 2 ] || fail "run --trace vampir: $st"
st=0; "$ts" run --outputs=pdf 2>/dev/null || st=$?
[ $st = 2 ] || fail "run --outputs pdf: $st"
st=0; "$ts" convert "$tmp/none" --to vampir 2>/dev/null || st=$?
[ $st = 2 ] || fail "convert --to vampir: $st"

if [ $fails -gt 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "ok: $(wc -l <"$tmp/out.rows") output and $(wc -l <"$tmp/trace.rows") trace formats, the same words in run, convert, help and docs"

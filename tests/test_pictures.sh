#!/usr/bin/env bash
# test_pictures.sh - the pictures tell the truth (issue 31, point 1), read
# from the gnuplot scripts of a run with 20 working and 2 waiting task types
# (tests/pictures_types.c): concurrency.gp, scatter.gp, the trace's
# timeline.gp (and, with jansson, the merged global view's ranks.gp and
# messages.gp):
#  - no two drawn series share a colour, in any script;
#  - a type has the same colour in every script (a waiting type: in the
#    scripts made from the profile; a trace carries no wait marks, so in
#    timeline.gp it has the work colour of its rank, which no other type
#    has);
#  - waiting types are drawn in greys (R = G = B), working types never;
#  - the 12 largest types by self time have their own colours, the rest are
#    one "other (10 types)";
#  - legends are below the plot and at most a quarter of its height (the
#    rows the script's columns make, at 14 px a row and 16 around);
#  - axes say their units; the scatter says which time it plots; no power
#    axis on a run shorter than two sampling periods; the colour bar of
#    messages.gp has short labels;
#  - with gnuplot, every script draws its picture without an error.
# usage: test_pictures.sh TASKSCOPE PICTURES_TYPES HAVE_JANSSON
set -uo pipefail
ts=$1 program=$2 has_jansson=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

echo "-- a run with 20 working and 2 waiting types, traced, sampled once a second"
TASKSCOPE_DURATION_SAMPLE=1 "$ts" run -q --trace=on --sample-ms 1000 -o "$tmp/run" -- "$program" \
  >/dev/null 2>"$tmp/run.err" \
  || fail "run: $(cat "$tmp/run.err")"
"$ts" convert "$tmp/run/trace.tsct" --to timeline >/dev/null 2>"$tmp/conv.err" \
  || fail "convert --to timeline: $(cat "$tmp/conv.err")"
for gp in concurrency scatter timeline heatmap; do
  [ -s "$tmp/run/$gp.gp" ] || fail "$gp.gp not written"
done

# colours SCRIPT -> "title<TAB>#RRGGBB" per titled series (empty plots for
# the key included), in the script's order
colours() {
  grep -o "lc rgb '#[0-9A-Fa-f]\{6\}' title '[^']*'" "$1" |
    sed "s/lc rgb '\(#[0-9A-Fa-f]*\)' title '\(.*\)'/\2\t\1/"
}
grey() { # #RRGGBB -> 0 when R = G = B
  local c=${1#\#}
  [ "${c:0:2}" = "${c:2:2}" ] && [ "${c:2:2}" = "${c:4:2}" ]
}

# the 12 largest types by self time, as types.csv has them (ties: the lower id)
largest=$(awk -F, 'NR > 1 && $2 != "" {print $9, $1, $2}' "$tmp/run/types.csv" |
  sort -k1,1gr -k2,2n | head -12 | cut -d' ' -f3 | sort | tr '\n' ' ')
case $largest in *wait-barrier*wait-taskwait*) ;; # sorted by name
  *) fail "the waits are not among the 12 largest types: $largest" ;; esac
for gp in concurrency scatter timeline; do
  colours "$tmp/run/$gp.gp" >"$tmp/$gp.pairs"
  n=$(wc -l <"$tmp/$gp.pairs")
  [ "$n" -ge 13 ] || fail "$gp.gp: $n coloured series, want 12 types and other: $(cat "$tmp/$gp.pairs")"
  dup=$(cut -f2 "$tmp/$gp.pairs" | sort | uniq -d)
  [ -z "$dup" ] || fail "$gp.gp: series share colours $dup: $(cat "$tmp/$gp.pairs")"
  grouped=$(sed -n 's/^other[a-z ]*(\([0-9]*\) types)	.*/\1/p' "$tmp/$gp.pairs" | awk '{n += $1} END {print n + 0}')
  [ "$grouped" = 10 ] || fail "$gp.gp: $grouped types grouped as other, want 10: $(cat "$tmp/$gp.pairs")"
  own=$(grep -vc "^other" "$tmp/$gp.pairs")
  [ "$own" = 12 ] || fail "$gp.gp: $own types with their own colour, want 12"
  # the 12 largest by self time (types.csv) and no other
  got=$(grep -v "^other" "$tmp/$gp.pairs" | cut -f1 | sort | tr '\n' ' ')
  [ "$got" = "$largest" ] || fail "$gp.gp: own colours for $got, the 12 largest are $largest"
  while IFS=$'\t' read -r title rgb; do
    case $title in
      wait-*) [ $gp = timeline ] || grey "$rgb" || fail "$gp.gp: waiting $title in $rgb, not grey" ;;
      other\ waiting*) grey "$rgb" || fail "$gp.gp: $title in $rgb, not grey" ;;
      *) grey "$rgb" && fail "$gp.gp: $title (work) in grey $rgb" ;;
    esac
  done <"$tmp/$gp.pairs"
done
# the same colour for a type everywhere
while IFS=$'\t' read -r title rgb; do
  for gp in scatter timeline; do
    [ $gp = timeline ] && [ "${title#wait-}" != "$title" ] && continue
    [ $gp = timeline ] && [ "${title#other waiting}" != "$title" ] && continue
    case $title in # "other (N types)": N may differ (the trace's has the waits)
      other\ \(*) other=$(awk -F'\t' '$1 ~ /^other \(/ {print $2}' "$tmp/$gp.pairs") ;;
      *) other=$(awk -F'\t' -v t="$title" '$1 == t {print $2}' "$tmp/$gp.pairs") ;;
    esac
    [ "$other" = "$rgb" ] || fail "$title: $rgb in concurrency.gp, '$other' in $gp.gp"
  done
done <"$tmp/concurrency.pairs"

echo "-- legends: below the plot, at most a quarter of the picture"
for gp in concurrency scatter timeline; do
  f=$tmp/run/$gp.gp
  grep -q "^set key below" "$f" || fail "$gp.gp: the legend is not below the plot"
  grep -q "outside right" "$f" && fail "$gp.gp: a legend beside the plot"
  read -r width height < <(sed -n "s/^set terminal [a-z]* size \([0-9]*\),\([0-9]*\).*/\1 \2/p" "$f")
  cols=$(sed -n "s/^set key .*maxcols \([0-9]*\).*/\1/p" "$f")
  entries=$(wc -l <"$tmp/$gp.pairs")
  longest=$(cut -f1 "$tmp/$gp.pairs" | awk '{ if (length($0) > m) m = length($0) } END { print m }')
  [ -n "$cols" ] && [ -n "$height" ] || { fail "$gp.gp: no size or columns"; continue; }
  rows=$(((entries + cols - 1) / cols))
  [ $((cols * (longest * 7 + 60))) -le $((width - 100)) ] \
    || fail "$gp.gp: $cols columns of $longest characters do not fit $width px"
  [ $((4 * (rows * 14 + 16))) -le "$height" ] \
    || fail "$gp.gp: $rows legend rows in $height px: more than a quarter"
done

echo "-- axes, titles, series without data"
c=$tmp/run/concurrency.gp
grep -q "^set xlabel 'time (s)'" "$c" || fail "concurrency.gp: x axis without unit"
grep -q "^set ylabel 'threads" "$c" || fail "concurrency.gp: y axis"
rows=$(grep -vc '^#' "$tmp/run/samples.csv" 2>/dev/null || echo 0)
if [ "$rows" -lt 3 ]; then # header + one sample: no line to draw
  grep -q "y2label\|power\|thread cap" "$c" && fail "concurrency.gp: power or cap with $((rows - 1)) samples"
fi
s=$tmp/run/scatter.gp
grep -q "^set title 'elapsed time of each task, begin to end" "$s" || fail "scatter.gp: which time"
grep -q "^set ylabel 'elapsed time, begin to end (ms)'" "$s" || fail "scatter.gp: y axis"
points=$(grep -vc '^#\|^end_s' "$tmp/run/durations.csv")
[ "$points" = 168 ] || fail "durations.csv: $points points of 168 tasks, all sampled"
grep -q "^set xlabel 'time (ms)'" "$tmp/run/timeline.gp" || fail "timeline.gp: x axis"
grep -q "^set xlabel 'time (s)'" "$tmp/run/heatmap.gp" || fail "heatmap.gp: x axis"
grep -q "^set title 'rank 0: threads x time, the fraction of each bin a thread was working (waits excluded)'" \
  "$tmp/run/heatmap.gp" || fail "heatmap.gp: title without waits excluded"

if [ "$has_jansson" = 1 ]; then
  echo "-- the global view of the run: ranks.gp, messages.gp"
  "$ts" merge -q -o "$tmp/glob" "$tmp/run" >/dev/null 2>"$tmp/merge.err" \
    || fail "merge: $(cat "$tmp/merge.err")"
  grep -q "^set format cb '%.1s %cB'" "$tmp/glob/messages.gp" || fail "messages.gp: colour bar labels"
  grep -q "^set xlabel 'time (s)'" "$tmp/glob/ranks.gp" || fail "ranks.gp: x axis"
  grep -q "^set cblabel 'working threads" "$tmp/glob/ranks.gp" || fail "ranks.gp: colour bar"
  grep -q "^set title 'working threads per rank over time (waits excluded" "$tmp/glob/ranks.gp" || fail "ranks.gp: title"
else
  echo "SKIPPED the global view: built without jansson (merge reads profile.json)"
fi

if command -v gnuplot >/dev/null; then
  echo "-- every script draws its picture"
  for gp in concurrency scatter timeline heatmap; do
    rm -f "$tmp/run/$gp.svg"
    (cd "$tmp/run" && gnuplot "$gp.gp") >"$tmp/$gp.gnuplot" 2>&1 || fail "gnuplot $gp.gp: $(cat "$tmp/$gp.gnuplot")"
    [ -s "$tmp/run/$gp.svg" ] || fail "$gp.svg not drawn"
  done
  # as drawn: below the plot's frame (tic labels, the x label: 50 px, and
  # the legend) at most a quarter of the picture and those 50 px
  for gp in concurrency scatter timeline; do
    height=$(sed -n "s/^set terminal [a-z]* size [0-9]*,\([0-9]*\).*/\1/p" "$tmp/run/$gp.gp")
    at=$(cd "$tmp/run" && gnuplot -e "load '$gp.gp'; print GPVAL_TERM_YMIN, GPVAL_TERM_YSIZE" 2>&1 >/dev/null | tail -1)
    awk -v at="$at" -v h="$height" 'BEGIN { split(at, v, " "); exit !(v[2] > 0 && v[1] / v[2] * h - 50 <= h / 4) }' \
      || fail "$gp.svg: the legend below the plot takes more than a quarter of $height px ($at)"
  done
  if [ "$has_jansson" = 1 ]; then
    for gp in ranks messages; do
      (cd "$tmp/glob" && gnuplot "$gp.gp") >"$tmp/$gp.gnuplot" 2>&1 || fail "gnuplot $gp.gp: $(cat "$tmp/$gp.gnuplot")"
      [ -s "$tmp/glob/$gp.svg" ] || fail "$gp.svg not drawn"
    done
  fi
else
  echo "SKIPPED drawing: gnuplot is not installed"
fi

[ "$fails" = 0 ] && echo "test_pictures: all passed"
exit $((fails > 0))

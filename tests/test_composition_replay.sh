#!/usr/bin/env bash
# test_composition_replay.sh BENCH_COMPOSITION - the composition benchmark's
# analysis on synthetic measurements (TSCOPE_BENCH_REPLAY): configurations
# that compose exactly give a relative error of 0, one made 10% slower gives
# 1/11, and the median of the repetitions ignores a disturbed one; with a
# contention table the contention-aware operators predict what it says.
set -euo pipefail
bench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# ns per element of the components; every configuration is what the
# composition operators say, except tpool2(inc), 10% slower
awk 'BEGIN {
  OFS = "\t"; print "# configuration", "n", "repetition", "ns_per_element"
  split("nop inc qsort loop(nop) loop(inc) loop(qsort) tpool2(nop) tpool2(inc) tpool2(qsort) pipe(qsort,nop) pipe(qsort,inc) pipe(inc,qsort) pipe(inc,inc) pipe(inc,nop) pipe(tpool1(qsort),tpool1(inc)) tpool1(pipe(qsort,inc)) pipe(tpool2(qsort),tpool2(inc)) tpool2(pipe(qsort,inc))", cfg, " ")
  for (n = 16384; n <= 262144; n *= 2) {
    nop = 10; inc = 100 + 0.25 * n; qs = 1000 + 6 * n * log(n) / log(2)
    v["nop"] = nop; v["inc"] = inc; v["qsort"] = qs
    v["loop(nop)"] = nop; v["loop(inc)"] = inc; v["loop(qsort)"] = qs
    v["tpool2(nop)"] = nop / 2; v["tpool2(inc)"] = 1.1 * inc / 2; v["tpool2(qsort)"] = qs / 2
    v["pipe(qsort,nop)"] = qs; v["pipe(qsort,inc)"] = qs; v["pipe(inc,qsort)"] = qs
    v["pipe(inc,inc)"] = inc; v["pipe(inc,nop)"] = inc
    v["pipe(tpool1(qsort),tpool1(inc))"] = qs; v["tpool1(pipe(qsort,inc))"] = qs
    v["pipe(tpool2(qsort),tpool2(inc))"] = qs / 2; v["tpool2(pipe(qsort,inc))"] = qs / 2
    for (c = 1; c <= 18; c++) {
      x = v[cfg[c]]
      printf "%s\t%d\t0\t%.17g\n", cfg[c], n, x
      printf "%s\t%d\t1\t%.17g\n", cfg[c], n, 0.999 * x
      printf "%s\t%d\t2\t%.17g\n", cfg[c], n, 3 * x   # a disturbed run
    }
  }
}' >"$tmp/raw.tsv"

TSCOPE_BENCH_REPLAY="$tmp/raw.tsv" "$bench" 2 >"$tmp/out.json" 2>"$tmp/table.txt" || fail "replay: $(cat "$tmp/table.txt")"
n=$(grep -c '"metric":"rel_error"' "$tmp/out.json")
[ "$n" = 18 ] || fail "expected 18 configurations, got $n"
# the median of (x, 0.999 x, 3 x) is x: the exact compositions are exact
awk -F'"value":' '/"metric":"rel_error"/ {
  split($0, a, "\"variant\":\""); split(a[2], b, "\""); name = b[1]
  split($2, c, ","); v = c[1] + 0
  if (name == "tpool2(inc)") { if (v < 0.0909 || v > 0.0910) { print "tpool2(inc): " v; bad = 1 } }
  else if (v > 1e-9) { print name ": " v; bad = 1 }
} END { exit bad }' "$tmp/out.json" || fail "relative errors (above)"

# with a contention table (FILE.contention): inc runs 1.1x slower next to a
# stream and slows one as much as a stream does, nop neither; qsort is not
# calibrated.  Two inc workers are then predicted 1.1 * inc / 2 (exactly
# what tpool2(inc) measured), each stage of pipe(inc,inc) 1.1 * inc (10%
# above the measured inc), and nothing else changes.
cat >"$tmp/raw.tsv.contention" <<'END'
# component	kind	n	value
-	slows:stream	0	2
inc	alone	100000	1000
inc	stream:1	100000	1100
inc	slows:stream	100000	2
nop	alone	100000	10
nop	stream:1	100000	10
nop	slows:stream	100000	1
END
TSCOPE_BENCH_REPLAY="$tmp/raw.tsv" "$bench" 2 >"$tmp/out2.json" 2>"$tmp/table2.txt" || fail "replay with contention: $(cat "$tmp/table2.txt")"
n=$(grep -c '"metric":"rel_error"' "$tmp/out2.json")
[ "$n" = 18 ] || fail "with contention: expected 18 configurations, got $n"
grep -q 'inc    stream: slowdown 1.1, demand 1; cache: slowdown 1, demand 0; spin: slowdown 1, demand 0; handover 0 ns; writes 0' "$tmp/table2.txt" ||
  fail "contention table not printed: $(head -5 "$tmp/table2.txt")"
awk -F'"value":' '/"metric":"rel_error(_plain)?"/ {
  split($0, a, "\"variant\":\""); split(a[2], b, "\""); name = b[1]
  split($0, m, "\"metric\":\""); split(m[2], mm, "\""); metric = mm[1]
  split($2, c, ","); v = c[1] + 0
  want = 0
  if (name == "tpool2(inc)" && metric == "rel_error_plain") want = 1 / 11
  if (name == "pipe(inc,inc)" && metric == "rel_error") want = 0.1
  if (v < want - 1e-6 || v > want + 1e-6) { print name " " metric ": " v " (want " want ")"; bad = 1 }
} END { exit bad }' "$tmp/out2.json" || fail "relative errors with contention (above)"
grep -q '"variant":"within_cores","metric":"rel_error_worst","value":0.1,' "$tmp/out2.json" ||
  fail "worst within the cores: $(grep within_cores "$tmp/out2.json")"
rm "$tmp/raw.tsv.contention"

printf 'nop\t16384\t0\tx\n' >"$tmp/bad.tsv"
TSCOPE_BENCH_REPLAY="$tmp/bad.tsv" "$bench" 2 >/dev/null 2>"$tmp/err" && fail "bad file accepted"
grep -q "bad.tsv:1: expected" "$tmp/err" || fail "bad file message: $(cat "$tmp/err")"
printf 'inc\tfaster\t1\t1\n' >"$tmp/bad.tsv.contention"
cp "$tmp/raw.tsv" "$tmp/bad.tsv"
TSCOPE_BENCH_REPLAY="$tmp/bad.tsv" "$bench" 2 >/dev/null 2>"$tmp/err" && fail "bad contention file accepted"
grep -q "bad.tsv.contention:1: unknown kind 'faster'" "$tmp/err" || fail "bad contention file message: $(cat "$tmp/err")"
echo "test_composition_replay: 18 configurations, exact compositions within 1e-9, tpool2(inc) 1/11; with contention tpool2(inc) exact, pipe(inc,inc) 10%"

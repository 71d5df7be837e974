#!/usr/bin/env bash
# test_model_calibrate.sh - `taskscope model calibrate` on a tiny kernel
# (tests/calib_kernel.c: streams over an array of SIZE integers) and
# `taskscope model compose --contention` on what it wrote (issue 32):
#   (a) the measurements file has every line a calibration takes, values > 0,
#       the kernel's stdout kept out; compose prints the terms per component
#   (b) a kernel that fails, is killed or is not there: one line naming the
#       command and size, status 1, the measurements before it kept
#   (c) a corrupt measurements file: one line FILE:LINE, status 1
#   (d) --no-contention prints exactly what compose prints without it
# Only structure and signs are checked, never times (a sanitizer build runs
# the same checks, slower).
# usage: test_model_calibrate.sh TASKSCOPE KERNEL [SANITIZER]
set -euo pipefail
ts=$(realpath "$1") kernel=$(realpath "$2") sanitizer=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
name=$(basename "$kernel")
[ -z "$sanitizer" ] || echo "TSCOPE_SANITIZE=$sanitizer: the same checks (no time is compared)"

# has FILE COMPONENT KIND N: a line of those fields with a value > 0
has() {
  awk -F'\t' -v c="$2" -v k="$3" -v n="$4" '$1 == c && $2 == k && $3 == n && $4 + 0 > 0 {f = 1}
    END {exit !f}' "$1" || fail "$1 has no line '$2 $3 $4 VALUE>0': $(cat "$1")"
}

echo "-- (a) two sizes, one repetition, one probe copy; the size appended"
"$ts" model calibrate --sizes 200000,400000 --reps 1 --copies 1 -o "$tmp/k.cal" -- "$kernel" \
  >"$tmp/out" 2>"$tmp/err" || fail "calibrate: $(cat "$tmp/err")"
cat "$tmp/out"
[ ! -s "$tmp/err" ] || fail "calibrate said on stderr: $(cat "$tmp/err")"
grep -q '^sum ' "$tmp/out" && fail "the kernel's stdout reached calibrate's"
for n in 200000 400000; do
  for kind in alone stream:1 cache:1 spin:1 slows:stream slows:cache slows:spin; do has "$tmp/k.cal" "$name" $kind $n; done
  grep -qE "^ +$n +[0-9]" "$tmp/out" || fail "no table row for size $n"
done
for kind in slows:stream slows:cache slows:spin cores; do has "$tmp/k.cal" - $kind 0; done
awk -F'\t' -v n="$(getconf _NPROCESSORS_ONLN)" '$1 == "-" && $2 == "cores" && $4 != n {exit 1}' \
  "$tmp/k.cal" || fail "cores is not $(getconf _NPROCESSORS_ONLN)"
# nothing else: 7 lines per size, 4 of the machine (and the comment)
[ "$(grep -vc '^#' "$tmp/k.cal")" = 18 ] || fail "$(grep -vc '^#' "$tmp/k.cal") lines, expected 18"
# --copies 2: stream:2 and cache:2 too; {} put in place of the size
"$ts" model calibrate --sizes 100000 --reps 1 --copies 2 --name k2 -o "$tmp/k2.cal" -- \
  "$kernel" {} 100000 >/dev/null 2>"$tmp/err" || fail "calibrate --copies 2: $(cat "$tmp/err")"
for kind in alone stream:1 stream:2 cache:1 cache:2 spin:1 spin:2 slows:stream slows:cache slows:spin; do
  has "$tmp/k2.cal" k2 $kind 100000
done

echo "-- (a) compose with the measurements: the terms per component, the plain value"
printf '%s: 0.001 + 1e-09 * n^(1)\n' "$name" >"$tmp/models.txt"
"$ts" model compose "tpool(2, $name)" --models "$tmp/models.txt" --at n=300000 >"$tmp/plain" ||
  fail "compose"
"$ts" model compose "tpool(2, $name)" --models "$tmp/models.txt" --contention "$tmp/k.cal" \
  --at n=300000 >"$tmp/ct" 2>"$tmp/err" || fail "compose --contention: $(cat "$tmp/err")"
cat "$tmp/ct"
[ "$(head -1 "$tmp/ct")" = "$(head -1 "$tmp/plain")" ] || fail "the composed model differs"
grep -qE '^  at n=300000: [0-9.e+-]+  \(with contention\)$' "$tmp/ct" || fail "no value with contention"
grep -qE "^    $name: .*slowdown [0-9.e+-]+" "$tmp/ct" || fail "no terms of $name"
plain=$(sed -n 's/^  at n=300000: //p' "$tmp/plain")
grep -qx "    plain (no contention): $plain" "$tmp/ct" || fail "no plain value $plain"
awk -v p="$plain" '/with contention/ {v = $3 + 0} END {exit !(v >= p)}' "$tmp/ct" ||
  fail "the value with contention is below the plain one"

echo "-- (b) a kernel that fails at the second size: one line, the first size kept"
st=0
"$ts" model calibrate --sizes 200000,400000 --reps 1 --copies 1 -o "$tmp/f.cal" -- \
  "$kernel" {} 300000 >"$tmp/out" 2>"$tmp/err" || st=$?
[ $st = 1 ] || fail "status $st: $(cat "$tmp/err")"
grep -qx "calib_kernel: size 400000 above 300000" "$tmp/err" || fail "the kernel's stderr lost"
grep -v '^calib_kernel:' "$tmp/err" >"$tmp/e1" || true
[ "$(wc -l <"$tmp/e1")" = 1 ] || fail "$(cat "$tmp/e1")"
grep -qx "taskscope model calibrate: $kernel 400000 300000 (size 400000, first run): exit status 3; the 11 measurements before it are in $tmp/f.cal" \
  "$tmp/e1" || fail "message: $(cat "$tmp/e1")"
for kind in alone stream:1 cache:1 spin:1 slows:stream slows:cache slows:spin; do has "$tmp/f.cal" "$name" $kind 200000; done
grep -q "	400000	" "$tmp/f.cal" && fail "a line of the failed size"
st=0
"$ts" model calibrate --sizes 7 --reps 1 -o "$tmp/s.cal" -- sh -c 'kill -KILL $$' >/dev/null 2>"$tmp/err" || st=$?
[ $st = 1 ] && [ "$(cat "$tmp/err")" = "taskscope model calibrate: sh -c kill -KILL \$\$ 7 (size 7, first run): killed by signal 9 (Killed); the 4 measurements before it are in $tmp/s.cal" ] ||
  fail "killed: status $st: $(cat "$tmp/err")"
has "$tmp/s.cal" - cores 0
st=0
"$ts" model calibrate --sizes 7 -o "$tmp/n.cal" -- "$tmp/nosuch" >/dev/null 2>"$tmp/err" || st=$?
[ $st = 1 ] && [ "$(cat "$tmp/err")" = "taskscope model calibrate: cannot run $tmp/nosuch: No such file or directory" ] ||
  fail "not found: status $st: $(cat "$tmp/err")"
st=0
"$ts" model calibrate -o "$tmp/n.cal" -- "$kernel" >/dev/null 2>"$tmp/err" || st=$?
[ $st = 2 ] && grep -q "^taskscope model calibrate: needs --sizes" "$tmp/err" || fail "no --sizes: status $st: $(cat "$tmp/err")"

echo "-- (c) a corrupt measurements file: FILE:LINE, status 1"
printf '# by hand\n%s\talone\t1000\t0.5\n%s\tbogus\t1000\t1\n' "$name" "$name" >"$tmp/bad.cal"
st=0
"$ts" model compose "$name" --models "$tmp/models.txt" --contention "$tmp/bad.cal" --at n=1000 \
  >"$tmp/o" 2>"$tmp/err" || st=$?
[ $st = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
  grep -q "^taskscope model compose: $tmp/bad.cal:3: unknown kind 'bogus'" "$tmp/err" ||
  fail "corrupt file: status $st: $(cat "$tmp/err")"
printf '%s\tcache:1\t1000\t0.5\n' "$name" >"$tmp/none.cal"
st=0
"$ts" model compose "$name" --models "$tmp/models.txt" --contention "$tmp/none.cal" >"$tmp/o" 2>"$tmp/err" || st=$?
[ $st = 1 ] && [ "$(cat "$tmp/err")" = "taskscope model compose: $tmp/none.cal: contention: no component measured alone (kind 'alone')" ] ||
  fail "nothing alone: status $st: $(cat "$tmp/err")"

echo "-- (d) --no-contention: exactly compose's output without --contention"
for e in "$name" "tpool(2, $name)" "pipe($name, tpool(3, $name))"; do
  "$ts" model compose "$e" --models "$tmp/models.txt" --at n=1000 --at n=300000 >"$tmp/p1"
  "$ts" model compose "$e" --models "$tmp/models.txt" --contention "$tmp/k.cal" --no-contention \
    --at n=1000 --at n=300000 >"$tmp/p2"
  cmp "$tmp/p1" "$tmp/p2" || fail "$e: --no-contention differs: $(cat "$tmp/p2")"
  # (--no-contention even ignores a file that is not there)
  "$ts" model compose "$e" --models "$tmp/models.txt" --contention "$tmp/nosuch" --no-contention \
    --at n=1000 --at n=300000 | cmp - "$tmp/p1" || fail "$e: --no-contention read the file"
done
echo "PASS"

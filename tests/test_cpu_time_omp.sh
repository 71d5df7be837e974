#!/usr/bin/env bash
# test_cpu_time_omp.sh - taskscope run --cpu-time on tests/omp/cpu_time.c
# through OMPT: 4 untied tasks that spin 10 ms, taskyield, spin 10 ms more,
# and 4 tasks that sleep 20 ms, at two threads:
# - the spinning type's CPU time is the program's own reading of the thread
#   CPU clock over its spins (to 10% and 2 ms: both segments, wherever they
#   ran), at least 80% of its self time when the spins had a core (the
#   program's readings: a loaded machine takes it from a spinning thread at
#   times); the sleeping type's far below its self time (< 20%);
# - every output has it: profile.json ("cpu_time", cpu_ns), types.csv's cpu
#   columns, the summary's and `taskscope report`'s cpu columns, `diff`'s;
# - without --cpu-time none of them.
#   usage: test_cpu_time_omp.sh TASKSCOPE_BINARY PROGRAM
set -u
ts=$1
prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh" # fail, check, jq
if [ "$(ldd "$(dirname "$ts")/libtaskscope.so" 2>/dev/null | grep -c libasan)" -gt 0 ]; then
    export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS=detect_leaks=0
fi
export TASKSCOPE_SAMPLE_MS=0 OMP_NUM_THREADS=2
unset TASKSCOPE_CPU_TIME

of() { # folder, type name prefix, jq path -> the value of that type
    jq --arg p "$2" "[.types[] | select(.name | startswith(\$p + \" (\")) | $3] | add // \"absent\"" \
        "$1/profile.json"
}

# ---- --cpu-time -----------------------------------------------------------
"$ts" run --cpu-time -o "$tmp/on" --outputs json,csv -- "$prog" >"$tmp/on.out" 2>"$tmp/on.err" ||
    fail "run --cpu-time: $(cat "$tmp/on.err")"
read -r own_cpu own_wall < <(awk '/^own spinning:/ { print $4, $6 }' "$tmp/on.out")
check "the program's readings" "$([ -n "$own_cpu" ] && [ -n "$own_wall" ] && echo yes)" yes
check "profile.json: cpu_time" "$(jq .cpu_time "$tmp/on/profile.json")" true
check "spinning: calls" "$(of "$tmp/on" spinning .calls)" 4
check "spinning: cpu_ns.count" "$(of "$tmp/on" spinning .cpu_ns.count)" 4
cpu=$(of "$tmp/on" spinning .cpu_ns.sum)
self=$(of "$tmp/on" spinning .self_ns.sum)
check "spinning: CPU time $cpu ns, the program's own reading $own_cpu ns (10% and 2 ms)" \
    "$(awk -v c="$cpu" -v o="$own_cpu" 'BEGIN { d = c - o; if (d < 0) d = -d; print d <= 0.1 * o + 2e6 ? "yes" : "no" }')" yes
# the share: 80% when the spins had their core (the program's readings
# say 90% or more), else 85% of the share they had
check "spinning: CPU time $cpu of self time $self ns (the spins' own share: $own_cpu of $own_wall)" \
    "$(awk -v c="$cpu" -v s="$self" -v oc="$own_cpu" -v ow="$own_wall" 'BEGIN {
        own = ow > 0 ? oc / ow : 0; want = own >= 0.9 ? 0.8 : 0.85 * own
        print (s > 0 && c / s >= want) ? "yes" : "no" }')" yes
check "sleeping: cpu_ns.count" "$(of "$tmp/on" sleeping .cpu_ns.count)" 4
scpu=$(of "$tmp/on" sleeping .cpu_ns.sum)
sself=$(of "$tmp/on" sleeping .self_ns.sum)
check "sleeping: CPU time $scpu below 20% of self time $sself ns" \
    "$(awk -v c="$scpu" -v s="$sself" 'BEGIN { print (s >= 70e6 && c < 0.2 * s) ? "yes" : "no" }')" yes
check "summary: cpu columns" "$(grep -c 'self sd us cpu total ms cpu/self' "$tmp/on.err")" 1
check "types.csv: cpu columns" \
    "$(grep -v '^#' "$tmp/on/types.csv" | head -1 | grep -c ',elapsed_total_ns,self_total_ns,cpu_sum_ns,cpu_min_ns,cpu_max_ns,cpu_mean_ns,cpu_stddev_ns$')" 1
"$ts" report "$tmp/on" >"$tmp/on.report" 2>&1 || fail "report: $(cat "$tmp/on.report")"
check "report: cpu columns" "$(grep -c 'self sd us cpu total ms cpu/self' "$tmp/on.report")" 1
# the spinning row's cpu total ms: profile.json's sum, read back
row=$(grep '^spinning (' "$tmp/on.report" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\(cpu_time\.c:/) { print $(i + 6); exit } }')
check "report: spinning's cpu total ms" "$row" "$(awk -v c="$cpu" 'BEGIN { printf "%.3f", c / 1e6 }')"

# ---- without --cpu-time ---------------------------------------------------
"$ts" run -o "$tmp/off" --outputs json,csv -- "$prog" >"$tmp/off.out" 2>"$tmp/off.err" ||
    fail "run: $(cat "$tmp/off.err")"
check "off: no cpu_time" "$(jq 'has("cpu_time")' "$tmp/off/profile.json")" false
check "off: no cpu_ns" "$(jq '[.types[] | has("cpu_ns")] | any' "$tmp/off/profile.json")" false
check "off: summary without cpu" "$(grep -c 'cpu total ms\|cpu/self' "$tmp/off.err")" 0
check "off: types.csv without cpu" "$(grep -c 'cpu_sum_ns' "$tmp/off/types.csv")" 0
"$ts" report "$tmp/off" >"$tmp/off.report" 2>&1 || fail "report off: $(cat "$tmp/off.report")"
check "off: report without cpu" "$(grep -c 'cpu total ms\|cpu/self' "$tmp/off.report")" 0
"$ts" diff "$tmp/off" "$tmp/on" >"$tmp/diff" 2>&1 || fail "diff: $(cat "$tmp/diff")"
check "diff: cpu columns when one run has them" "$(grep -c 'self B ms     cpu A ms     cpu B ms' "$tmp/diff")" 1
check "diff: the run without them says -" \
    "$(grep '^spinning (' "$tmp/diff" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\(cpu_time\.c:/) { print $(i + 5); exit } }')" -

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"

#!/usr/bin/env bash
# test_unfinished.sh - a task still running when the program ends: what it
# ran until then is in its type's totals (self, running, elapsed), in the
# summary's self total and %, in types.csv's self_total_ns and in the share
# of the thread that ran it, and not in the statistics of single tasks
# (docs/output-formats.md, "calls").  `endings spin MS HOW` runs three 1 ms
# tasks of "spinning" and begins a fourth that spins MS ms of wall time,
# then ends the program (HOW: a segmentation fault, SIGKILL, a return with
# it running), in the shard mode and in the naive (store) mode: every way a
# run ends goes through one of the paths that count unfinished tasks
# (finalize, the crash handler, the recovery of the crash journal).
#   usage: test_unfinished.sh TASKSCOPE ENDINGS
set -u
ts=$1
endings=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh" # fail, check, jq
# a sanitizer build: ASan or TSan would take the program's SIGSEGV for its own report
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS }handle_segv=0"
export TASKSCOPE_SAMPLE_MS=0
ms=200

for mode in profile naive; do
    for how in segv kill exit; do
        d="$tmp/$mode-$how"
        TASKSCOPE_MODE=$mode "$ts" run -o "$d" -- "$endings" spin "$ms" "$how" >"$d.out" 2>"$d.err"
        [ -r "$d/profile.json" ] || { fail "$mode $how: no profile.json: $(cat "$d.err")"; continue; }
        sp() { jq -r "[.types[] | select(.name == \"spinning\")][0] | $1" "$d/profile.json"; }
        check "$mode $how: 3 calls, 1 unfinished" "$(sp '[.calls, .unfinished] | join(" ")')" "3 1"
        # the three ended tasks' statistics: about 3 ms, the unfinished one left out
        check "$mode $how: self statistics over the 3 ended tasks $(sp '[.self_ns.count, .self_ns.sum, .self_ns.max] | tostring')" \
            "$(sp '.self_ns.count == 3 and .self_ns.sum < 0.5 * '$ms'e6 and .self_ns.max < 0.5 * '$ms'e6')" true
        # the totals: the ended tasks and the spin of the running one (at least MS ms of
        # wall time by the program's own clock; 2% less where a SIGKILL's end is the
        # launcher's clock converted to ticks), but not more than the run lasted
        # (values: elapsed of the run, the self total and sum, running and elapsed totals)
        vals=$(jq -c '[.totals.elapsed_ns, (.types[] | select(.name == "spinning") | .self_ns.total, .self_ns.sum, .running_ns.total, .elapsed_ns.total)]' "$d/profile.json")
        check "$mode $how: self total holds the running task's $ms ms $vals" \
            "$(jq '. as $p | [.types[] | select(.name == "spinning")][0] as $t
                   | $t.self_ns.total >= $t.self_ns.sum + 0.98 * '$ms'e6 and
                     $t.self_ns.total <= $p.totals.elapsed_ns' "$d/profile.json")" true
        check "$mode $how: running and elapsed totals too" \
            "$(sp '.running_ns.total >= .running_ns.sum + 0.98 * '$ms'e6 and .elapsed_ns.total >= .elapsed_ns.sum + 0.98 * '$ms'e6')" true
        # the thread that ran it: its share adds up to the type's totals
        share=$(jq -c '[.threads[] | .types[]? | select(.type == "spinning") | [.calls, .self_ns]]' "$d/profile.json")
        check "$mode $how: the thread's share is the type's total $share" \
            "$(jq '[.types[] | select(.name == "spinning")][0] as $t
                   | ([.threads[] | .types[]? | select(.type == "spinning")] | map(.self_ns) | add) as $s
                   | ([.threads[] | .types[]? | select(.type == "spinning")] | map(.calls) | add) as $c
                   | (($s - $t.self_ns.total) | fabs) < 1e3 and $c == 3' "$d/profile.json")" true
        # types.csv: self_total_ns beside self_sum_ns
        check "$mode $how: types.csv self_total_ns" \
            "$(grep -v '^#' "$d/types.csv" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                        $2 == "spinning" { print ($c["self_total_ns"] >= $c["self_sum_ns"] + 0.98 * '$ms'e6) ? "yes" : "no" }')" yes
        # the summary: the spinning type first, with at least MS ms of self total and
        # most of the run's self time
        row=$("$ts" report "$d" 2>&1 | grep '^spinning ')
        check "$mode $how: summary row's self total ms ($row)" \
            "$(echo "$row" | awk '{ print ($3 >= 0.98 * '$ms' && $4 + 0 > 50) ? "yes" : "no" }')" yes
        "$ts" report --threads "$d" 2>&1 | grep -q '^spinning ' ||
            fail "$mode $how: report --threads lacks the spinning row: $("$ts" report --threads "$d" 2>&1)"
    done
done

if [ "$fails" -gt 0 ]; then
    echo "$fails check(s) failed"
    exit 1
fi
echo "all checks passed"

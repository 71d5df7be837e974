#!/usr/bin/env bash
# ompt.sh - `scripts/bench ompt`: what measuring an unmodified OpenMP program
# costs, as a user runs it (the whole process, default outputs included).
# For each program, alternating per repetition: no tool, the counting OMPT
# tool (bench/ompt_counting.c, the floor of OMPT), `taskscope run`, and
# `bare`: `taskscope run --outputs none --sample-ms 0` (the measurement
# alone, as ratio_to_counting_tool_bare and added_cpu_ns_per_task_bare).
# `trivial` is fib 1 (no explicit task): its fixed_cost_ms is what `bare`
# adds to the counting tool's run, the fixed cost of taskscope run.  Each
# thread aggregates its own tasks in its shard (issue 26).
# What nothing-lost-on-SIGKILL costs, as mapping_ratio: two variants run the
# program directly, without the launcher, in the environment `taskscope run`
# gives an OpenMP program (OMP_TOOL_LIBRARIES naming the built OMPT tool
# library, TASKSCOPE_OUTPUT_DIR, TASKSCOPE_SUMMARY=0, default outputs):
# `anonymous` without TASKSCOPE_OUTPUT_DIR_PREPARED (no mapping: the shards in
# anonymous memory; the library makes the folder) and `mapping` with it set
# to the same folder, made first as the launcher makes it (the file-backed
# mapping in /dev/shm, the crash journal, holds the shards); mapping_ratio is
# the median of the repetitions' ratios of the two.
# Medians of wall and CPU (user+sys) time; per-task costs divide by the
# program's own count of explicit tasks.
#   usage: ompt.sh BUILD_DIR THREADS REPS [PROGRAM...]   (fib nqueens factorisation trivial)
set -euo pipefail
build=$1
threads=$2
reps=$3
shift 3
programs=${*:-fib nqueens factorisation trivial}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=$threads
TIMEFORMAT='%R %U %S'
ompt_tool=$(cd "$build" && pwd)/libtaskscope-ompt.so # where `taskscope run` finds it
[ -r "$ompt_tool" ] || { echo "ompt.sh: $ompt_tool not found (built without omp-tools.h?)" >&2; exit 1; }

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

run_one() { # variant, program, args... -> appends "wall cpu" to $tmp/variant
    local variant=$1
    shift
    local t
    case $variant in
    none) t=$({ time "$@" >"$tmp/out" 2>/dev/null; } 2>&1) ;;
    counting) t=$({ time OMP_TOOL_LIBRARIES="$build/bench/ompt_counting.so" "$@" >"$tmp/out" 2>/dev/null; } 2>&1) ;;
    taskscope)
        rm -rf "$tmp/ts"
        t=$({ time "$build/taskscope" run -o "$tmp/ts" --no-summary -- "$@" >"$tmp/out" 2>/dev/null; } 2>&1)
        ;;
    anonymous) # as `taskscope run` starts it, without the mapping
        rm -rf "$tmp/ts"
        t=$({ time OMP_TOOL_LIBRARIES="$ompt_tool" TASKSCOPE_OUTPUT_DIR="$tmp/ts" TASKSCOPE_SUMMARY=0 "$@" >"$tmp/out" 2>/dev/null; } 2>&1)
        ;;
    mapping) # the same with the folder prepared: the mapping on
        rm -rf "$tmp/ts"
        mkdir "$tmp/ts"
        t=$({ time OMP_TOOL_LIBRARIES="$ompt_tool" TASKSCOPE_OUTPUT_DIR="$tmp/ts" TASKSCOPE_OUTPUT_DIR_PREPARED="$tmp/ts" TASKSCOPE_SUMMARY=0 "$@" >"$tmp/out" 2>/dev/null; } 2>&1)
        ;;
    bare)
        rm -rf "$tmp/ts"
        t=$({ time "$build/taskscope" run -o "$tmp/ts" --no-summary --outputs none --sample-ms 0 -- "$@" >"$tmp/out" 2>/dev/null; } 2>&1)
        ;;
    esac
    echo "$t" | awk '{print $1, $2 + $3}' >>"$tmp/$variant"
}

bench_program() { # name, program, args...
    local name=$1
    shift
    rm -f "$tmp/none" "$tmp/counting" "$tmp/taskscope" "$tmp/anonymous" "$tmp/mapping" "$tmp/bare"
    "$@" >"$tmp/out" # warm the page cache
    local tasks
    tasks=$(sed -n 's/.*tasks \([0-9]*\).*/\1/p' "$tmp/out")
    for ((r = 0; r < reps; r++)); do
        for v in none counting taskscope anonymous mapping bare; do run_one "$v" "$@"; done
    done
    local w0 c0 w1 c1 w2 c2 w3 w4 c4 w5
    w0=$(cut -d' ' -f1 "$tmp/none" | median); c0=$(cut -d' ' -f2 "$tmp/none" | median)
    w1=$(cut -d' ' -f1 "$tmp/counting" | median); c1=$(cut -d' ' -f2 "$tmp/counting" | median)
    w2=$(cut -d' ' -f1 "$tmp/taskscope" | median); c2=$(cut -d' ' -f2 "$tmp/taskscope" | median)
    w3=$(cut -d' ' -f1 "$tmp/anonymous" | median)
    w4=$(cut -d' ' -f1 "$tmp/bare" | median); c4=$(cut -d' ' -f2 "$tmp/bare" | median)
    w5=$(cut -d' ' -f1 "$tmp/mapping" | median)
    local mr # the median of each repetition's mapping / anonymous: the two run one after
    # the other, so a drift of the machine (runs here jump by 10-20%) moves both alike
    mr=$(paste -d' ' "$tmp/mapping" "$tmp/anonymous" | awk '{print $1 / $3}' | median)
    awk -v n="$name" -v t="$tasks" -v w0="$w0" -v c0="$c0" -v w1="$w1" -v c1="$c1" -v w2="$w2" \
        -v c2="$c2" -v w3="$w3" -v w4="$w4" -v c4="$c4" -v w5="$w5" -v mr="$mr" -v th="$threads" 'function line(m, v, u) {
            printf "{\"bench\":\"ompt\",\"variant\":\"%s\",\"metric\":\"%s\",\"value\":%.6g,\"unit\":\"%s\",\"threads\":%d}\n", n, m, v, u, th }
        BEGIN {
            line("tasks", t, "tasks"); line("wall_no_tool", w0, "s"); line("wall_counting_tool", w1, "s")
            line("wall_taskscope", w2, "s"); line("ratio_to_counting_tool", w2 / w1, "x")
            line("ratio_to_no_tool", w2 / w0, "x")
            if (t > 0) { # per task: not for a program without tasks (trivial)
                line("added_ns_per_task", (w2 - w0) * 1e9 / t, "ns")
                line("added_cpu_ns_per_task", (c2 - c0) * 1e9 / t, "ns")
                line("counting_tool_added_ns_per_task", (w1 - w0) * 1e9 / t, "ns")
            }
            line("wall_taskscope_anonymous", w3, "s"); line("wall_taskscope_mapping", w5, "s")
            line("mapping_ratio", mr, "x")
            line("wall_taskscope_bare", w4, "s"); line("ratio_to_counting_tool_bare", w4 / w1, "x")
            if (t > 0)
                line("added_cpu_ns_per_task_bare", (c4 - c0) * 1e9 / t, "ns")
            if (n == "trivial")
                line("fixed_cost_ms", (w4 - w1) * 1000, "ms") }'
}

for p in $programs; do
    case $p in
    fib) bench_program fib "$build/examples/fib" 27 ;;
    nqueens) bench_program nqueens "$build/examples/nqueens" 12 ;;
    factorisation) bench_program factorisation "$build/examples/cholesky" 24 96 ;;
    trivial) bench_program trivial "$build/examples/fib" 1 ;;
    *) echo "ompt.sh: unknown program $p (fib, nqueens, factorisation, trivial)" >&2; exit 2 ;;
    esac
done

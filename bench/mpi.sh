#!/usr/bin/env bash
# mpi.sh - `scripts/bench mpi`: what taskscope costs an MPI job.
# stencil_4ranks: the unmodified MPI + OpenMP stencil (examples/mpi/stencil.c)
#   at 4 ranks of one thread, without and with `taskscope run` (each
#   repetition without, with, with, without, to cancel drift): the program's
#   own loop time (time_ratio of the medians over all runs; the median, min
#   and max of the repetitions' ratios) and the whole mpirun's wall time
#   (wall_ratio: startup, reduction and outputs included).
# reduce_Nranks: the finalize reduction (tscope_finalize_global) alone, at
#   2, 4 and 8 ranks (bench/mpi_reduce.c, no outputs written).
# merge_N: `taskscope merge` of N synthetic rank folders (mpi_reduce folders).
# Medians of REPS runs.
#   usage: mpi.sh BUILD_DIR REPS
set -euo pipefail
build=$1
reps=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpirun=(mpirun --allow-run-as-root --oversubscribe)
stencil_args=(2500000 100 16) # about 1 s of loop on 2 cores
for f in "$build/examples/stencil" "$build/bench/bench_mpi_reduce" "$build/taskscope"; do
    if [ ! -x "$f" ]; then
        echo "mpi.sh: $f is missing (it needs MPI and clang: install libopenmpi-dev and clang, or run ./scripts/setup)" >&2
        exit 1
    fi
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

line() { # variant metric value unit
    awk -v v="$1" -v m="$2" -v x="$3" -v u="$4" \
        'BEGIN {printf "{\"bench\":\"mpi\",\"variant\":\"%s\",\"metric\":\"%s\",\"value\":%.6g,\"unit\":\"%s\"}\n", v, m, x, u}'
}

# Runs a command with its stdout in $tmp/out, and its wall seconds in $wall;
# a failure shows the command's stderr and ends the benchmark.
wall=
timed() {
    local t0=$EPOCHREALTIME
    if ! "$@" >"$tmp/out" 2>"$tmp/err"; then
        echo "mpi.sh: failed: $*" >&2
        cat "$tmp/err" >&2
        exit 1
    fi
    wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.6f", b - a}')
}

# ---- stencil_4ranks: without and with taskscope ----
stencil_time() { # the loop time the stencil printed
    local t
    t=$(sed -n 's/^stencil: .*, \([0-9.]*\) s$/\1/p' "$tmp/out")
    if [ -z "$t" ]; then
        echo "mpi.sh: no stencil time in: $(cat "$tmp/out")" >&2
        exit 1
    fi
    echo "$t"
}
stencil=("${mpirun[@]}" -np 4 -x OMP_NUM_THREADS=1)
without() {
    timed "${stencil[@]}" "$build/examples/stencil" "${stencil_args[@]}"
    t=$(stencil_time)
    echo "$t $wall" >>"$tmp/without"
    echo "$t"
}
with() {
    rm -rf "$tmp/ts"
    timed "${stencil[@]}" "$build/taskscope" run -q --no-summary -o "$tmp/ts" -- \
        "$build/examples/stencil" "${stencil_args[@]}"
    if ! grep -q '"ranks_present":4[,}]' "$tmp/ts/global/profile.json" 2>/dev/null; then
        echo "mpi.sh: taskscope run wrote no global view of 4 ranks ($tmp/ts/global/profile.json)" >&2
        exit 1
    fi
    t=$(stencil_time)
    echo "$t $wall" >>"$tmp/with"
    echo "$t"
}
timed "${stencil[@]}" "$build/examples/stencil" "${stencil_args[@]}" # warm the page cache
# each repetition is without, with, with, without (ABBA: a drift over the
# four runs cancels in the pair's ratio)
for ((r = 0; r < reps; r++)); do
    a=$(without)
    b=$(with)
    c=$(with)
    d=$(without)
    awk -v a="$a" -v b="$b" -v c="$c" -v d="$d" 'BEGIN {print (b + c) / (a + d)}' >>"$tmp/ratios"
done
t0=$(cut -d' ' -f1 "$tmp/without" | median)
t1=$(cut -d' ' -f1 "$tmp/with" | median)
w0=$(cut -d' ' -f2 "$tmp/without" | median)
w1=$(cut -d' ' -f2 "$tmp/with" | median)
v=stencil_4ranks
line $v time_ratio "$(awk -v a="$t1" -v b="$t0" 'BEGIN {print a / b}')" ratio
line $v time_ratio_pairs_median "$(median <"$tmp/ratios")" ratio
line $v time_ratio_min "$(sort -g "$tmp/ratios" | head -1)" ratio
line $v time_ratio_max "$(sort -g "$tmp/ratios" | tail -1)" ratio
line $v wall_ratio "$(awk -v a="$w1" -v b="$w0" 'BEGIN {print a / b}')" ratio
line $v time_s_without "$t0" s
line $v time_s_with "$t1" s

# ---- reduce_Nranks: tscope_finalize_global alone ----
for n in 2 4 8; do
    rm -f "$tmp/reduce"
    for ((r = 0; r < reps; r++)); do
        timed "${mpirun[@]}" -np "$n" -x TASKSCOPE_OUTPUTS=none -x TASKSCOPE_SUMMARY=0 \
            -x TASKSCOPE_SAMPLE_MS=0 "$build/bench/bench_mpi_reduce"
        cat "$tmp/out" >>"$tmp/reduce"
    done
    line "reduce_${n}ranks" reduce_s "$(median <"$tmp/reduce")" s
done

# ---- merge_N: taskscope merge of N rank folders ----
for n in 64 256 1024; do
    rm -rf "$tmp/ranks" "$tmp/merge"
    timed "$build/bench/bench_mpi_reduce" folders "$n" "$tmp/ranks"
    for ((r = 0; r < reps; r++)); do
        rm -rf "$tmp/global"
        timed "$build/taskscope" merge -q -o "$tmp/global" "$tmp/ranks"
        if ! grep -q "\"ranks_present\":${n}[,}]" "$tmp/global/profile.json" 2>/dev/null; then
            echo "mpi.sh: taskscope merge did not find $n ranks in $tmp/ranks" >&2
            exit 1
        fi
        echo "$wall" >>"$tmp/merge"
    done
    m=$(median <"$tmp/merge")
    line "merge_$n" merge_s "$m" s
    line "merge_$n" merge_s_per_rank "$(awk -v m="$m" -v n="$n" 'BEGIN {print m / n}')" s
done

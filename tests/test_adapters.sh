#!/usr/bin/env bash
# test_adapters.sh - unmodified programs under `taskscope run`: the OMPT tool
# (exact task counts, dependency edges and hazards, nesting of times, untied
# tasks, nested regions, thread-count changes, exit and abort in a task,
# switches counted as yields), a gcc -fopenmp binary run on libomp, the pthread wrapper, the launcher's
# pass-through of output and exit status, and its bad-input messages.
#   usage: test_adapters.sh TASKSCOPE_BINARY BUILD_DIR
set -u
ts=$1
build=$2
ex=$build/examples
progs=$build/tests/omp
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
# libomp leaves /dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid> behind for every
# OpenMP process killed by SIGKILL, and this test kills many: at its end the
# files of processes that are gone are removed (a new process that gets such
# a pid finds a stranger's registration)
kmp_clean() {
    local f p
    for f in /dev/shm/__KMP_REGISTERED_LIB_*_"$(id -u)"; do
        [ -e "$f" ] || continue
        p=${f#/dev/shm/__KMP_REGISTERED_LIB_}
        p=${p%%_*}
        kill -0 "$p" 2>/dev/null || rm -f "$f"
    done
}
trap 'rm -rf "$tmp"; kmp_clean' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh" # fail, check, jq

# A sanitizer build's adapters need the sanitizer runtime loaded first into
# programs that were built without it.
asan=0
if [ "$(ldd "$build/libtaskscope.so" | grep -c libasan)" -gt 0 ]; then
    asan=1
    export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS=detect_leaks=0 # libomp keeps its thread pool at exit
    echo "note: AddressSanitizer build: the programs run with libasan preloaded, leaks unchecked"
fi
export TASKSCOPE_SAMPLE_MS=0

n=0
# run_ts NAME [taskscope run options] -- PROGRAM ARGS: output folder
# $tmp/NAME.out, stdout $tmp/NAME.stdout, stderr $tmp/NAME.stderr, status
# in $status.
run_ts() {
    local name=$1
    shift
    "$ts" run -o "$tmp/$name.out" --no-summary "$@" >"$tmp/$name.stdout" 2>"$tmp/$name.stderr"
    status=$?
}
json() { # name, jq filter
    jq -r "$2" "$tmp/$1.out/profile.json" 2>/dev/null
}
created() { # name, type-name prefix: tasks created of the matching types
    json "$1" "[.types[] | select(.name | startswith(\"$2\")) | .created] | add // 0"
}
calls() {
    json "$1" "[.types[] | select(.name | startswith(\"$2\")) | .calls] | add // 0"
}
clean() { # name: no anomalies, nothing unfinished, no negative or inverted time
    check "$1: anomalies" "$(json "$1" .totals.anomalies)" 0
    check "$1: unfinished" "$(json "$1" .totals.tasks_unfinished)" 0
    check "$1: tree nodes with negative time or self > running" \
        "$(json "$1" '[.tree[] | select(.self_ns < 0 or .self_ns > .running_ns + 1)] | length')" 0
}

if [ -x "$ex/fib" ] && [ -x "$progs/cases" ]; then
    # fib(n) creates 2*fib(n+1)-2 tasks beyond the root call
    for threads in 1 2 4; do
        fold=1
        [ "$threads" = 1 ] && fold=0 # one path per task, for the nesting check below
        OMP_NUM_THREADS=$threads TASKSCOPE_TREE_FOLD=$fold run_ts fib$threads -- "$ex/fib" 18
        check "fib(18) at $threads threads: exit status" "$status" 0
        check "fib(18) at $threads threads: tasks created" "$(created fib$threads "fib (")" 8360
        check "fib(18) at $threads threads: tasks ended" "$(calls fib$threads "fib (")" 8360
        check "fib(18) at $threads threads: taskwaits" "$(calls fib$threads "taskwait fib")" 4180
        check "fib(18) at $threads threads: implicit tasks" \
            "$(calls fib$threads "implicit task main")" "$threads"
        clean fib$threads
    done
    # recursion folded (the default): one tree node per task type pattern
    check "fib(18) at 2 threads: tree nodes with recursion folded" \
        "$(json fib2 '.tree | length < 20')" true
    check "fib(18) at 2 threads: tasks in the tree" \
        "$(json fib2 '[.tree[] | select(.type | startswith("fib (")) | .calls] | add')" 8360
    # the program's own output is unchanged
    OMP_NUM_THREADS=2 "$ex/fib" 18 >"$tmp/fib.plain"
    check "fib: stdout as without taskscope" "$(cat "$tmp/fib2.stdout")" "$(cat "$tmp/fib.plain")"
    grep -q "adapter\|libgomp" "$tmp/fib2.stderr" && fail "fib: a launcher note for a plain libomp program"

    # the names a run found by source line are kept for the next runs of the
    # same build ($XDG_CACHE_HOME/taskscope): a second run names every type
    # the same without loading libdw (LD_DEBUG=files lists what is loaded)
    XDG_CACHE_HOME=$tmp/cache OMP_NUM_THREADS=2 LD_DEBUG=files run_ts cache1 -- "$ex/fib" 18
    XDG_CACHE_HOME=$tmp/cache OMP_NUM_THREADS=2 LD_DEBUG=files run_ts cache2 -- "$ex/fib" 18
    check "names cache: the first run loads libdw" "$(grep -q 'file=libdw' "$tmp/cache1.stderr" && echo yes)" yes
    check "names cache: lines kept" "$(cat "$tmp"/cache/taskscope/names-2-* | grep -c ' (fib.c:[0-9]*) ')" 5
    check "names cache: the second run does not load libdw" "$(grep -c 'file=libdw' "$tmp/cache2.stderr")" 0
    check "names cache: the same names" "$(json cache2 '[.types[].name] | sort | join(",")')" \
        "$(json cache1 '[.types[].name] | sort | join(",")')"
    check "names cache: fib tasks" "$(calls cache2 "fib (")" 8360

    # SIGKILL in the middle of an unmodified OpenMP program: its outputs are
    # rebuilt from the crash journal (the threads' own shards and the tree
    # paths they registered, in the mapping), also in naive mode (the shards
    # under one lock); every task created is accounted for once, the tree
    # holds the types' calls
    for agg in profile naive; do
        OMP_NUM_THREADS=2 TASKSCOPE_MODE=$agg TASKSCOPE_SAMPLE_MS=50 "$ts" run -o "$tmp/kill$agg.out" --no-summary \
            -- "$ex/fib" 45 >/dev/null 2>"$tmp/kill$agg.stderr" &
        tspid=$!
        prog=
        for _ in $(seq 200); do # (pgrep without the sanitizer's preload)
            prog=$(env -u LD_PRELOAD pgrep -P "$tspid" fib || true)
            [ -n "$prog" ] && [ -e "$tmp/kill$agg.out/.taskscope-$prog.map" ] && break
            sleep 0.05
        done
        sleep 0.5
        [ -n "$prog" ] || kill -KILL "$tspid" # not found: fails below, hangs nothing
        kill -KILL ${prog:-} 2>/dev/null
        wait "$tspid" 2>/dev/null || true
        check "fib killed ($agg): rebuilt" \
            "$(grep -c "was killed by signal 9 (Killed) at [0-9.]* s; its outputs were rebuilt" "$tmp/kill$agg.stderr")" 1
        check "fib killed ($agg): ended by" "$(json kill$agg .ended_by)" SIGKILL
        check "fib killed ($agg): tasks ended" "$(json kill$agg '.totals.tasks_completed > 1000')" true
        check "fib killed ($agg): every task created accounted for once" "$(json kill$agg '.totals |
            .tasks_created == .tasks_completed + .tasks_cancelled + .tasks_unfinished + .tasks_never_ran')" true
        check "fib killed ($agg): the tree holds the types' calls" "$(json kill$agg '
            ([.tree[] | select(.type | startswith("fib (")) | .calls] | add) ==
            ([.types[] | select(.name | startswith("fib (")) | .calls] | add)')" true
        check "fib killed ($agg): anomalies" "$(json kill$agg .totals.anomalies)" 0
        # what a name's attributes say survives too (blocks of their own in
        # the mapping): the taskwait is a wait, the sampler's counters sampled
        check "fib killed ($agg): the taskwait type still a wait" \
            "$(json kill$agg '[.types[] | select(.name | startswith("taskwait")) | .wait] | unique')" \
            '[
  true
]'
        check "fib killed ($agg): the sampler's counters still marked sampled" \
            "$(json kill$agg '[.counters[] | select(.name == "proc.rss_bytes") | .sampled] | .[0]')" true
    done

    # at one thread a task's children (and its taskwait) run nested in it:
    # every fib node's running time is its self time plus its
    # children's running times (with a node per path: TASKSCOPE_TREE_FOLD=0)
    check "fib at 1 thread: fib nodes where running != self + children" "$(json fib1 '
        .tree as $t |
        ($t | group_by(.parent) | map({key: (.[0].parent | tostring), value: (map(.running_ns) | add)})
            | from_entries) as $kids |
        [ $t[] | select(.type | startswith("fib (")) |
          select(((.running_ns - .self_ns - ($kids[.node | tostring] // 0)) | fabs) > 1000 + 1e-6 * .running_ns)
        ] | length')" 0
    check "fib at 1 thread: fib nodes checked" "$(json fib1 '[.tree[] | select(.type | startswith("fib ("))] | length > 10')" true

    for threads in 1 2 4; do
        OMP_NUM_THREADS=$threads run_ts nq$threads -- "$ex/nqueens" 8
        want=$(sed -n 's/.*tasks \([0-9]*\),.*/\1/p' "$tmp/nq$threads.stdout")
        check "nqueens(8) at $threads threads: 92 solutions" \
            "$(grep -c '92 solutions' "$tmp/nq$threads.stdout")" 1
        check "nqueens(8) at $threads threads: tasks as the program counted" \
            "$(created nq$threads "solve (")" "$want"
        clean nq$threads
    done

    # dependencies: edges between the explicit tasks A..J in creation order
    OMP_NUM_THREADS=2 TASKSCOPE_TOOLS=eventlog TASKSCOPE_EVENTLOG="$tmp/deps.log" \
        run_ts deps -- "$progs/cases" deps
    check "deps: exit status" "$status" 0
    edges=$(awk '
        / task_create / && /type=[0-9]+\(task \(cases\.c/ {
            split($4, a, "="); label[a[2]] = sprintf("%c", 65 + n++) }
        / dep_edge / {
            split($4, f, "="); split($5, t, "="); split($7, k, "=")
            print label[f[2]] "->" label[t[2]] " " k[2] }' "$tmp/deps.log" | sort | tr '\n' ' ')
    # clang reports depend(out) as inout to OMPT (libomp 14), so A->B and
    # H->I, writes after a write, read it too: RAW and WAW
    check "deps: edges and hazards" "$edges" \
        "A->B RAW+WAW B->C RAW C->J WAR D->E RAW D->F RAW E->G RAW E->H WAR F->G RAW F->H WAR H->I RAW+WAW "
    check "deps: dependencies counted in the profile" "$(json deps .totals.dependencies)" 10
    clean deps

    # two implicit tasks whose tasks use one address by turns: each thread's
    # chain, no edge lost when the other parent's task came between (keyed by
    # address alone, the history started afresh: 0 of the 4 edges)
    OMP_NUM_THREADS=2 run_ts twoparents -- "$progs/cases" twoparents
    check "twoparents: exit status" "$status" 0
    check "twoparents: each thread's A->B and B->C, by line" \
        "$(json twoparents '[.dependencies[] | "\(.from | sub(".*:"; ""))>\(.to | sub(".*:"; "")) \(.count)"] | sort | join(",")')" \
        "$(awk '/depend\(out : x\) \/\* A: this/ {a = NR} /depend\(inout : x\) \/\* B: this/ {b = NR}
                /depend\(in : x\) \/\* C: this/ {c = NR}
                END {printf "%d)>%d) 2,%d)>%d) 2", a, b, b, c}' "$(dirname "${BASH_SOURCE[0]}")/omp/cases.c")"
    check "twoparents: 4 dependencies" "$(json twoparents .totals.dependencies)" 4
    clean twoparents

    OMP_NUM_THREADS=2 TASKSCOPE_TOOLS=eventlog TASKSCOPE_EVENTLOG="$tmp/untied.log" \
        run_ts untied -- "$progs/cases" untied 200
    check "untied: all ran" "$(cat "$tmp/untied.stdout")" "untied 200 of 200"
    check "untied: tasks created with the untied flag (8)" \
        "$(grep -c 'task_create .*flags=8 ' "$tmp/untied.log")" 200
    check "untied: tasks created = ended" "$(json untied .totals.tasks_created)" \
        "$(json untied .totals.tasks_completed)"
    check "untied: yields = resumes" "$(grep -c ' task_yield ' "$tmp/untied.log")" \
        "$(grep -c ' task_resume ' "$tmp/untied.log")"
    clean untied

    # The dependency graph by type, the same in naive mode: the adapter gives
    # the edges' types (a task that ended, or one a thread aggregates
    # itself, is not in the store's task table).
    for agg in profile naive; do
        OMP_NUM_THREADS=2 TASKSCOPE_MODE=$agg run_ts depagg --outputs json -- "$progs/cases" deps
        json depagg '[.dependencies[] | "\(.from)>\(.to) \(.count) \(.raw) \(.war) \(.waw)"] | sort | join(",")' \
            >"$tmp/deps.$agg"
        rm -rf "$tmp/depagg.out"
    done
    check "deps: the graph by type (10 typed edges)" \
        "$(grep -o '>' "$tmp/deps.profile" | wc -l) $(grep -c untyped "$tmp/deps.profile")" "10 0"
    check "deps: the same graph by type in naive mode" "$(cat "$tmp/deps.profile")" \
        "$(cat "$tmp/deps.naive")"

    # One edge per pair of tasks with its hazards and address count, mutual
    # exclusion, the waits of if(0) and taskwait depend, in clang and gcc
    # builds (tests/omp/depends.c: each task's letter is on its line)
    dep_edges() { # log file, source: "X->Y HAZARDS ADDRESSES" sorted; taskwaits are "wait"
        awk -v src="$2" '
            BEGIN { while ((getline l < src) > 0) { line++
                        if (match(l, /\/\* [A-Z][: ]/)) letter[line] = substr(l, RSTART + 3, 1) } }
            / task_create / { split($4, a, "="); t = $0; sub(/ flags=.*/, "", t)
                if (t ~ /type=[0-9]+\(taskwait /) name[a[2]] = "wait"
                else if (match(t, /depends\.c:[0-9]+\)/))
                    name[a[2]] = letter[substr(t, RSTART + 10, RLENGTH - 11) + 0] }
            / dep_edge / { split($4, f, "="); split($5, g, "="); split($7, h, "="); split($8, n, "=")
                print name[f[2]] "->" name[g[2]] " " h[2] " " n[2] }' "$1" | sort | tr '\n' ' '
    }
    for prog in depends depends-gcc; do
        for mode in pairs mutex wait; do
            OMP_NUM_THREADS=2 TASKSCOPE_TOOLS=eventlog TASKSCOPE_EVENTLOG="$tmp/$prog.$mode.log" \
                run_ts $prog.$mode -- "$progs/$prog" $mode
            check "$prog $mode: exit status" "$status" 0
            got=$(dep_edges "$tmp/$prog.$mode.log" "$here/omp/depends.c")
            case $mode in
            pairs) want="A->B RAW 2 B->C WAR 1 B->E WAR 1 C->D RAW 1 C->E RAW 1 " ;;
            mutex) want="A->B RAW+WAW 1 A->C RAW+WAW 1 B->C mutex 1 B->D RAW 1 C->D RAW 1 " ;;
            wait) want="A->D RAW 1 A->wait RAW 1 C->wait RAW 1 " ;;
            esac
            check "$prog $mode: one edge per pair, its hazards and addresses" "$got" "$want"
            check "$prog $mode: the profile's edges" "$(json $prog.$mode '.task_deps | length')" \
                "$(echo "$want" | wc -w | awk '{print $1 / 3}')"
            check "$prog $mode: the profile's pairs by type count each edge once" \
                "$(json $prog.$mode '[.dependencies[].count] | add')" "$(json $prog.$mode '.task_deps | length')"
            clean $prog.$mode
        done
    done
    # the exclusion as such: in profile.json, a dotted line without arrow in
    # the DOT graph, a Chrome flow "mutex" from the end of whichever of the
    # two ran first to the other's begin (5 runs: either may run first)
    for r in 1 2 3 4 5; do
        OMP_NUM_THREADS=2 run_ts mx --trace --outputs json,dot -- "$progs/depends" mutex
        check "mutex run $r: the exclusion in the profile" \
            "$(json mx '[.task_deps[] | select(.hazards == ["mutex"])] | length'),$(json mx \
               '[.dependencies[] | select(.mutex > 0) | .mutex] | add')" "1,1"
        check "mutex run $r: a dotted line without arrow in the DOT graph" \
            "$(grep -c 'style=dotted, dir=none.*label="mutex 1"' "$tmp/mx.out/taskgraph.dot")" 1
        check "mutex run $r: the flows by name, the mutex one forward in time" \
            "$(jq -r '[.traceEvents[] | select(.cat == "dependency")] | group_by(.id)
                | map({n: .[0].name, s: (map(select(.ph == "s"))[0].ts),
                       f: (map(select(.ph == "f"))[0].ts)})
                | (map(.n) | sort | join(" ")) + " " + (map(select(.n == "mutex") | .s <= .f)
                | map(tostring) | join(""))' "$tmp/mx.out/trace.json")" \
            "RAW RAW RAW+WAW RAW+WAW mutex true"
        clean mx
        rm -rf "$tmp/mx.out"
    done
    # gcc-built: the leaves an untied generator creates keep their own line
    # (libomp's GOMP_task reported the first one inside the implicit barrier
    # at the parallel region's line, "main (cases.c:98)", in every run), and
    # gcc's outlined functions (generator._omp_fn.1) are named as clang's
    # .omp_outlined. are, by the line: the same names from both compilers
    names() { json "$1" '[.types[] | select(.created > 0 or .calls > 0) | .name] | sort | join("|")'; }
    for r in 1 2 3; do
        OMP_NUM_THREADS=4 run_ts gen-gcc -- "$progs/cases-gcc" generator 10 200
        check "gcc untied generator run $r: leaves named by their line" \
            "$(created gen-gcc "task (cases.c:104)"),$(json gen-gcc \
                '[.types[] | select(.created > 0 and (.name | startswith("main ")))] | length')" \
            "2000,0"
        clean gen-gcc
        [ "$r" = 1 ] || { rm -rf "$tmp/gen-gcc.out"; continue; }
        OMP_NUM_THREADS=4 run_ts gen-clang -- "$progs/cases" generator 10 200
        check "generator: gcc's task names are clang's" "$(names gen-gcc)" "$(names gen-clang)"
        check "generator: clang's names (read)" "$(names gen-clang | grep -c "|task (cases.c:104)|")" 1
        run_ts nested-gcc -- "$progs/cases-gcc" nested
        run_ts nested-clang -- "$progs/cases" nested
        check "nested: gcc's region, task and barrier names are clang's" "$(names nested-gcc)" \
            "$(names nested-clang)"
        check "nested: clang's names (read)" "$(names nested-clang | grep -c "|implicit task (cases.c:150)|")" 1
        rm -rf "$tmp/gen-gcc.out" "$tmp/gen-clang.out" "$tmp/nested-gcc.out" "$tmp/nested-clang.out"
    done
    # gcc -O2 ends quicksort with `jmp GOMP_taskwait`: the runtime reports
    # the caller's return address (inside libomp, where the task body is
    # called), and the taskwait was named after the parallel region,
    # "taskwait main (qsort.c:66)"; it is named after its own line
    tw=$(grep -n '^#pragma omp taskwait' "$here/omp/qsort.c" | cut -d: -f1)
    check "qsort-gcc: gcc made the taskwait a tail jump" \
        "$(objdump -d "$progs/qsort-gcc" | awk '/<quicksort>:/,/^$/' | grep -c 'jmp.*<GOMP_taskwait@plt>')" 1
    OMP_NUM_THREADS=2 run_ts qs-gcc -- "$progs/qsort-gcc" 100000
    check "qsort-gcc: the taskwait named by its function and line, every call" \
        "$(json qs-gcc '[.types[] | select(.calls > 0 and (.name | startswith("taskwait")))
            | "\(.name)=\(.calls)"] | join(",")')" "taskwait quicksort (qsort.c:$tw)=$(cat "$tmp/qs-gcc.stdout")"
    clean qs-gcc
    rm -rf "$tmp/qs-gcc.out"
    # inoutset and omp_all_memory through libomp's entry points (kmpdeps.c)
    OMP_NUM_THREADS=2 TASKSCOPE_TOOLS=eventlog TASKSCOPE_EVENTLOG="$tmp/kmp.log" \
        run_ts kmp -- "$progs/kmpdeps"
    check "kmpdeps: exit status" "$status" 0
    check "kmpdeps: inoutset and omp_all_memory edges" "$(awk '
        / task_create / && /type=[0-9]+\(task \(kmpdeps/ { split($4, a, "="); label[a[2]] = ++n }
        / dep_edge / { split($4, f, "="); split($5, t, "="); split($7, h, "=")
            print label[f[2]] "->" label[t[2]] " " h[2] }' "$tmp/kmp.log" | sort | tr '\n' ' ')" \
        "1->2 RAW+WAW 1->3 RAW+WAW 2->4 RAW 3->4 RAW 4->5 WAR 5->6 RAW 6->7 WAR 7->8 RAW "
    clean kmp

    # An untied generator resumed after each taskwait wherever a thread is
    # free: every leaf ends exactly once, and the generator did run on more
    # than one thread in some of the runs (20 runs; on a loaded machine up to
    # 40 more until one moved), in both aggregations.  (A leaf whose final
    # part returned before the part that queued it was lost in ~1 of 60 runs
    # until the tool ended it at its thread's next event: test_ompt_untied.)
    for agg in profile naive; do
        moved=0
        bad=""
        for r in $(seq 60); do
            [ "$r" -gt 20 ] && [ "$moved" -gt 0 ] && break
            OMP_NUM_THREADS=4 TASKSCOPE_MODE=$agg run_ts gen --outputs json -- \
                "$progs/cases" generator 10 20
            leaves=$(json gen '[.types[] | select(.name | startswith("task (cases.c:")) | .calls] | max // 0')
            gens=$(json gen '[.types[] | select(.name | startswith("task (cases.c:")) | .calls] | min // 0')
            threads=$(json gen '[.types[] | select(.name | startswith("task (cases.c:")) | select(.calls == 1) | .threads] | max // 0')
            [ "$(cat "$tmp/gen.stdout")" = "generator 200 of 200" ] && [ "$leaves" = 200 ] &&
                [ "$gens" = 1 ] && [ "$(json gen .totals.tasks_unfinished)" = 0 ] &&
                [ "$(json gen .totals.anomalies)" = 0 ] || bad="$bad $r:$leaves/$gens"
            [ "${threads:-0}" -gt 1 ] && moved=$((moved + 1))
            rm -rf "$tmp/gen.out"
        done
        check "untied generator ($agg): at 4 threads, 200 leaves and 1 generator in each run" "$bad" ""
        check "untied generator ($agg): resumed on another thread in some runs" "$((moved > 0))" 1
    done

    # Untied tasks in a tree, each waiting for its children (BOTS health's
    # shape), at 4 threads: every task ends once, 10 runs
    bad=""
    for r in $(seq 10); do
        OMP_NUM_THREADS=4 run_ts tree --outputs json -- "$progs/cases" tree 7 4
        n=$(json tree '[.types[] | select(.name | startswith("tree_node (cases.c:")) | .calls] | add // 0')
        [ "$(cat "$tmp/tree.stdout")" = "tree 5460 tasks" ] && [ "$n" = 5460 ] &&
            [ "$(json tree .totals.tasks_unfinished)" = 0 ] &&
            [ "$(json tree .totals.anomalies)" = 0 ] || bad="$bad $r:$n"
        rm -rf "$tmp/tree.out"
    done
    check "untied tree: at 4 threads, 5460 tasks ended once in each run" "$bad" ""

    # Per task address, what the OpenMP runtime itself reported (an OMPT tool
    # of the tests', tests/omp/ompt_truth.c) against taskscope's explicit
    # task types: the same created and completed counts, at 4 threads, also
    # in naive mode.
    explicit='select(.name | test("^(initial task|parallel |implicit task |single|barrier|taskwait|taskgroup|loop |sections|reduction|taskloop |workshare|distribute|scope)") | not)'
    for prog in "fib 18" "cases untied 200" "cases generator 10 20" "cases deps"; do
        bin=$ex/fib
        [ "${prog%% *}" = cases ] && bin=$progs/cases
        OMP_NUM_THREADS=4 OMP_TOOL_LIBRARIES="$progs/ompt_truth.so" OMPT_TRUTH_OUT="$tmp/truth" \
            "$bin" ${prog#* } >/dev/null 2>&1
        for agg in profile naive; do
            OMP_NUM_THREADS=4 TASKSCOPE_MODE=$agg run_ts truth --outputs json -- "$bin" ${prog#* }
            check "$prog ($agg): created and completed per task address as the runtime reports" \
                "$(json truth ".types[] | $explicit | \"\(.created) \(.calls)\"" | sort -n | tr '\n' ' ')" \
                "$(awk '$1 != "implicit" {print $1, $2}' "$tmp/truth" | sort -n | tr '\n' ' ')"
            rm -rf "$tmp/truth.out"
        done
    done

    run_ts nested -- "$progs/cases" nested
    check "nested: output" "$(cat "$tmp/nested.stdout")" "nested 4"
    check "nested: parallel regions" "$(calls nested "parallel ")" 3
    check "nested: implicit tasks (2 outer + 2x2 inner)" "$(calls nested "implicit task ")" 6
    clean nested

    run_ts numthreads -- "$progs/cases" numthreads
    check "numthreads: implicit tasks (1 + 3 + 2)" "$(calls numthreads "implicit task ")" 6
    check "numthreads: threads seen" "$(json numthreads .totals.threads)" 3
    clean numthreads

    # libomp reports a taskloop and its tasks inside itself: both are named by
    # the program's line of the construct
    OMP_NUM_THREADS=2 run_ts taskloop -- "$progs/cases" taskloop
    check "taskloop: output" "$(cat "$tmp/taskloop.stdout")" "taskloop 4950"
    loc=$(json taskloop '.types[] | select(.name | startswith("taskloop ")) | .name' | sed 's/^taskloop //')
    check "taskloop: the construct named by the program's line" "$(echo "$loc" | grep -c 'cases\.c:[0-9]')" 1
    check "taskloop: its 10 tasks named by the same line" \
        "$(json taskloop "[.types[] | select(.name == \"task $loc\") | .calls] | add // 0")" 10
    check "taskloop: nothing named inside the runtime" \
        "$(json taskloop '[.types[] | select(.name | test("inside the OpenMP runtime"))] | length')" 0
    clean taskloop

    # two taskloops of 1,000 iterations in tasks of 10 at 4 threads: libomp
    # splits them, making chunk tasks on other threads from tasks of its own,
    # and reports them created by the encountering task after the construct
    # ended; every one is named by its taskloop's line (each line: 100 chunk
    # tasks and libomp's few splitting tasks)
    OMP_NUM_THREADS=4 run_ts bigtaskloop --outputs json -- "$progs/cases" bigtaskloop
    check "bigtaskloop: output" "$(cat "$tmp/bigtaskloop.stdout")" "bigtaskloop 1498500"
    check "bigtaskloop: nothing named inside the runtime" \
        "$(json bigtaskloop '[.types[] | select(.name | test("inside the OpenMP runtime"))] | length')" 0
    check "bigtaskloop: each taskloop's tasks named by its line (100 chunks and the splitting tasks)" \
        "$(json bigtaskloop '[.types[] | select(.name | startswith("taskloop ")) | .name |
            sub("^taskloop "; "task ")] as $names | [.types[] | select(.name as $n | $names |
            index($n)) | .calls >= 100 and .calls < 120] | (length == 2 and all)')" true
    clean bigtaskloop

    # fork: the child runs (unmeasured, said once); the parent's measurement goes on
    OMP_NUM_THREADS=2 run_ts fork -- "$progs/cases" fork
    check "fork: exit status" "$status" 0
    check "fork: parent and child output" "$(grep -c 'deps x=5 y=4' "$tmp/fork.stdout") $(tail -1 "$tmp/fork.stdout")" "3 child exit 7"
    check "fork: the child said unmeasured" "$(grep -c 'forked process [0-9]* is not measured' "$tmp/fork.stderr")" 1
    check "fork: the parent's two deps runs measured" "$(json fork .totals.dependencies)" 20
    clean fork

    run_ts exit -- "$progs/cases" exit
    check "exit(5) in a task: exit status passed on" "$status" 5
    check "exit(5) in a task: the profile was written" "$(json exit '.totals.tasks_created > 0')" true

    run_ts abort -- "$progs/cases" abort
    check "abort in a task: exit status 128+6" "$status" 134
    check "abort in a task: the profile was written, ended by SIGABRT" \
        "$(json abort '.ended_by + " " + (.totals.tasks_created > 0 | tostring)')" "SIGABRT true"

    # _exit in a task: no taskscope code runs (the OMPT tool is loaded
    # privately, the _exit is libc's); the launcher rebuilds the outputs from
    # the crash journal: the finished task is there, the exiting one unfinished
    run_ts _exit -- "$progs/cases" _exit
    check "_exit(6) in a task: exit status passed on" "$status" 6
    check "_exit(6) in a task: outputs rebuilt from the crash journal" \
        "$(grep -c 'exited (status 6) without finalizing measurement at [0-9.]* s; its outputs were rebuilt from the crash journal' "$tmp/_exit.stderr")" 1
    check "_exit(6) in a task: ended by _exit, a task finished and the exiting one unfinished" \
        "$(json _exit '.ended_by + " " + (.totals.tasks_completed > 0 | tostring) + " " + (.totals.tasks_unfinished > 0 | tostring)')" \
        "_exit true true"

    # SIGKILL at random moments, 4 threads: the rebuilt profile has at least
    # the tasks the program knew had ended (it writes their count every 10 ms)
    for r in $(seq 20); do
        rm -f "$tmp/count"
        OMP_NUM_THREADS=4 "$ts" run -o "$tmp/kill$r.out" --no-summary -- "$progs/cases" count \
            "$tmp/count" >"$tmp/kill.stdout" 2>"$tmp/kill.stderr" &
        launcher=$!
        for _ in $(seq 200); do [ -s "$tmp/count" ] && break; sleep 0.05; done
        sleep "0.$(printf %02d $((RANDOM % 40 + 5)))"
        # (pkill without the sanitizer's preload, as pgrep above)
        env -u LD_PRELOAD pkill -KILL -P "$launcher" cases
        for _ in $(seq 400); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.05; done
        if kill -0 "$launcher" 2>/dev/null; then # the program was not found: never hang
            env -u LD_PRELOAD pkill -KILL -P "$launcher"
            kill -KILL "$launcher"
            fail "SIGKILL $r: taskscope run did not end"
        fi
        wait "$launcher" || true
        seen=$(cat "$tmp/count" 2>/dev/null || echo 0)
        got=$(json "kill$r" '[.types[] | select(.name | startswith("task (")) | .calls] | add // 0')
        if [ "${got:-0}" -lt "$seen" ] || [ "$seen" -le 0 ]; then
            fail "SIGKILL $r: ${got:-no} tasks rebuilt, the program saw $seen end: $(cat "$tmp/kill.stderr")"
        fi
        rm -rf "$tmp/kill$r.out"
    done
    echo "ok: SIGKILL at 20 random moments: every task the program saw end was rebuilt"

    # GCC: libgomp has no OMPT; the launcher runs the binary on libomp
    OMP_NUM_THREADS=2 run_ts gcc -- "$ex/fib-gcc" 15
    check "gcc -fopenmp fib(15): exit status" "$status" 0
    check "gcc -fopenmp fib(15): the launcher said it runs on libomp" \
        "$(grep -c 'runs on LLVM.s libomp' "$tmp/gcc.stderr")" 1
    check "gcc -fopenmp fib(15): tasks created" "$(created gcc "fib")" 1972
    check "gcc -fopenmp fib(15): tasks ended" "$(calls gcc "fib")" 1972
    clean gcc

    # the three ways libomp finds the tool, without the launcher
    for how in preload toollib linked; do
        prog=$ex/fib
        case $how in
        preload) env=(LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$build/libtaskscope-ompt.so") ;;
        toollib) env=(OMP_TOOL_LIBRARIES="$build/libtaskscope-ompt.so") ;;
        linked) env=(X=1); prog=$progs/fib-linked ;;
        esac
        OMP_NUM_THREADS=2 TASKSCOPE_OUTPUT_DIR="$tmp/$how.out" env "${env[@]}" "$prog" 12 \
            >"$tmp/$how.stdout" 2>"$tmp/$how.stderr"
        check "tool found through $how: exit status" "$?" 0
        check "tool found through $how: tasks" "$(created "$how" "fib (")" 464
    done

    # a script that execs an OpenMP program: the launcher offers the OMPT tool
    printf '#!/bin/sh\nexec "%s" 12\n' "$ex/fib" >"$tmp/fib.sh"
    chmod +x "$tmp/fib.sh"
    OMP_NUM_THREADS=2 run_ts script -- "$tmp/fib.sh"
    check "script execs fib: exit status" "$status" 0
    check "script execs fib: tasks" "$(created script "fib (")" 464

    # --ompt on a program without OpenMP: said, and it runs
    run_ts noomp --ompt -- "$progs/threads"
    check "--ompt without OpenMP: exit status" "$status" 3
    check "--ompt without OpenMP: said so" "$(grep -c 'loads no OpenMP runtime' "$tmp/noomp.stderr")" 1

    # measurement off: the program runs, nothing is written
    OMP_NUM_THREADS=2 run_ts off --off -- "$ex/fib" 10
    check "--off: exit status" "$status" 0
    check "--off: no profile" "$([ -e "$tmp/off.out/profile.json" ] && echo yes || echo no)" no
    run_ts off_threads --off -- "$progs/threads"
    check "--off, pthread wrapper: exit status" "$status" 3
    check "--off, pthread wrapper: nothing said about finalizing" \
        "$(grep -c 'finaliz' "$tmp/off_threads.stderr")" 0

    # yields: the times a task was switched out before its end
    # (docs/output-formats.md), against what libomp itself reports (an OMPT
    # tool of the tests', tests/omp/ompt_truth.c: per task address
    # "created switched", then the implicit tasks' switches).  yields.c runs
    # at 2 threads with the second spinning outside any task scheduling
    # point, so each count is certain: K = 5 children run at the waiting
    # task's taskwait, its taskgroup's end or undeferred are 5 yields, each
    # taskyield of the implicit task that runs a task 1, a taskwait with
    # nothing to run 0; an untied task is switched out also at each task it
    # creates (clang splits it into parts).  At 1 thread libomp runs each
    # task as it is created (the same counts, at the creations), and
    # continues an untied task's parts with switches to itself, which count
    # none (the untied generator of untied leaves ended at its first leaf
    # before: 2 yields of libomp's 6).  The gcc-built program runs on
    # libomp (the launcher's libgomp.so.1 -> libomp, made here too), whose
    # GOMP_taskyield runs nothing: its tasks wait for the barrier, so yield
    # is left out there.
    gomp=$tmp/gomp
    mkdir -p "$gomp"
    ln -sf "$(ldd "$progs/yields" | awk '/libomp/ {print $3}')" "$gomp/libgomp.so.1"
    ysum() { # name, type-name regex: the yields of the matching types
        json "$1" "[.types[] | select(.name | test(\"$2\")) | .yields] | add // 0"
    }
    for run in "yields 2" "yields-gcc 2" "yields 1"; do
        bin=${run% *} threads=${run#* }
        for c in "taskwait:1 5 5 0 :1" "taskgroup:1 5 5 0 :1" "undeferred:1 5 5 0 :1" \
            "none:1 0 :1" "yield:5 0 :5" "untied::" "untiedleaves::"; do
            case=${c%%:*} want=${c#*:}
            [ "$bin" = yields-gcc ] && [ "$case" = yield ] && continue
            libs=
            [ "$bin" = yields-gcc ] && libs=$gomp
            rm -f "$tmp/switches"
            LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
                OMP_TOOL_LIBRARIES="$progs/ompt_truth.so" OMPT_TRUTH_OUT="$tmp/switches" \
                "$progs/$bin" "$case" 5 "$threads" >/dev/null 2>&1
            run_ts yl -- "$progs/$bin" "$case" 5 "$threads"
            what="$bin $case at $threads threads"
            check "$what: output" "$(cat "$tmp/yl.stdout")" "$case 5 ran 5"
            got="$(json yl ".types[] | $explicit | \"\(.created) \(.yields)\"" | sort -n | tr '\n' ' '):$(ysum yl '^(implicit|initial) task')"
            check "$what: created and yields per task type, implicit tasks' yields, as the runtime switched them" \
                "$got" "$(awk '$1 != "implicit" {print $1, $3}' "$tmp/switches" | sort -n | tr '\n' ' '):$(sed -n 's/^implicit //p' "$tmp/switches")"
            [ "$want" != : ] && check "$what: yields as the program makes them" "$got" "$want"
            clean yl
            rm -rf "$tmp/yl.out"
        done
    done
    # the untied task: its 5 children at its taskwait, and each part (clang)
    run_ts yl -- "$progs/yields" untied 5 2
    check "yields untied: the untied task yields at least once per child, the children never" \
        "$(json yl ".types[] | $explicit | \"\(.created) \(.yields >= 5)\"" | sort -n | tr '\n' ' ')" "1 true 5 false "
    rm -rf "$tmp/yl.out"

    # fib: every task begins in a switch from a measured task (its parent at
    # a taskwait, a task or implicit task that steals it), so the yields of
    # all types are the switches libomp reports, one per task: at 4 threads
    # (clang: idle threads wait at the single's barrier), and at 1 (gcc: its
    # idle threads wait at the region's end barrier, where a worker's
    # implicit task has ended for taskscope, so what it steals there is
    # nobody's yield)
    for f in "fib 4" "fib-gcc 1"; do
        bin=${f% *} threads=${f#* }
        libs=
        [ "$bin" = fib-gcc ] && libs=$gomp
        rm -f "$tmp/switches"
        LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} OMP_NUM_THREADS=$threads \
            OMP_TOOL_LIBRARIES="$progs/ompt_truth.so" OMPT_TRUTH_OUT="$tmp/switches" \
            "$ex/$bin" 18 >/dev/null 2>&1
        OMP_NUM_THREADS=$threads run_ts ylfib -- "$ex/$bin" 18
        tasks=$(sed -n 's/.*tasks \([0-9]*\),.*/\1/p' "$tmp/ylfib.stdout")
        check "$bin(18) at $threads threads: yields of all types, the runtime's switches, tasks" \
            "$(json ylfib '[.types[].yields] | add') $(awk '{s += $1 == "implicit" ? $2 : $3} END {print s}' "$tmp/switches") $(json ylfib "[.types[] | $explicit | .created] | add")" \
            "$tasks $tasks $tasks"
        clean ylfib
        rm -rf "$tmp/ylfib.out"
    done
else
    echo "SKIP: the OpenMP part: clang with libomp was not found at build time" \
        "(install clang and libomp-dev, or run ./scripts/setup)"
fi

# pthreads: each start function is a task, child of the creating task
if [ "$asan" = 1 ]; then
    echo "SKIP: the pthread wrapper part: AddressSanitizer intercepts pthread_create itself and" \
        "must be preloaded first, so a wrapper preloaded after it is never called"
else
user_preload=$progs/user_preload.so
[ -n "${LD_PRELOAD:-}" ] && user_preload="$LD_PRELOAD:$user_preload"
LD_PRELOAD=$user_preload run_ts threads -- "$progs/threads"
check "threads: exit status passed on" "$status" 3
check "threads: stdout" "$(cat "$tmp/threads.stdout")" "threads done"
check "threads: the user's LD_PRELOAD kept" "$(grep -c 'user preload loaded into threads' "$tmp/threads.stderr")" 1
check "threads: work tasks" "$(calls threads "work (")" 4
check "threads: spawner tasks (ended by pthread_exit)" "$(calls threads "spawner (")" 1
check "threads: work below spawner in the tree" "$(json threads '
    .tree as $t | [ $t[] | select(.type | startswith("work (")) | .parent as $p |
      $t[] | select(.node == $p) | .type ] | sort | join(",")' | sed 's/ ([^)]*)//g')" "spawner,threads"
clean threads
LD_PRELOAD=$user_preload run_ts threads_sampled --sample-ms 100 -- "$progs/threads"
check "threads with the sampler on: taskscope's own threads are no tasks" \
    "$(json threads_sampled '[.types[] | select(.calls > 0 or .unfinished > 0) | .name | sub(" \\(.*"; "")] | sort | join(",")')" \
    "spawner,threads,work"
clean threads_sampled

# mutex and condition waits, on request: ~50 ms each, named by the caller
run_ts waits --pthread-waits -- "$progs/threads" waits
check "waits: output" "$(cat "$tmp/waits.stdout")" "waits done"
check "waits: one mutex wait of 30-500 ms in waiter" "$(json waits '[.types[] | select(.name | startswith("mutex wait waiter (threads.c:")) | select(.calls == 1 and .self_ns.sum > 3e7 and .self_ns.sum < 5e8)] | length')" 1
check "waits: one condition wait of 30-500 ms in waiter" "$(json waits '[.types[] | select(.name | startswith("condition wait waiter (threads.c:")) | select(.calls == 1 and .self_ns.sum > 3e7 and .self_ns.sum < 5e8)] | length')" 1
check "waits: none of taskscope's own locks" "$(json waits '[.types[] | select(.name | test("tscope|typecache|names"))] | length')" 0
clean waits
run_ts nowaits -- "$progs/threads" waits
check "waits off by default" "$(json nowaits '[.types[] | select(.name | test("wait "))] | length')" 0
TASKSCOPE_PTHREAD_WAITS=maybe run_ts badwaits -- "$progs/threads" waits
check "waits: a bad value said in one line, the program runs" \
    "$status $(grep -c 'TASKSCOPE_PTHREAD_WAITS=maybe' "$tmp/badwaits.stderr")" "0 1"

# 10,000 threads over the run, more than TASKSCOPE_MAX_THREADS (1024) slots:
# the slots of ended threads are reused, every thread is measured
run_ts many -- "$progs/threads" 10000
check "10,000 threads: exit status" "$status" 0
check "10,000 threads: output" "$(cat "$tmp/many.stdout")" "threads 10000"
check "10,000 threads: no warning (slots reused)" "$(grep -c 'more than 1024 threads' "$tmp/many.stderr")" 0
check "10,000 threads: all measured" "$(calls many "work (")" 10000
check "10,000 threads: nothing dropped" "$(json many .totals.events_dropped)" 0
fi

# bad input: as a shell would
"$ts" run -- "$tmp/no-such-program" 2>"$tmp/nf.err"
check "missing program: status 127" "$?" 127
check "missing program: message" "$(grep -c 'command not found' "$tmp/nf.err")" 1
touch "$tmp/notexec"
"$ts" run -- "$tmp/notexec" 2>"$tmp/ne.err"
check "not executable: status 126" "$?" 126
check "not executable: message" "$(grep -c 'not executable' "$tmp/ne.err")" 1

echo "$((fails == 0 ? 1 : 0)) passed, $((fails > 0 ? 1 : 0)) failed ($fails failed checks)"
[ "$fails" -eq 0 ]

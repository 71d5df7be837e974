#!/usr/bin/env bash
# test_critpath.sh - critical paths of known task graphs of busy-wait tasks
# (tests/omp/paths.c) under `taskscope run`, through OMPT: the program built
# by clang (libomp) and by gcc (libgomp, run on libomp).  For each graph: the
# path's explicit tasks exactly (which branch is longest is decided by the
# tasks' measured self times: the machine may stretch a task), no wait on
# the path, every task on it counted whole (its work on the path is its self
# time), and the path's length against the self times of its tasks; a
# barrier between two phases of opposite imbalance joins the threads.
#   usage: test_critpath.sh TASKSCOPE_BINARY BUILD_DIR
set -u
ts=$1
build=$2
progs=$build/tests/omp
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh" # fail, check, jq
if [ "$(ldd "$build/libtaskscope.so" | grep -c libasan)" -gt 0 ]; then
    export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS=detect_leaks=0
fi
export TASKSCOPE_SAMPLE_MS=0

# jq definitions over a profile.json with tasks[]: explicit tasks (not the
# runtime's constructs) are named a, b, c, ... in creation order.
defs='
  def construct: test("^(initial task|parallel |implicit task |single |barrier|taskwait|taskgroup)");
  def name($id): (.types[] | select(.id == $id) | .name);
  def explicit: [$root.tasks[] | select(.type_id as $i | $root | name($i) | construct | not)]
                | sort_by(.create_ns);
  def letter($id): (explicit | map(.id) | index($id)) as $k
                   | if $k == null then null else ([$k + 97] | implode) end;
  def self_of($l): (explicit[($l | explode[0]) - 97].self_ns);
  def task($id): ($root.tasks[] | select(.id == $id));
  def waits: [$root.types[] | select(.wait) | .id];'
q() { # name, jq filter (after defs; $root is the profile)
    jq -r ". as \$root | $defs $2" "$tmp/$1.out/profile.json" 2>&1
}

for build_kind in clang gcc; do
    prog=$progs/paths
    [ "$build_kind" = gcc ] && prog=$progs/paths-gcc
    [ -x "$prog" ] || { fail "$prog is missing"; continue; }
    for graph in chain diamond forkjoin idle phases serial; do
        name=$build_kind-$graph
        arg=$graph threads=2
        [ "$graph" = serial ] && arg=forkjoin threads=1 # tasks run where they are made, or in the taskwait
        OMP_NUM_THREADS=$threads TASKSCOPE_OUTPUTS=all,tasks "$ts" run -o "$tmp/$name.out" --no-summary \
            -- "$prog" "$arg" >"$tmp/$name.stdout" 2>"$tmp/$name.stderr"
        check "$name: exit status" "$?" 0
        check "$name: a path" "$(q "$name" '.critical_path.steps | length > 0')" true
        # the explicit tasks on the path, in order
        path=$(q "$name" '[.critical_path.steps[] | letter(.task) | select(. != null)] | join(" ")')
        case $graph in
        chain) want="a b c" ;;
        diamond) want="a $(q "$name" 'if self_of("b") >= self_of("c") then "b" else "c" end') d" ;;
        forkjoin) want=$(q "$name" '[range(4) | [. + 97] | implode] | max_by(self_of(.))') ;;
        idle | phases) want="" ;;
        serial) # inline (begun before the taskwait): all in a row; else the longest
            want=$(q "$name" '([$root.tasks[] | select(.type_id as $i | $root | name($i) | startswith("taskwait"))][0].begin_ns) as $tw
                   | if ([explicit[] | .begin_ns < $tw] | all) then "a b c d"
                     else [range(4) | [. + 97] | implode] | max_by(self_of(.)) end') ;;
        esac
        check "$name: the path's tasks" "$path" "$want"
        # what links them: the dependences, then the join of the last
        case $graph in
        chain | diamond)
            # depend(inout) after inout reads and writes: RAW+WAW; the
            # diamond's c reads y from a, d reads z1 or z2: RAW; each dependence
            # names its first address
            want="RAW+WAW RAW+WAW joined"
            [ "$graph" = diamond ] && want="$(q "$name" 'if self_of("b") >= self_of("c") then "RAW+WAW" else "RAW" end') RAW joined"
            check "$name: dependence edges between the path's tasks" \
                "$(q "$name" '[.critical_path.steps[] | select(letter(.task) != null) | .next
                              | sub(" on 0x[0-9a-f]+$"; "")] | join(" ")')" "$want"
            check "$name: each dependence step names its address" \
                "$(q "$name" '[.critical_path.steps[] | select(letter(.task) != null) | .next
                              | select(startswith("RAW")) | test(" on 0x[0-9a-f]+$")] | all')" true ;;
        forkjoin | serial)
            check "$name: the last task joined, then the single's 20 ms (or more: a busy machine) after its taskwait" \
                "$(q "$name" '.critical_path.steps as $s | [range($s | length) | select(letter($s[.].task) != null)][-1] as $k
                   | [$s[$k].next, ($s[$k + 1].type_id as $i | $root | name($i) | startswith("single ")),
                      ($s[$k + 1].work_ns > 19.5e6 and $s[$k + 1].work_ns <= ($s[$k + 1].task as $id | $root | task($id) | .self_ns) + 1e3)] | map(tostring) | join(" ")')" \
                "joined true true" ;;
        phases)
            check "$name: the first thread's implicit task until the barrier, then the second's after it" \
                "$(q "$name" '.critical_path.steps as $s | [range($s | length) | select($s[.].next == "barrier")] as $b
                   | ($s[$b[0]].task | . as $id | $root | task($id)) as $first
                   | ($s[$b[0] + 1].task | . as $id | $root | task($id)) as $second
                   | [($b | length), ([$first, $second] | map(.type_id as $i | $root | name($i) | startswith("implicit task")) | all),
                      ($first.id != $second.id), ($first.thread == ($root.tasks[] | select(.parent == 0) | .thread)),
                      ($s[$b[0]].work_ns > 45e6 and $s[$b[0] + 1].work_ns > 45e6)] | map(tostring) | join(" ")')" \
                "1 true true true true" ;;
        idle)
            check "$name: no barrier on the path" \
                "$(q "$name" '[.critical_path.steps[] | select(.next == "barrier")] | length')" 0
            check "$name: the path's implicit task is the one with more work" \
                "$(q "$name" '[.critical_path.steps[] | select(.type_id as $i | $root | name($i) | startswith("implicit task")) | .task] | unique
                   == [[$root.tasks[] | select(.type_id as $i | $root | name($i) | startswith("implicit task"))] | max_by(.self_ns) | .id]')" \
                true ;;
        esac
        check "$name: no wait on the path" \
            "$(q "$name" 'waits as $w | [.critical_path.steps[] | select(.type_id as $i | $w | index($i))] | length')" 0
        check "$name: waits are marked" "$(q "$name" 'waits | length > 0')" true
        # each explicit task on it is whole: its work there is its self time
        check "$name: the path's tasks whole" \
            "$(q "$name" '[.critical_path.steps[] | select(letter(.task) != null)
                           | (.work_ns - (.task as $id | $root | task($id) | .self_ns)) | fabs < 1e4] | all')" true
        # the length against the self times of the tasks it goes through: at
        # least its explicit tasks' (whole on it), at most all its tasks'
        # (the runtime's constructs did some of theirs off the path: making
        # the other tasks)
        check "$name: length against the self times of its tasks" \
            "$(q "$name" '.critical_path.length_ns as $l | [.critical_path.steps[].task] | unique
                           | map(. as $id | $root | task($id)) as $ts
                           | ([$ts[] | select(letter(.id) != null) | .self_ns] | add // 0) as $explicit
                           | ([$ts[].self_ns] | add) as $all
                           | if $explicit - 1e3 <= $l and $l <= $all + 1e3 then "within"
                             else "\($explicit) <= \($l) <= \($all) fails" end')" within
        check "$name: parallelism is work / length" \
            "$(q "$name" '.critical_path | ((.work_ns / .length_ns) - .parallelism) | fabs < 1e-6')" true
        # the same path from the report
        "$ts" report --deps "$tmp/$name.out" >"$tmp/$name.deps" 2>&1 || fail "$name: report --deps"
        check "$name: report --deps lists the steps" \
            "$(awk '$1 ~ /^[0-9]+$/ && NF >= 6' "$tmp/$name.deps" | wc -l)" \
            "$(q "$name" '.critical_path.steps | length')"
    done
done
# a capped instance graph (the top of the task tree: the runtime's tasks, not
# the chain): a path all the same, through the tasks kept, and it says so
name=capped
TASKSCOPE_INSTANCE_CAP=5 OMP_NUM_THREADS=2 "$ts" run -o "$tmp/$name.out" --no-summary -- \
    "$progs/paths" chain >"$tmp/$name.stdout" 2>"$tmp/$name.stderr"
check "$name: exit status" "$?" 0
check "$name: tasks left out, as the totals say" \
    "$(jq -r '[.critical_path.tasks_cut_off, .totals.instances_cut_off > 0, .critical_path.tasks == .totals.instances] | map(tostring) | join(" ")' "$tmp/$name.out/profile.json")" \
    "$(jq -r '.totals.instances_cut_off' "$tmp/$name.out/profile.json") true true"
check "$name: a path" "$(jq -r '.critical_path.steps | length > 0' "$tmp/$name.out/profile.json")" true
"$ts" report --deps "$tmp/$name.out" >"$tmp/$name.deps" 2>&1 || fail "$name: report --deps"
check "$name: report --deps says what the path covers" \
    "$(grep -c "cap (TASKSCOPE_INSTANCE_CAP keeps the top of the task tree) left out $(jq -r '.totals.instances_cut_off' "$tmp/$name.out/profile.json") tasks: the path runs through the tasks kept" "$tmp/$name.deps")" 1

echo "--- report --deps of the clang chain"
cat "$tmp/clang-chain.deps"

echo "$((fails == 0 ? 1 : 0)) passed, $((fails > 0 ? 1 : 0)) failed ($fails failed checks)"
[ "$fails" -eq 0 ]

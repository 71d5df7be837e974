#!/usr/bin/env bash
# test_filter.sh - the filter file (TASKSCOPE_FILTER_FILE, `taskscope run
# --filter`, docs/filter.md) on tests/omp/filtered.c through OMPT:
# - a filter that excludes leaf*, includes "leaf_kept *" again (a later rule
#   wins) and excludes the file *_other.c: the excluded types are absent from
#   profile.json, their 13 tasks and 3 dependence edges counted in its totals
#   and in the summary's line; the included one is there with its 8 calls;
#   the 8 leaf_a tasks, run undeferred inside parent_of_leaves, are in its
#   self time (against leaf_kept's 8 tasks of the same work, in the same
#   run: no absolute time is asserted), which without the filter they are
#   not;
# - the same rules in the other order: the exclude, now last, wins;
# - without a filter the totals have no filter fields;
# - a file that does not parse: `run --filter` says the file and line in one
#   line and exits 2 before starting anything; the library alone
#   (TASKSCOPE_FILTER_FILE) warns once and measures everything.
#   usage: test_filter.sh TASKSCOPE_BINARY PROGRAM
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
unset TASKSCOPE_FILTER_FILE

calls() { # folder, type name prefix -> calls of the types named so, summed
    jq --arg p "$2" '[.types[] | select(.name | startswith($p + " (")) | .calls] | add // 0' \
        "$1/profile.json"
}
self_ns() { # folder, type name prefix -> self time, ns
    jq --arg p "$2" '[.types[] | select(.name | startswith($p + " (")) | .self_ns.total] | add // 0' \
        "$1/profile.json"
}
total() { jq ".totals.$2 // \"absent\"" "$1/profile.json"; }

# ---- no filter ---------------------------------------------------------
"$ts" run -q -o "$tmp/plain" --outputs json -- "$prog" >/dev/null 2>"$tmp/plain.err" ||
    fail "plain run: $(cat "$tmp/plain.err")"
check "no filter: leaf_a calls" "$(calls "$tmp/plain" leaf_a)" 8
check "no filter: other_task calls" "$(calls "$tmp/plain" other_task)" 3
check "no filter: dependencies" "$(total "$tmp/plain" dependencies)" 3
check "no filter: no tasks_filtered" "$(total "$tmp/plain" tasks_filtered)" '"absent"'
p=$(self_ns "$tmp/plain" parent_of_leaves)
k=$(self_ns "$tmp/plain" leaf_kept)
check "no filter: parent's self time below half of 8 leaves' work ($p vs $k ns)" \
    "$(awk -v p="$p" -v k="$k" 'BEGIN { print (k > 0 && p < k / 2) ? "yes" : "no" }')" yes

# ---- the filter --------------------------------------------------------
cat >"$tmp/filter.txt" <<'END'
# leaf tasks are too small to measure, but the kept ones
TASKSCOPE_TYPE_NAMES_BEGIN
  EXCLUDE leaf*
  INCLUDE leaf_kept *
TASKSCOPE_TYPE_NAMES_END

TASKSCOPE_FILE_NAMES_BEGIN
  EXCLUDE *_other.c
TASKSCOPE_FILE_NAMES_END
END
"$ts" run -o "$tmp/f" --outputs json --filter "$tmp/filter.txt" -- "$prog" >"$tmp/f.out" \
    2>"$tmp/f.err" || fail "filtered run: $(cat "$tmp/f.err")"
check "filter: leaf_a absent" "$(jq '[.types[] | select(.name | startswith("leaf_a "))] | length' "$tmp/f/profile.json")" 0
check "filter: leaf_dep absent" "$(jq '[.types[] | select(.name | startswith("leaf_dep "))] | length' "$tmp/f/profile.json")" 0
check "filter (file rule): other_task absent" "$(jq '[.types[] | select(.name | startswith("other_task "))] | length' "$tmp/f/profile.json")" 0
check "filter (include after exclude): leaf_kept calls" "$(calls "$tmp/f" leaf_kept)" 8
check "filter: dep_kept calls" "$(calls "$tmp/f" dep_kept)" 2
check "filter: parent_of_leaves calls" "$(calls "$tmp/f" parent_of_leaves)" 1
check "filter: tasks_filtered" "$(total "$tmp/f" tasks_filtered)" 13
check "filter: dependencies_filtered" "$(total "$tmp/f" dependencies_filtered)" 3
check "filter: dependencies" "$(total "$tmp/f" dependencies)" 0
check "filter: tasks_created" "$(total "$tmp/f" tasks_created)" \
    "$(($(total "$tmp/plain" tasks_created) - 13))"
p=$(self_ns "$tmp/f" parent_of_leaves)
k=$(self_ns "$tmp/f" leaf_kept)
check "filter: the leaves' work in the parent's self time ($p vs $k ns)" \
    "$(awk -v p="$p" -v k="$k" 'BEGIN { print (k > 0 && p >= k / 2) ? "yes" : "no" }')" yes
check "filter: the summary's line" \
    "$(cat "$tmp/f.out" "$tmp/f.err" | grep -c '^filter file: 13 tasks and 3 dependencies left out')" 1
check "filter: no warning" "$(grep -c warning "$tmp/f.err")" 0

# ---- the same rules, the exclude last: it wins ----------------------------
printf 'TASKSCOPE_TYPE_NAMES_BEGIN\nINCLUDE leaf_kept *\nEXCLUDE leaf*\nTASKSCOPE_TYPE_NAMES_END\n' \
    >"$tmp/order.txt"
TASKSCOPE_FILTER_FILE=$tmp/order.txt "$ts" run -q -o "$tmp/o" --outputs json -- "$prog" \
    >/dev/null 2>"$tmp/o.err" || fail "order run: $(cat "$tmp/o.err")"
check "order: leaf_kept calls" "$(calls "$tmp/o" leaf_kept)" 0
check "order: other_task calls" "$(calls "$tmp/o" other_task)" 3
check "order: tasks_filtered" "$(total "$tmp/o" tasks_filtered)" 18

# ---- bad files -------------------------------------------------------------
bad() { # name, expected message after "taskscope run: --filter FILE", file text
    printf '%b' "$3" >"$tmp/$1.txt"
    "$ts" run -o "$tmp/never-$1" --filter "$tmp/$1.txt" -- "$prog" >"$tmp/$1.out" 2>"$tmp/$1.err"
    check "bad $1: exit status" "$?" 2
    check "bad $1: one line" "$(wc -l <"$tmp/$1.err")" 1
    check "bad $1: message" "$(cat "$tmp/$1.err")" "taskscope run: --filter $tmp/$1.txt$2"
    [ ! -e "$tmp/never-$1" ] || fail "bad $1: the program ran"
}
bad outside ":2: \"EXCLUDE\" outside a block (rules go between TASKSCOPE_TYPE_NAMES_BEGIN and _END, or TASKSCOPE_FILE_NAMES_BEGIN and _END)" \
    '# comment\nEXCLUDE foo\n'
bad keyword ":3: \"EXLCUDE\" is no rule (expected EXCLUDE or INCLUDE and a pattern, or TASKSCOPE_TYPE_NAMES_END)" \
    'TASKSCOPE_TYPE_NAMES_BEGIN\n  EXCLUDE a*\n  EXLCUDE b*\nTASKSCOPE_TYPE_NAMES_END\n'
bad unclosed ":1: TASKSCOPE_FILE_NAMES_BEGIN has no TASKSCOPE_FILE_NAMES_END before the end of the file" \
    'TASKSCOPE_FILE_NAMES_BEGIN\n  EXCLUDE a.c\n'
bad slash ":2: file pattern \"src/*.c\" has a '/': types name their file without its folder (fib.c), so the pattern matches that name" \
    'TASKSCOPE_FILE_NAMES_BEGIN\n  EXCLUDE src/*.c\nTASKSCOPE_FILE_NAMES_END\n'
bad empty ":2: INCLUDE without a pattern" \
    'TASKSCOPE_TYPE_NAMES_BEGIN\n  INCLUDE  \nTASKSCOPE_TYPE_NAMES_END\n'
"$ts" run -o "$tmp/never" --filter "$tmp/missing.txt" -- "$prog" >/dev/null 2>"$tmp/missing.err"
check "missing file: exit status" "$?" 2
check "missing file: message" "$(cat "$tmp/missing.err")" \
    "taskscope run: --filter $tmp/missing.txt: No such file or directory"

"$ts" run -o "$tmp/never" --filter "$tmp" -- "$prog" >/dev/null 2>"$tmp/dir.err"
check "a folder: exit status" "$?" 2
check "a folder: message" "$(cat "$tmp/dir.err")" "taskscope run: --filter $tmp: Is a directory"

# the library alone: one warning, everything measured
TASKSCOPE_FILTER_FILE=$tmp/keyword.txt "$ts" run -o "$tmp/lib" --outputs json -- "$prog" \
    >/dev/null 2>"$tmp/lib.err" || fail "library run: $(cat "$tmp/lib.err")"
check "library alone, bad file: one warning" "$(grep -c 'TASKSCOPE_FILTER_FILE' "$tmp/lib.err")" 1
check "library alone, bad file: the warning" "$(grep 'TASKSCOPE_FILTER_FILE' "$tmp/lib.err")" \
    "taskscope: warning: TASKSCOPE_FILTER_FILE: $tmp/keyword.txt:3: \"EXLCUDE\" is no rule (expected EXCLUDE or INCLUDE and a pattern, or TASKSCOPE_TYPE_NAMES_END); measuring every task"
check "library alone, bad file: leaf_a measured" "$(calls "$tmp/lib" leaf_a)" 8
check "library alone, bad file: no filter fields" "$(total "$tmp/lib" tasks_filtered)" '"absent"'

if [ "$fails" -gt 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "all filter checks passed"

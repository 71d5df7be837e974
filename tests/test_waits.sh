#!/usr/bin/env bash
# test_waits.sh - waiting drawn as waiting (issue 31, point 1): a thread
# that waits (a task of a waiting type, TSCOPE_TYPE_WAIT, on its top: a
# taskwait, a barrier, an MPI wait) is not working in heatmap.svg's data
# (threads.csv: the working fractions, then the waiting ones), heatmap.gp
# says so, profile.json's timeline has the waiting time beside the busy
# time; and every task having a type, concurrency.csv has no "(untyped)"
# column.  Runs tests/waits_heatmap.c (the API: one thread computes 300 ms
# while the other waits) and, when built, tests/omp/waits.c (OpenMP: a
# barrier where thread 1 waits for thread 0's task; a quicksort with depend
# clauses and taskwaits).
# usage: test_waits.sh TASKSCOPE WAITS_HEATMAP OMP_WAITS_OR_EMPTY
set -uo pipefail
ts=$1 program=$2 omp=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# verdict DIR WHAT: threads.csv of DIR has a thread that mostly waited (its
# working bins sum to under a tenth of its waiting ones) and one that
# mostly worked (the reverse)
verdict() {
  awk -F, -v what="$2" '
    NR == 1 { n = (NF - 2) / 2; next }
    { for (k = 1; k <= n; k++) { w[k] += $(2 + k); a[k] += $(2 + n + k) } }
    END {
      for (k = 1; k <= n; k++) {
        if (a[k] > 0 && w[k] < 0.1 * a[k]) waiter = k
        if (w[k] > 0 && a[k] < 0.1 * w[k]) worker = k
        printf "thread %d: working %.3f, waiting %.3f (bin fractions summed)\n", k, w[k], a[k] > "/dev/stderr"
      }
      if (!waiter || !worker) { print what ": no thread mostly waiting and one mostly working"; exit 1 }
    }' "$1/threads.csv"
}

untyped() { # DIR WHAT: no "(untyped)" column in concurrency.csv
  if [ ! -s "$1/concurrency.csv" ]; then
    fail "$2: no concurrency.csv"
  elif head -1 "$1/concurrency.csv" | grep -q "(untyped)"; then
    fail "$2: concurrency.csv has an (untyped) column: $(head -1 "$1/concurrency.csv")"
  else
    ok "$2: no (untyped) column in concurrency.csv"
  fi
}

echo "-- the API: one thread computes 300 ms, the other waits for it"
"$ts" run -q -o "$tmp/api" -- "$program" >/dev/null 2>"$tmp/api.err" || fail "run: $(cat "$tmp/api.err")"
if msg=$(verdict "$tmp/api" "api" 2>"$tmp/api.v"); then ok "api: the waiting thread is not working"; else
  fail "$msg: $(cat "$tmp/api.v")"; fi
grep -q "^set title 'rank 0: threads x time, the fraction of each bin a thread was working (waits excluded)'" \
  "$tmp/api/heatmap.gp" && ok "heatmap.gp: its title says waits are excluded" ||
  fail "heatmap.gp: title $(grep '^set title' "$tmp/api/heatmap.gp")"
grep -q "^set cblabel 'working'$" "$tmp/api/heatmap.gp" ||
  fail "heatmap.gp: colour bar $(grep '^set cblabel' "$tmp/api/heatmap.gp")"
untyped "$tmp/api" "api"
if command -v jq >/dev/null; then
  # the waiting time of the timeline is the waiting type's self time
  r=$(jq '(.timeline.wait_ns | add) as $w | [.types[] | select(.name == "wait-for-compute") | .self_ns.sum][0] as $s
          | [.timeline.busy_ns, .timeline.wait_ns] | transpose | all(.[0] >= .[1])
            and ($w - $s | fabs) <= $s * 0.01 + 1000 and $s > 2e8' "$tmp/api/profile.json")
  [ "$r" = true ] && ok "profile.json: timeline.wait_ns is the waiting type's self time, never above busy_ns" ||
    fail "profile.json: timeline $(jq -c '.timeline | {w: (.wait_ns | add), b: (.busy_ns | add)}' "$tmp/api/profile.json")"
fi

# the OpenMP program is built without sanitizers, as a user's: an ASan
# build's tool needs the ASan runtime loaded first (as test_adapters does);
# a TSan build's cannot run in it (TSan must instrument the program)
case $(ldd "$ts") in
  *libtsan*) tsan=1 ;;
  *libasan*)
    tsan=0
    export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS=detect_leaks=0 # libomp keeps its thread pool at exit
    ;;
  *) tsan=0 ;;
esac
if [ "$tsan" = 1 ]; then
  echo "SKIPPED the OpenMP cases: a ThreadSanitizer build's OMPT tool cannot run in an uninstrumented OpenMP program"
elif [ -n "$omp" ] && [ -x "$omp" ]; then
  echo "-- OpenMP: thread 1 waits at a barrier for thread 0's task"
  "$ts" run -q -o "$tmp/omp" -- "$omp" barrier >/dev/null 2>"$tmp/omp.err" || fail "run: $(cat "$tmp/omp.err")"
  if msg=$(verdict "$tmp/omp" "omp barrier" 2>"$tmp/omp.v"); then ok "omp: the thread at the barrier is not working"; else
    fail "$msg: $(cat "$tmp/omp.v")"; fi
  untyped "$tmp/omp" "omp barrier"
  echo "-- OpenMP: a quicksort with depend clauses, 4 threads, three times"
  for i in 1 2 3; do
    OMP_NUM_THREADS=4 "$ts" run -q -o "$tmp/qs$i" -- "$omp" qs 300000 >/dev/null 2>"$tmp/qs.err" ||
      fail "run: $(cat "$tmp/qs.err")"
    untyped "$tmp/qs$i" "omp quicksort ($i)"
  done
else
  echo "SKIPPED the OpenMP cases: tests/omp/waits not built (no clang)"
fi

[ "$fails" = 0 ] && echo "test_waits: all passed" || echo "test_waits: $fails failed"
exit $((fails > 0))

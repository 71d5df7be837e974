#!/usr/bin/env bash
# live.sh - `scripts/bench live`: what the live dashboard costs.
# dashboard_64procs: `taskscope dashboard` fed by 64 simulated processes at
#   10 snapshots/s each (bench/live_sim.c: snapshots of a real one's size and
#   shape) with the page open in headless Chromium: the dashboard's CPU
#   (cpu_percent_of_core, from /proc over the middle of the run) and the
#   latency from a snapshot's taking (its "wall") to the page's redraw that
#   drew it (latency_ms_median, _p90; web/app.js measures it).
# live_auth: the live channel's authentication (bench/live_mac.c): the
#   handshake's computations, sealing a frame (sequence number and
#   keyed BLAKE2b-256) and checking one, per snapshot size.
# stencil_live: the MPI + OpenMP stencil (examples/mpi/stencil.c) at 4
#   ranks under `taskscope run`, without and with --live to a running
#   dashboard (each repetition without, with, with, without): the program's
#   loop time (time_ratio, the median of the repetitions' ratios, min, max)
#   and the live thread's own CPU per second of run (live_cpu_per_s, from the
#   last snapshots' live_cpu_s), which does not depend on scheduling noise.
#   usage: live.sh BUILD_DIR REPS
set -euo pipefail
build=$1
reps=$2
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
for f in "$build/taskscope" "$build/bench/bench_live_sim" "$build/bench/bench_live_mac" "$build/examples/stencil"; do
    [ -x "$f" ] || { echo "live.sh: $f is missing (run ./scripts/setup)" >&2; exit 1; }
done
[ -d "$src/web/node_modules/playwright-core" ] || { echo "live.sh: web/node_modules is missing (run ./scripts/web)" >&2; exit 1; }
[ -x /usr/bin/chromium ] || { echo "live.sh: /usr/bin/chromium is missing (scripts/deps installs it)" >&2; exit 1; }

line() { # variant metric value unit
    awk -v v="$1" -v m="$2" -v x="$3" -v u="$4" \
        'BEGIN {printf "{\"bench\":\"live\",\"variant\":\"%s\",\"metric\":\"%s\",\"value\":%.6g,\"unit\":\"%s\"}\n", v, m, x, u}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# Starts a dashboard; sets url, ingest, dash_pid.
start_dashboard() {
    "$build/taskscope" dashboard --port 0 --ingest-port 0 --web "$src/web" --exit-after 600 \
        >"$tmp/dash.out" 2>"$tmp/dash.err" &
    dash_pid=$!
    pids+=("$dash_pid")
    for _ in $(seq 100); do
        grep -q 'TASKSCOPE_LIVE=' "$tmp/dash.out" 2>/dev/null && break
        sleep 0.05
    done
    url=$(sed -n 's/^taskscope dashboard: \(http:[^ ]*\) .*/\1/p' "$tmp/dash.out")
    ingest=$(sed -n 's/.*(TASKSCOPE_LIVE=\([^)]*\))$/\1/p' "$tmp/dash.out")
    [ -n "$url" ] && [ -n "$ingest" ] || { echo "live.sh: the dashboard did not start: $(cat "$tmp/dash.err")" >&2; exit 1; }
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# ---- live_auth: what sealing and checking a frame's MAC costs ----
"$build/bench/bench_live_mac" 20000

# ---- dashboard_64procs ----
start_dashboard
duration=16
"$build/bench/bench_live_sim" "$ingest" 64 10 "$duration" >"$tmp/sim.out" &
sim=$!
pids+=("$sim")
node "$src/bench/live_latency.mjs" "$url" $((duration - 2)) 4 >"$tmp/lat.json" &
browser=$!
pids+=("$browser")
sleep 4
c0=$(cpu_ticks "$dash_pid")
t0=$EPOCHREALTIME
sleep 10
c1=$(cpu_ticks "$dash_pid")
t1=$EPOCHREALTIME
wait "$sim"
wait "$browser"
hz=$(getconf CLK_TCK)
v=dashboard_64procs
line $v cpu_percent_of_core "$(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" -v hz="$hz" 'BEGIN {print 100 * (b - a) / hz / (e - s)}')" "%"
line $v snapshots_sent "$(cat "$tmp/sim.out")" count
line $v latency_ms_median "$(jq '.median * 1000' "$tmp/lat.json")" ms
line $v latency_ms_p90 "$(jq '.p90 * 1000' "$tmp/lat.json")" ms
line $v latency_points "$(jq '.n' "$tmp/lat.json")" count
line $v arrival_ms_median "$(jq '.arrival_median * 1000' "$tmp/lat.json")" ms
line $v arrival_ms_p90 "$(jq '.arrival_p90 * 1000' "$tmp/lat.json")" ms
kill "$dash_pid" 2>/dev/null || true
wait "$dash_pid" 2>/dev/null || true

# ---- stencil_live ----
start_dashboard
export OMPI_MCA_btl_vader_single_copy_mechanism=none
stencil=(mpirun --allow-run-as-root --oversubscribe -np 4 -x OMP_NUM_THREADS=1)
args=(2500000 100 16)
run() { # live (0/1): prints the loop time
    local live=()
    [ "$1" = 1 ] && live=(--live="$ingest")
    rm -rf "$tmp/ts"
    "${stencil[@]}" "$build/taskscope" run -q --no-summary "${live[@]}" -o "$tmp/ts" -- \
        "$build/examples/stencil" "${args[@]}" >"$tmp/out" 2>"$tmp/err" ||
        { echo "live.sh: the stencil failed: $(cat "$tmp/err")" >&2; exit 1; }
    sed -n 's/^stencil: .*, \([0-9.]*\) s$/\1/p' "$tmp/out"
}
run 0 >/dev/null # warm the page cache
for ((r = 0; r < reps; r++)); do
    a=$(run 0)
    b=$(run 1)
    c=$(run 1)
    d=$(run 0)
    awk -v a="$a" -v b="$b" -v c="$c" -v d="$d" 'BEGIN {print (b + c) / (a + d)}' >>"$tmp/ratios"
done
# the live thread's CPU per second of run: each process's last snapshot
curl -s "${url}api/processes" >"$tmp/procs.json"
for id in $(jq -r '.[].id' "$tmp/procs.json"); do
    curl -s "${url}api/history?id=$id" | jq -r 'last | "\(.live_cpu_s) \(.t)"'
done | awk '$2 > 0 {print $1 / $2}' >"$tmp/cpu"
v=stencil_live
line $v time_ratio "$(median <"$tmp/ratios")" ratio
line $v time_ratio_min "$(sort -g "$tmp/ratios" | head -1)" ratio
line $v time_ratio_max "$(sort -g "$tmp/ratios" | tail -1)" ratio
line $v live_cpu_per_s "$(median <"$tmp/cpu")" "s/s"
line $v live_processes "$(wc -l <"$tmp/cpu")" count

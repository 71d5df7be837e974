#!/usr/bin/env bash
# make_recover_seeds.sh BUILD - makes the seeds of the fuzz target `recover`
# (tests/fuzz/corpus/recover/) again from real runs killed by SIGKILL: each
# is the mapping such a run left (.taskscope-PID.map, a link into /dev/shm
# or a plain file), in fuzz_recover.c's encoding (its length, the time of
# death, then its nonzero bytes as patches over zeros).  The mapping holds
# the process's structs as they are (no layout stamp): after a change of
# them the old seeds read as damaged blocks, so run this then.
#   flood        endings flood 50: one worker, tasks by id, the main
#                thread's last one still running; time of death unknown
#   threads      endings flood_h 50 3: three workers, tasks through handles
#                (the shards' task records); the time of death given
#   header-copy  flood with the first byte of the header's magic changed:
#                the reader takes the header's copy (a block) instead
# Every run: TASKSCOPE_SAMPLE_MS=0 TASKSCOPE_INSTANCE_CAP=16
# TASKSCOPE_RING_SIZE=64, so that the mapping stays small.
set -euo pipefail
build=${1:?usage: make_recover_seeds.sh BUILD}
here=$(cd "$(dirname "$0")" && pwd)
endings=$build/tests/endings
[ -x "$endings" ] || { echo "make_recover_seeds.sh: $endings is missing (build the tests)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# encode MAP SEED DIED_NS [damage]: writes MAP in fuzz_recover.c's encoding;
# "damage" changes the header's first byte
encode() {
  python3 - "$@" <<'EOF'
import struct, sys
src, out, died = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = bytearray(open(src, "rb").read())
if len(sys.argv) > 4:
    data[0] ^= 0x20
patches, i, n = [], 0, len(data)
while i < n:
    if not data[i]:
        i += 1
        continue
    j = i  # a run of nonzero bytes, gaps of up to 8 zeros taken along
    while j < n and (data[j] or any(data[j:j + 9])):
        j += 1
    for k in range(i, j, 65535):
        piece = bytes(data[k:min(j, k + 65535)])
        patches.append(struct.pack("<IH", k, len(piece)) + piece)
    i = j
with open(out, "wb") as f:
    f.write(struct.pack("<IQ", n, died) + b"".join(patches))
EOF
}

# run NAME ARGS...: runs endings ARGS with its mapping in $tmp/NAME, kills it
# with SIGKILL once it is ready, and leaves the mapping in $tmp/NAME.map and
# CLOCK_MONOTONIC just after the kill in $tmp/NAME.died
run() {
  local name=$1
  shift
  mkdir -p "$tmp/$name"
  env TASKSCOPE_OUTPUT_DIR_PREPARED="$tmp/$name" TASKSCOPE_OUTPUT_DIR="$tmp/$name" \
    TASKSCOPE_SAMPLE_MS=0 TASKSCOPE_INSTANCE_CAP=16 TASKSCOPE_RING_SIZE=64 \
    "$endings" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  local pid=$!
  for _ in $(seq 200); do
    grep -q ready "$tmp/$name.out" && break
    sleep 0.05
  done
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null || true
  python3 -c 'import time; print(time.monotonic_ns())' >"$tmp/$name.died"
  grep -q ready "$tmp/$name.out" || { echo "make_recover_seeds.sh: endings $* never got ready: $(cat "$tmp/$name.err")" >&2; exit 1; }
  local map=$tmp/$name/.taskscope-$pid.map
  [ -e "$map" ] || { echo "make_recover_seeds.sh: no mapping in $tmp/$name: $(ls -A "$tmp/$name")" >&2; exit 1; }
  cp "$(readlink -f "$map")" "$tmp/$name.map"
  if [ -L "$map" ]; then
    rm -f "$(readlink "$map")"
  fi
}

run flood flood 50
run threads flood_h 50 3
encode "$tmp/flood.map" "$tmp/flood.seed" 0
encode "$tmp/threads.map" "$tmp/threads.seed" "$(cat "$tmp/threads.died")"
encode "$tmp/flood.map" "$tmp/header-copy.seed" 0 damage
for s in flood threads header-copy; do
  cp "$tmp/$s.seed" "$here/corpus/recover/$s"
done
ls -l "$here/corpus/recover"

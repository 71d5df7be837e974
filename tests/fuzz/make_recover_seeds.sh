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
# and the guards of what fuzzing found, made again on today's layout:
#   deptypes     endings flood_d 50: typed dependencies (their entries'
#                directory must be rebased)
#   hi-type      threads with the first shard's hi_type at 2^31 (the fold's
#                arrays must not grow without bound)
#   death-cast   threads with the clock factor (header and copy) at 1e-300
#                (the time of death must not overflow its conversion)
#   misaligned   threads with the first shard's first types chunk pointer
#                off by 4 (refused as damaged, never a misaligned load)
# Every run: TASKSCOPE_SAMPLE_MS=0 TASKSCOPE_INSTANCE_CAP=16
# TASKSCOPE_RING_SIZE=64, so that the mapping stays small.
set -euo pipefail
build=${1:?usage: make_recover_seeds.sh BUILD}
here=$(cd "$(dirname "$0")" && pwd)
endings=$build/tests/endings
[ -x "$endings" ] || { echo "make_recover_seeds.sh: $endings is missing (build the tests)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the offsets the guards patch, from the headers of this source tree
cat >"$tmp/offsets.c" <<'EOF'
#include <stddef.h>
#include <stdio.h>
#include "profile/shard_layout.h"
int main(void)
{
    printf("{\"head\": %d, \"block\": %zu, \"b_kind\": %zu, \"b_bytes\": %zu, "
           "\"factor\": %zu, \"hi_type\": %zu, \"types0\": %zu, \"shard\": %d, "
           "\"shard_bytes\": %zu, \"head_kind\": %d}\n",
           TSCOPE__SHFILE_HEAD, sizeof(struct tscope__shblock),
           offsetof(struct tscope__shblock, kind), offsetof(struct tscope__shblock, bytes),
           offsetof(struct tscope__shfile, ns_per_tick), offsetof(struct tscope__shard, hi_type),
           offsetof(struct tscope__shard, types.near), TSCOPE__SHB_SHARD,
           sizeof(struct tscope__shard), TSCOPE__SHB_HEAD);
    return 0;
}
EOF
src=$(cd "$here/../.." && pwd)
cc -std=gnu11 -I"$src/src" -I"$src/include" -I"$build" "$tmp/offsets.c" -o "$tmp/offsets"
"$tmp/offsets" >"$tmp/offsets.json"

# encode MAP SEED DIED_NS [damage|hi-type|death-cast|misaligned]: writes MAP
# in fuzz_recover.c's encoding; "damage" changes the header's first byte, the
# others patch what their guard needs
encode() {
  python3 - "$tmp/offsets.json" "$@" <<'EOF'
import json, struct, sys
off = json.load(open(sys.argv[1]))
src, out, died = sys.argv[2], sys.argv[3], int(sys.argv[4])
data = bytearray(open(src, "rb").read())
how = sys.argv[5] if len(sys.argv) > 5 else ""

def blocks():  # (offset of the payload, kind, bytes) of every block
    at = off["head"]
    while at + off["block"] <= len(data):
        kind = struct.unpack_from("<H", data, at + off["b_kind"])[0]
        size = struct.unpack_from("<Q", data, at + off["b_bytes"])[0]
        if kind == 0:
            break
        yield at + off["block"], kind, size
        at += (off["block"] + size + 63) & ~63

def first_shard():
    for p, kind, size in blocks():
        if kind == off["shard"] and size == off["shard_bytes"]:
            return p
    sys.exit("make_recover_seeds.sh: no shard block in " + src)

if how == "damage":
    data[0] ^= 0x20
elif how == "hi-type":
    struct.pack_into("<I", data, first_shard() + off["hi_type"], 1 << 31)
elif how == "death-cast":
    struct.pack_into("<d", data, off["factor"], 1e-300)
    for p, kind, size in blocks():
        if kind == off["head_kind"]:
            struct.pack_into("<d", data, p + off["factor"], 1e-300)
elif how == "misaligned":
    p = first_shard() + off["types0"]
    struct.pack_into("<Q", data, p, struct.unpack_from("<Q", data, p)[0] + 4)
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
run deps flood_d 50
died=$(cat "$tmp/threads.died")
encode "$tmp/flood.map" "$tmp/flood.seed" 0
encode "$tmp/threads.map" "$tmp/threads.seed" "$died"
encode "$tmp/flood.map" "$tmp/header-copy.seed" 0 damage
encode "$tmp/deps.map" "$tmp/deptypes.seed" "$(cat "$tmp/deps.died")"
for g in hi-type death-cast misaligned; do
  encode "$tmp/threads.map" "$tmp/$g.seed" "$died" "$g"
done
for s in flood threads header-copy deptypes hi-type death-cast misaligned; do
  cp "$tmp/$s.seed" "$here/corpus/recover/$s"
done
ls -l "$here/corpus/recover"

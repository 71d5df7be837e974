#!/usr/bin/env bash
# make_recover_seeds.sh BUILD - makes the seeds of the fuzz target `recover`
# (tests/fuzz/corpus/recover/) again from real runs killed by SIGKILL, with
# TASKSCOPE_AGGREGATE=consumer (the mode that writes states and journals;
# by default the mapping is all there is).  The
# seeds carry the store's layout stamp, so a change of the store's structs
# turns the old ones into inputs refused as "written by another build":
# run this then (README.md in this folder says what each seed is).
#   after-checkpoints  endings flood 5, checkpoints every 20 ms, killed after
#                      0.5 s: a later state generation and an appendix
#   journaled          endings flood 60 with rings of 64 records: the rings
#                      filled before a checkpoint, so records were journaled
#   task-id-0          journaled with the first journaled record's task id
#                      set to 0 (a record the reader must refuse)
set -euo pipefail
build=${1:?usage: make_recover_seeds.sh BUILD}
here=$(cd "$(dirname "$0")" && pwd)
endings=$build/tests/endings
[ -x "$endings" ] || { echo "make_recover_seeds.sh: $endings is missing (build the tests)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run NAME N SECONDS ENV...: runs endings flood N with the journal in
# $tmp/NAME, kills it with SIGKILL after SECONDS, packs the newest state,
# the appendix and the newest journal into $tmp/NAME.seed
run() {
  local name=$1 n=$2 secs=$3
  shift 3
  mkdir -p "$tmp/$name"
  env TASKSCOPE_OUTPUT_DIR_PREPARED="$tmp/$name" TASKSCOPE_OUTPUT_DIR="$tmp/$name" \
    TASKSCOPE_AGGREGATE=consumer TASKSCOPE_SAMPLE_MS=0 TASKSCOPE_INSTANCE_CAP=16 "$@" \
    "$endings" flood "$n" >/dev/null 2>&1 &
  local pid=$!
  sleep "$secs"
  kill -KILL "$pid"
  wait "$pid" || true
  python3 - "$tmp/$name" "$tmp/$name.seed" <<'EOF'
import glob, os, struct, sys
d, out = sys.argv[1], sys.argv[2]
def newest(pattern):
    files = glob.glob(os.path.join(d, pattern))
    if not files:
        sys.exit("make_recover_seeds.sh: no %s in %s" % (pattern, d))
    return max(files, key=os.path.getmtime)
state = open(newest(".taskscope-*.state-*"), "rb").read()
apx = glob.glob(os.path.join(d, ".taskscope-*.appendix"))
appendix = open(apx[0], "rb").read() if apx else b""
journal = open(newest(".taskscope-*.journal-*"), "rb").read()
with open(out, "wb") as f:
    f.write(struct.pack("<I", len(state)) + state + struct.pack("<I", len(appendix)) + appendix + journal)
EOF
  rm -f /dev/shm/taskscope-"$pid"-* 2>/dev/null || true
}

run after-checkpoints 5 0.5 TASKSCOPE_CHECKPOINT_MS=20
run journaled 60 0.5 TASKSCOPE_RING_SIZE=64
# task-id-0: the journal's first J_RECORDS entry (kind 1) gets id 0 in its
# first record (a 32-byte header, then 32-byte records: ts, id, ...)
python3 - "$tmp/journaled.seed" "$tmp/task-id-0.seed" <<'EOF'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
(ls,) = struct.unpack_from("<I", data, 0)
(la,) = struct.unpack_from("<I", data, 4 + ls)
j = 8 + ls + la
at = j
while at + 32 <= len(data):
    magic, kind, table, slot, n = struct.unpack_from("<IHHII", data, at)
    if kind == 1:
        struct.pack_into("<Q", data, at + 32 + 8, 0)
        break
    at += 32 + ((n + 31) // 32 * 32 if kind == 4 else 0)
else:
    sys.exit("make_recover_seeds.sh: no journaled records")
open(sys.argv[2], "wb").write(data)
EOF
for s in after-checkpoints journaled task-id-0; do
  cp "$tmp/$s.seed" "$here/corpus/recover/$s"
done
ls -l "$here/corpus/recover"

#!/usr/bin/env bash
# test_cli_includes.sh - cli/ is argument parsing and printing over the
# after-the-run library's header (src/offline/offline.h, wire.h) and the
# public API (include/taskscope/): no file in cli/ includes an internal
# header of another folder (issue 29, point 1).
#
# Allowed: "offline/..." and "taskscope/..."; a quoted name without a folder
# only when that file is in cli/ itself (cli.h, dashboard.h, ...); angle
# brackets only for what is not a folder of src/ (<stdio.h>, <jansson.h>:
# the build puts src/ on the include path, so <core/core.h> would reach it
# too).  Anything else - "core/core.h", <profile/peek.h>, "../src/x.h" -
# fails the test, naming the file, line and include; so does a mention of
# tscope__g (the process's measurement state) in src/offline.  A self-check first
# runs the same check on a scratch folder with such includes and fails the
# test unless each is caught, and passes a clean one.
#   usage: test_cli_includes.sh SOURCE_DIR
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT


# The folders of src/ (core, profile, ...), whose headers are internal.
internal=$(cd "$src/src" && for d in */; do echo "${d%/}"; done)

# check DIR: prints "FILE:LINE: #include ..." for every include of DIR/*.c,
# DIR/*.h that is not allowed (files named in $2, a list, skipped); the
# exit status is 1 when there was one.
check() {
  local dir=$1 skip=${2:-} bad=0 f line num inc name first
  for f in "$dir"/*.c "$dir"/*.h; do
    [ -e "$f" ] || continue
    case " $skip " in *" $(basename "$f") "*) continue ;; esac
    num=0
    while IFS= read -r line || [ -n "$line" ]; do
      num=$((num + 1))
      [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*([\"\<])([^\"\>]+)[\"\>] ]] || continue
      inc=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]}
      first=${name%%/*}
      if [ "$inc" = '"' ]; then
        if [ "$first" = "$name" ]; then
          [ -e "$dir/$name" ] && continue # its own folder's header
        elif [ "$first" = offline ] || [ "$first" = taskscope ]; then
          continue
        fi
      else
        [ "$first" = "$name" ] && continue # <stdio.h>, <jansson.h>
        [ "$first" = offline ] || [ "$first" = taskscope ] && continue
        # <sys/stat.h>: a system folder; <core/core.h>: src/core
        if ! grep -qx -- "$first" <<<"$internal" && [ "$first" != .. ]; then
          continue
        fi
      fi
      echo "$f:$num: $line"
      bad=1
    done <"$f"
  done
  return $bad
}

fails=0

# ---- self-check: the check catches what it must, and only that ----
mkdir "$tmp/neg" "$tmp/pos"
printf '#include "own.h"\n#include "offline/offline.h"\n#include "taskscope/taskscope.h"\n#include <stdio.h>\n#include <sys/stat.h>\n#include <taskscope/model.h>\n' >"$tmp/pos/ok.c"
printf '/* own */\n' >"$tmp/pos/own.h"
if ! out=$(check "$tmp/pos"); then
  echo "FAIL: self-check: a clean folder was refused:"
  echo "$out"
  fails=$((fails + 1))
fi
n=0
for bad in '#include "core/core.h"' '#include <profile/peek.h>' '#include "../src/core/core.h"' \
  '  #  include "live/proto.h"' '#include "missing.h"' '#include "export/export.h" /* why */'; do
  n=$((n + 1))
  printf '#include <stdio.h>\n%s\n' "$bad" >"$tmp/neg/bad$n.c"
  if out=$(check "$tmp/neg" "$(cd "$tmp/neg" && ls | grep -vx "bad$n.c" | tr '\n' ' ')") ||
    ! grep -q "bad$n.c:2: " <<<"$out"; then
    echo "FAIL: self-check: '$bad' in cli/ was not caught"
    fails=$((fails + 1))
  fi
done
# ---- cli/ itself ----
if ! out=$(check "$src/cli"); then
  echo "FAIL: cli/ includes internal headers of other folders (use offline/offline.h, or"
  echo "      declare what is missing there):"
  echo "$out"
  fails=$((fails + 1))
fi
# ---- the offline library works on the objects it is given: it never
# names the process's measurement state (tscope__g; a recovery goes through
# src/lifecycle/recover.h, which owns it) ----
globals() { grep -nE '(^|[^A-Za-z0-9_])tscope__g([^A-Za-z0-9_]|$)' "$@"; }
printf 'x = tscope__g.store;\n' >"$tmp/g.c"
printf 'x = tscope__get(); /* tscope__grow */\n' >"$tmp/nog.c"
if ! globals "$tmp/g.c" >/dev/null || globals "$tmp/nog.c" >/dev/null; then
  echo "FAIL: self-check: the tscope__g search is wrong"
  fails=$((fails + 1))
fi
if out=$(globals "$src"/src/offline/*.c "$src"/src/offline/*.h); then
  echo "FAIL: src/offline uses the process's measurement state (tscope__g):"
  echo "$out"
  fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
  echo "test_cli_includes: $fails failure(s)"
  exit 1
fi
echo "test_cli_includes: cli/ includes only its own, offline/ and taskscope/ headers; src/offline names no tscope__g"

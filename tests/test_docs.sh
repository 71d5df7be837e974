#!/usr/bin/env bash
# test_docs.sh - the docs' examples run as written.
#
# Every fenced shell block in README.md and docs/*.md that follows a line
# "<!-- doc-test -->" is run with bash (errexit, pipefail) in a scratch folder
# of its own that holds links to the build (build/), the examples and the
# test data, as if the command were typed in a fresh clone after
# scripts/setup.  A block that fails, or names a file or option that does
# not exist, fails the test with its file and line.  Blocks that need what a
# test machine may lack say so in the marker: "<!-- doc-test clang -->" runs
# only when the OpenMP examples were built (clang with libomp), and says so
# otherwise; "<!-- doc-test mpi -->" only when the MPI example was built
# (mpirun may run as root here: CI does).
#   usage: test_docs.sh SOURCE_DIR BUILD_DIR
set -u
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fails=0 ran=0

# stdin: one .md file -> "BLOCKFILE<TAB>LINE<TAB>NEEDS" per marked block
# (NEEDS "-" for nothing: read collapses empty tab-separated fields), the
# block's text in BLOCKFILE ($tmp/blocks/NAME.N)
extract() {
  awk -v out="$tmp/blocks" -v file="$1" '
    /^<!-- doc-test( [a-z]+)? -->$/ { want = 1; needs = $3 == "-->" ? "-" : $3; next }
    want && /^```(sh|bash)$/ { inblock = 1; want = 0; n++; line = NR + 1
                               f = sprintf("%s/%s.%d", out, file, n)
                               printf "" > f
                               printf "%s\t%s\t%s\n", f, line, needs; next }
    inblock && /^```$/ { inblock = 0; next }
    inblock { print > f; next }
    want && !/^$/ { want = 0 }'
}

mkdir -p "$tmp/blocks"
for md in "$src/README.md" "$src"/docs/*.md; do
  name=$(basename "$md")
  extract "$name" <"$md" | while IFS=$'\t' read -r block line needs; do
    printf '%s\t%s\t%s\t%s\n' "$name" "$line" "$needs" "$block"
  done >>"$tmp/list"
done
[ -s "$tmp/list" ] || { echo "FAIL: no marked blocks found"; exit 1; }

i=0
while IFS=$'\t' read -r name line needs block; do
  i=$((i + 1))
  if [ "$needs" = clang ] && [ ! -x "$build/examples/cholesky" ]; then
    echo "SKIPPED $name:$line: needs the OpenMP examples (clang with libomp; scripts/setup installs it)"
    continue
  fi
  if [ "$needs" = mpi ] && [ ! -x "$build/examples/stencil" ]; then
    echo "SKIPPED $name:$line: needs the MPI example (Open MPI and clang; scripts/setup installs them)"
    continue
  fi
  dir="$tmp/run$i"
  mkdir -p "$dir"
  ln -s "$build" "$dir/build"
  ln -s "$src/examples" "$dir/examples"
  ln -s "$src/tests" "$dir/tests"
  ln -s "$src/scripts" "$dir/scripts"
  echo "-- $name:$line"
  if (cd "$dir" && TASKSCOPE_SAMPLE_MS=${TASKSCOPE_SAMPLE_MS:-1000} bash -eo pipefail "$block") \
    >"$dir.out" 2>&1; then
    ran=$((ran + 1))
  else
    echo "FAIL: $name:$line: the block fails as written:"
    sed 's/^/    | /' "$block"
    tail -15 "$dir.out" | sed 's/^/    > /'
    fails=$((fails + 1))
  fi
done <"$tmp/list"

echo "$ran block(s) ran as written, $fails failed"
[ "$fails" = 0 ]

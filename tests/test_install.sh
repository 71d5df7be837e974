#!/usr/bin/env bash
# test_install.sh - installs taskscope into a temporary prefix and builds a
# user's program against it twice: with find_package(taskscope) and with
# pkg-config.  usage: test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
[ -f "$tmp/prefix/include/taskscope/taskscope.h" ] || { echo "FAIL: header not installed"; exit 1; }
[ -x "$tmp/prefix/bin/taskscope" ] || { echo "FAIL: CLI not installed"; exit 1; }
# `taskscope dashboard` runs taskscope-dashboard from the installed libexec folder
"$tmp/prefix/bin/taskscope" dashboard --help | grep -q "^usage: taskscope dashboard" \
  || { echo "FAIL: the installed taskscope dashboard did not run"; exit 1; }
cmake -S "$src/tests/install_consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
cd "$tmp"
# no LD_LIBRARY_PATH anywhere: CMake records where the imported library is (build
# RPATH), the .pc file passes -rpath, so a user's program runs as built
TASKSCOPE_OUTPUTS=none env -u LD_LIBRARY_PATH "$tmp/consumer/consumer" | grep -q "consumer: 0.2.0 1" \
  || { echo "FAIL: find_package build did not run right"; exit 1; }
TASKSCOPE_OUTPUTS=none "$tmp/consumer/static_consumer" | grep -q "consumer: 0.2.0 1" \
  || { echo "FAIL: the static library did not link or run"; exit 1; }
env -u LD_LIBRARY_PATH "$tmp/consumer/model_consumer" | grep -qx "model_consumer: 4" \
  || { echo "FAIL: the modeling library did not link or run"; exit 1; }
libdir=$(ls -d "$tmp"/prefix/lib*/pkgconfig | head -1)
PKG_CONFIG_PATH=$libdir cc "$src/tests/install_consumer/main.c" -o "$tmp/pc" \
  $(PKG_CONFIG_PATH=$libdir pkg-config --cflags --libs taskscope)
TASKSCOPE_OUTPUTS=none env -u LD_LIBRARY_PATH "$tmp/pc" | grep -q "consumer: 0.2.0 1" \
  || { echo "FAIL: pkg-config build did not run right"; exit 1; }
echo "test_install: find_package and pkg-config builds work"

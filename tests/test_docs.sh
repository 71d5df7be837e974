#!/usr/bin/env bash
# test_docs.sh - the docs' commands run as written, on a fresh copy of the tree.
#   usage: test_docs.sh SOURCE_DIR BUILD_DIR
#
# What runs.  Every fenced block of README.md and docs/*.md whose fence says
# `sh`, `bash` or `shell` is a script of commands, and runs; a `console` block
# is a transcript: its lines that start with "$ " (with their "\" continuation
# lines) are the commands, and run; everything else it holds is example
# output.  Any other fence (`text`, `json`, `c`, none) is example output or
# code and never runs; a block of such a fence whose first line starts with
# "$ " fails the test (a transcript must say `console` to be seen).
#
# How.  Each page runs in a copy of its own of the source tree (the tracked
# files and the untracked ones git does not ignore, as a fresh clone has
# them), with build/ a link to BUILD_DIR, in page order: README.md, then
# docs/*.md by name.  Its blocks run in the order they appear, each as a
# script of its own (bash -e -o pipefail) in the copy's root, sharing only
# the files the page's earlier blocks made (an `export` does not carry to the
# next block), limited to 300 s (TSCOPE_DOCS_ONE_CLONE=1: all pages in one
# copy, one after the other, as one reader in one clone).  Whatever a block left running (a command
# put in the background with &) is stopped when it ends.  As root, `mpirun`
# is given --allow-run-as-root (a page with an mpirun block must say that
# flag is needed as root).
#
# Markers.  HTML comments on the lines right above a block's fence (blank
# lines between are fine) say more about that block; a marker that is not
# followed by a block, a marker above a block that does not run, or a word
# that is no marker fails the test:
#   <!-- doc-test: skip (REASON) -->          the block does not run; REASON is printed
#   <!-- doc-test: needs clang -->            runs only when BUILD_DIR has the OpenMP
#                                             examples (clang with libomp); else skipped,
#                                             saying so
#   <!-- doc-test: needs mpi -->              runs only when BUILD_DIR has the MPI example
#                                             and mpirun is there
# (a block that runs programs of build/bench/ is skipped, saying so, when the
# build has no benchmarks: TSCOPE_BUILD_BENCH=OFF)
#   <!-- doc-test: short (REASON): COMMAND --> COMMAND runs instead of the block (a long
#                                             benchmark in a short form, the setup's build);
#                                             REASON and COMMAND are printed
#   <!-- doc-test: timeout N -->              a block that blocks (dashboard): it runs N
#                                             seconds (with what it started in the background),
#                                             is then stopped, and that is no failure
#   <!-- doc-test: expect REGEX -->           the block's output (stdout and stderr) has a
#                                             line matching the Perl regular expression REGEX
#   <!-- doc-test: number REGEX VALUE TOL --> the first line of the output matching REGEX
#                                             (a Perl regular expression whose first group
#                                             is a number) gives a number within TOL of
#                                             VALUE (TOL: absolute, or "N%" of VALUE)
# A block fails the test when it exits non-zero, runs past its limit, or its
# output misses one of its expect/number claims; the folder it ran in and its
# output's last lines are printed.
#
# Clean.  After a page's blocks, `git status --porcelain` of its copy must be
# empty: the docs may make files only where .gitignore covers them (the
# pages' own -o folders, the files they write); and the source tree itself
# gains no untracked file.  And the pages keep out of each other's way: no
# command that runs names `taskscope-out` (the default folder, which an
# earlier page's run may hold: a page names its own with -o), and a
# folder NAME-out that a page's commands name is named on no other page.
set -u
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
tmp=$(mktemp -d)
# TSCOPE_DOCS_KEEP=1 keeps the copies the pages ran in, to look at a failure
if [ "${TSCOPE_DOCS_KEEP:-0}" = 1 ]; then
  trap 'echo "the pages ran in $tmp/pages (kept: TSCOPE_DOCS_KEEP=1)"' EXIT
else
  trap 'rm -rf "$tmp"' EXIT
fi
fails=0 ran=0 skipped=0 shortened=0
t0=$(date +%s)

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# ---------------------------------------------------------------- extraction
# extract PAGE FILE: one line per runnable block, "N<TAB>LINE<TAB>KIND", its
# text in $tmp/blocks/PAGE.N and its markers (one a line) in PAGE.N.markers;
# problems (stray markers, transcripts in other fences) as "ERROR<TAB>LINE<TAB>WHAT"
extract() {
  awk -v out="$tmp/blocks" -v page="$1" '
    function flush_markers_error(why) { if (nm) printf "ERROR\t%d\t%s\n", mline, why; nm = 0 }
    /^[ \t]*<!-- doc-test/ && !inblock {
      if (!match($0, /^[ \t]*<!-- doc-test: (skip|needs|short|timeout|expect|number)( .*)? -->[ \t]*$/)) {
        printf "ERROR\t%d\t%s\n", NR, "not a marker (<!-- doc-test: WORD ... -->, WORD one of skip needs short timeout expect number): " $0
        next
      }
      m = $0; sub(/^[ \t]*<!-- doc-test: /, "", m); sub(/ -->[ \t]*$/, "", m)
      if (!nm) mline = NR
      markers[++nm] = m; next
    }
    /^[ \t]*```/ && !inblock {
      lang = $0; sub(/^[ \t]*```/, "", lang); sub(/[ \t].*$/, "", lang)
      inblock = 1; first = 1; start = NR
      run = (lang == "sh" || lang == "bash" || lang == "shell" || lang == "console")
      if (!run) { flush_markers_error("markers above a block that does not run (fence ```" lang ")"); next }
      n++; f = sprintf("%s/%s.%d", out, page, n)
      printf "" > f; printf "" > (f ".markers")
      for (i = 1; i <= nm; i++) print markers[i] > (f ".markers")
      close(f ".markers"); nm = 0; cont = 0
      printf "%d\t%d\t%s\n", n, NR, (lang == "console" ? "console" : "sh")
      next
    }
    /^[ \t]*```[ \t]*$/ && inblock { inblock = 0; if (run) close(f); next }
    inblock {
      if (first && !run && $0 ~ /^[ \t]*\$ /)
        printf "ERROR\t%d\t%s\n", start, "a transcript (its first line starts with \"$ \") in a fence that is not ```console"
      first = 0
      if (!run) next
      if (lang != "console") { print > f; next }
      line = $0
      if (cont) { print line > f; cont = line ~ /\\$/; next }
      if (line ~ /^\$ /) { sub(/^\$ /, "", line); print line > f; cont = line ~ /\\$/ }
      next
    }
    !/^[ \t]*$/ { flush_markers_error("markers not followed by a block") }
    END { flush_markers_error("markers not followed by a block") }' "$2"
}

mkdir -p "$tmp/blocks" "$tmp/bin" "$tmp/pages"
pages=("$src/README.md" "$src"/docs/*.md)
for md in "${pages[@]}"; do
  page=${md#"$src"/}
  extract "$(basename "$md")" "$md" >"$tmp/list.$(basename "$md")"
  while IFS=$'\t' read -r n line what; do
    [ "$n" = ERROR ] && fail "$page:$line: $what"
  done <"$tmp/list.$(basename "$md")"
  if grep -q '^[^E]' "$tmp/list.$(basename "$md")" && grep -l mpirun "$tmp/blocks/$(basename "$md")".* >/dev/null 2>&1 &&
    ! grep -q -- '--allow-run-as-root' "$md"; then
    fail "$page: runs mpirun and does not say that Open MPI wants --allow-run-as-root as root"
  fi
done

# which page names which NAME-out folder; taskscope-out named by none
for md in "${pages[@]}"; do
  b=$(basename "$md")
  for f in "$tmp/blocks/$b".*; do
    case $f in *.markers | *'.*') continue ;; esac
    grep -n 'taskscope-out' "$f" | while IFS= read -r hit; do
      echo "FAIL: ${md#"$src"/}: a command names taskscope-out (another page's run may hold it: name the page's own folder with -o): $hit"
    done
    grep -o '[A-Za-z0-9_.]*[A-Za-z0-9]-out\b' "$f" | sed "s|\$|	${md#"$src"/}|"
  done
done 2>/dev/null | sort -u >"$tmp/folders"
grep '^FAIL' "$tmp/folders" | while IFS= read -r l; do echo "$l"; done
fails=$((fails + $(grep -c '^FAIL' "$tmp/folders")))
grep -v '^FAIL' "$tmp/folders" | awk -F'\t' '{ n[$1]++; p[$1] = p[$1] " " $2 }
  END { for (f in n) if (n[f] > 1) printf "FAIL: the folder %s is named on more than one page:%s\n", f, p[f] }' >"$tmp/shared"
cat "$tmp/shared"
fails=$((fails + $(grep -c . "$tmp/shared")))

# ---------------------------------------------------------------- the copy
# the tree as a fresh clone has it, committed in a repository of its own
base="$tmp/base"
mkdir -p "$base"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src" && git ls-files -co --exclude-standard -z | while IFS= read -r -d '' p; do
    [ -e "$p" ] || [ -L "$p" ] && printf '%s\0' "$p"
  done | tar --null -T - -cf -) | tar -C "$base" -xf -
  src_status_before=$(git -C "$src" status --porcelain --untracked-files=all)
else
  tar -C "$src" --exclude='./build*' --exclude='./taskscope-out*' -cf - . | tar -C "$base" -xf -
  src_status_before=
fi
(cd "$base" && git init -q && git add -A &&
  git -c user.name=doc-test -c user.email=doc-test@localhost commit -q -m base) ||
  { echo "FAIL: cannot make the copy"; exit 1; }

# mpirun as root takes --allow-run-as-root (the pages say so)
if [ "$(id -u)" = 0 ] && command -v mpirun >/dev/null; then
  printf '#!/bin/sh\nexec %s --allow-run-as-root "$@"\n' "$(command -v mpirun)" >"$tmp/bin/mpirun"
  chmod +x "$tmp/bin/mpirun"
fi
export PATH="$tmp/bin:$PATH"

# ---------------------------------------------------------------- running
# run_block DIR SCRIPT OUT LIMIT WAIT: runs SCRIPT in DIR in a session of its
# own, at most LIMIT s; WAIT=1: the block's processes may run LIMIT s and are
# then stopped without failure.  Sets rc (124: ran past LIMIT).
run_block() {
  local dir=$1 script=$2 out=$3 limit=$4 waitall=$5 start now pid
  start=$(date +%s)
  (cd "$dir" && exec setsid bash -eo pipefail "$script") >"$out" 2>&1 </dev/null &
  pid=$!
  rc=
  while kill -0 "$pid" 2>/dev/null; do
    now=$(date +%s)
    if [ $((now - start)) -ge "$limit" ]; then rc=124; break; fi
    sleep 0.1
  done
  if [ -z "$rc" ]; then
    wait "$pid"
    rc=$?
    if [ "$waitall" = 1 ]; then # what it started in the background runs on to the limit
      while kill -0 -- "-$pid" 2>/dev/null && [ $(($(date +%s) - start)) -lt "$limit" ]; do sleep 0.1; done
    fi
  fi
  kill -TERM -- "-$pid" 2>/dev/null && sleep 0.5
  kill -KILL -- "-$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  [ "$waitall" = 1 ] && [ "$rc" = 124 ] && rc=0
  return 0
}

# check_claims MARKERS OUT: expect and number claims; prints what misses
check_claims() {
  perl -e '
    my ($markers, $out) = @ARGV;
    open(my $m, "<", $markers) or die; open(my $o, "<", $out) or die;
    my @out = <$o>; my $bad = 0;
    while (my $l = <$m>) {
      chomp $l;
      if ($l =~ /^expect (.+)$/) {
        my $re = $1;
        next if grep { /$re/ } @out;
        print "    output has no line matching: $re\n"; $bad = 1;
      } elsif ($l =~ /^number (.+) (\S+) (\S+)$/) {
        my ($re, $want, $tol) = ($1, $2, $3);
        my ($line) = grep { /$re/ } @out;
        if (!defined $line) { print "    output has no line matching: $re\n"; $bad = 1; next }
        $line =~ /$re/; my $got = $1;
        my $abs = $tol =~ /^(.*)%$/ ? abs($want) * $1 / 100 : $tol;
        if (!defined $got || $got !~ /^[-+]?[0-9.]+(e[-+]?[0-9]+)?$/i) {
          print "    no number in the first group of $re: $line"; $bad = 1;
        } elsif (abs($got - $want) > $abs) {
          print "    the docs say $want (within $tol) where this run gives $got: $line"; $bad = 1;
        }
      }
    }
    exit $bad;' "$1" "$2"
}

for md in "${pages[@]}"; do
  b=$(basename "$md")
  page=${md#"$src"/}
  grep -q '^[0-9]' "$tmp/list.$b" || continue
  dir="$tmp/pages/$b"
  # TSCOPE_DOCS_ONE_CLONE=1: all pages in one clone, one after the other, as a
  # reader who follows them all in one clone does
  [ "${TSCOPE_DOCS_ONE_CLONE:-0}" = 1 ] && dir="$tmp/pages/all"
  # a clone that shares base's objects: the page's files, as a fresh clone has them
  [ -d "$dir" ] || { git clone -q --shared "$base" "$dir" && echo /build >>"$dir/.git/info/exclude" &&
    ln -s "$build" "$dir/build"; } || { fail "$page: cannot make its copy of the tree"; continue; }
  echo "== $page"
  while IFS=$'\t' read -r n line kind; do
    [ "$n" = ERROR ] && continue
    block="$tmp/blocks/$b.$n"
    markers="$block.markers"
    script="$block"
    limit=300 waitall=0 why=
    while IFS= read -r mk; do
      case $mk in
        skip\ \(*\)) why=${mk#skip } ;;
        needs\ clang) [ -x "$build/examples/cholesky" ] ||
          why="(needs the OpenMP examples: clang with libomp, which scripts/setup installs)" ;;
        needs\ mpi) { [ -x "$build/examples/stencil" ] && command -v mpirun >/dev/null; } ||
          why="(needs the MPI example: Open MPI and clang, which scripts/setup installs)" ;;
        short\ \(*\):\ *)
          echo "${mk#short (*): }" >"$block.short"
          script="$block.short"
          r=${mk#short (}
          echo "   SHORT $page:$line: (${r%%): *}): runs '${mk#short (*): }'"
          shortened=$((shortened + 1)) ;;
        timeout\ [0-9]*) limit=${mk#timeout } waitall=1 ;;
        expect\ ?* | number\ ?*\ ?*\ ?*) ;;
        *) fail "$page:$line: a marker this test does not know: $mk" ;;
      esac
    done <"$markers"
    if [ -n "$why" ]; then
      echo "   SKIPPED $page:$line: $why"
      skipped=$((skipped + 1))
      continue
    fi
    [ -s "$script" ] || { fail "$page:$line: a block with no command"; continue; }
    if grep -q 'build/bench/' "$script" && [ ! -d "$build/bench" ]; then
      echo "   SKIPPED $page:$line: (needs the benchmarks: a build with TSCOPE_BUILD_BENCH, on by default)"
      skipped=$((skipped + 1))
      continue
    fi
    run_block "$dir" "$script" "$block.out" "$limit" "$waitall"
    if [ "$rc" != 0 ]; then
      [ "$rc" = 124 ] && what="runs past ${limit} s" || what="exits with status $rc"
      fail "$page:$line: the block $what (in a copy of the tree; TSCOPE_DOCS_KEEP=1 keeps it):"
      sed 's/^/    | /' "$script"
      tail -15 "$block.out" | sed 's/^/    > /'
      continue
    fi
    if ! check_claims "$markers" "$block.out" >"$block.claims"; then
      fail "$page:$line: the output no longer says what the page claims:"
      cat "$block.claims"
      tail -15 "$block.out" | sed 's/^/    > /'
      continue
    fi
    echo "   ran $page:$line"
    ran=$((ran + 1))
  done <"$tmp/list.$b"
  left=$(cd "$dir" && git status --porcelain --untracked-files=all)
  if [ -n "$left" ]; then
    fail "$page: running its commands leaves the clone unclean (git status --porcelain; .gitignore the page's -o folders and files):"
    echo "$left" | head -20 | sed 's/^/    /'
  fi
done

if [ -n "${src_status_before+x}" ] && git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  new=$(comm -13 <(echo "$src_status_before" | sort) \
    <(git -C "$src" status --porcelain --untracked-files=all | sort))
  [ -z "$new" ] || { fail "the source tree changed while the docs ran:"; echo "$new" | sed 's/^/    /'; }
fi

echo "$ran block(s) ran as written ($shortened in a short form), $skipped skipped, $fails failure(s), $(($(date +%s) - t0)) s"
[ "$fails" = 0 ]

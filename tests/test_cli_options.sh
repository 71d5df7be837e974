#!/usr/bin/env bash
# test_cli_options.sh - one CLI (issue 31, point 4): every option of every
# subcommand, as the code's own tables list them (taskscope CMD
# --list-options), refuses a bad value, a missing value and a value given
# to a flag with one line naming the subcommand and the option, status 2; a
# mistyped option or command gets one line with the closest name, never
# the help; run -q says nothing but errors; a TASKSCOPE_* variable nobody
# reads gets one warning naming the close one, once under taskscope run;
# the examples each --help shows run as shown.
# usage: test_cli_options.sh TASKSCOPE TASKTREE
set -euo pipefail
ts=$(realpath "$1") app=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# one_line STATUS PATTERN DESCRIPTION: the last command exited with 2 and
# said exactly one line on stderr ($tmp/e), matching PATTERN (grep -E)
one_line() {
  local st=$1 pat=$2 what=$3
  [ "$st" = 2 ] || fail "$what: status $st, expected 2 ($(cat "$tmp/e"))"
  [ "$(wc -l <"$tmp/e")" = 1 ] || fail "$what: $(wc -l <"$tmp/e") lines: $(cat "$tmp/e")"
  grep -qE -- "$pat" "$tmp/e" || fail "$what: '$(cat "$tmp/e")' does not match '$pat'"
}

# the subcommands: those taskscope --help lists (version aside), model compose and calibrate
cmds=$("$ts" --help | awk '/^commands:/ {on = 1; next} on && /^$/ {on = 0} on && /^  [a-z]/ {print $1}' |
  grep -vx version)
[ "$(wc -w <<<"$cmds")" -ge 9 ] || fail "taskscope --help lists: $cmds"
cmds="$cmds
model compose
model calibrate"

# options that take any value (paths, names, labels): nothing to refuse;
# a new option is either checked or added here (run --filter: a path, whose
# file run reads itself to name the file and line of a mistake: test_filter)
free=" run:--tools run:--filter convert:--output merge:--output model:--predict model:--param
  model-compose:--models model-compose:--at model-compose:--contention model-calibrate:--output
  dashboard:--bind dashboard:--web
  dashboard:--secret-file "
# the value a check must refuse where @@bad is a fine one (a path)
bad_value() {
  case "$1:$2" in
  run:--output) printf 'd%.0s' $(seq 2000) ;;
  *) echo "@@ bad" ;; # a token, a seconds count, a name: none has a space
  esac
}

echo "-- every option of every subcommand: bad value, missing value, value to a flag, typo"
checked=0
while IFS= read -r cmd; do
  # shellcheck disable=SC2086 # "model compose": two words
  if ! "$ts" $cmd --list-options >"$tmp/list" 2>"$tmp/e"; then
    if [ "$cmd" = dashboard ] && grep -q "built without" "$tmp/e"; then
      echo "skip: dashboard: $(cat "$tmp/e")"
      continue
    fi
    fail "$cmd --list-options: $(cat "$tmp/e")"
  fi
  [ -s "$tmp/list" ] || fail "$cmd --list-options: empty"
  key=${cmd// /-}
  # shellcheck disable=SC2086
  "$ts" $cmd --help >"$tmp/help" 2>&1 || fail "$cmd --help"
  while read -r name value kind; do
    # the help names every option the code has
    [ "$name" = --help ] || grep -qE -- "(^|[ ,[])$name([ =,[]|$)" "$tmp/help" ||
      fail "$cmd --help does not name $name"
    case $kind in flag | any | checked | optional | secret) ;; *) fail "$cmd: '$name $value $kind'" ;; esac
    re_name=${name//-/\\-}
    if [ "$kind" = any ]; then
      case "$free" in *" $key:$name "* | *" $key:$name"$'\n'*) ;; *)
        fail "$cmd $name takes any value: check it, or add it to the free list of this test" ;;
      esac
    fi
    if [ "$kind" = checked ] || [ "$kind" = secret ]; then
      bad=$(bad_value "$key" "$name") st=0
      # shellcheck disable=SC2086
      timeout 20 "$ts" $cmd "$name" "$bad" >/dev/null 2>"$tmp/e" </dev/null || st=$?
      if [ "$kind" = secret ]; then
        one_line $st "^taskscope $cmd: $re_name: expected ." "$cmd $name (a secret)"
        grep -q "$bad" "$tmp/e" && fail "$cmd $name: the secret value repeated"
      else
        one_line $st "^taskscope $cmd: $re_name (@@ bad|\"d+\.\.\.d+\" \(2000 bytes\)): expected ." "$cmd $name $bad"
      fi
      checked=$((checked + 1))
    elif [ "$kind" = optional ]; then
      st=0
      # shellcheck disable=SC2086
      timeout 20 "$ts" $cmd "$name=@@bad" >/dev/null 2>"$tmp/e" </dev/null || st=$?
      one_line $st "^taskscope $cmd: $re_name=@@bad: expected ." "$cmd $name=@@bad"
      checked=$((checked + 1))
    fi
    if [ "$kind" != flag ] && [ "$kind" != optional ]; then # the value missing: last argument
      st=0
      # shellcheck disable=SC2086
      timeout 20 "$ts" $cmd "$name" >/dev/null 2>"$tmp/e" </dev/null || st=$?
      one_line $st "^taskscope $cmd: $re_name needs a value: expected ." "$cmd $name (no value)"
    fi
    case $name in --*) ;; *) continue ;; esac # the rest: long names
    if [ "$kind" = flag ]; then
      st=0
      # shellcheck disable=SC2086
      timeout 20 "$ts" $cmd "$name=x" >/dev/null 2>"$tmp/e" </dev/null || st=$?
      one_line $st "^taskscope $cmd: $re_name takes no value \('$re_name=x'\)$" "$cmd $name=x"
    fi
    # a typo: the first two letters swapped
    word=${name#--}
    typo="--${word:1:1}${word:0:1}${word:2}"
    if [ ${#word} -ge 4 ] && [ "$typo" != "$name" ]; then
      st=0
      # shellcheck disable=SC2086
      timeout 20 "$ts" $cmd "$typo" >"$tmp/o" 2>"$tmp/e" </dev/null || st=$?
      one_line $st "^taskscope $cmd: unrecognized option '$typo' \(did you mean $re_name\?\); taskscope $cmd --help lists them$" "$cmd $typo"
      [ ! -s "$tmp/o" ] || fail "$cmd $typo: printed on stdout: $(cat "$tmp/o")"
    fi
  done <"$tmp/list"
done <<<"$cmds"
[ "$checked" -ge 20 ] || fail "only $checked options with checked values"
echo "ok: $checked checked values"

st=0
"$ts" run --trcae -- true >"$tmp/o" 2>"$tmp/e" || st=$?
one_line $st "^taskscope run: unrecognized option '--trcae' \(did you mean --trace\?\); taskscope run --help lists them$" "run --trcae"
st=0
"$ts" run --zzzzzz -- true >"$tmp/o" 2>"$tmp/e" || st=$?
one_line $st "^taskscope run: unrecognized option '--zzzzzz'; taskscope run --help lists them$" "run --zzzzzz: no hint"
st=0
"$ts" run --no -- true >"$tmp/o" 2>"$tmp/e" || st=$?
one_line $st "^taskscope run: unrecognized option '--no' \(ambiguous: --no-summary, --no-preload\);" "run --no"
st=0
"$ts" report -z x >"$tmp/o" 2>"$tmp/e" || st=$?
one_line $st "^taskscope report: unrecognized option '-z'; taskscope report --help lists them$" "report -z"
st=0
"$ts" rpeort x >"$tmp/o" 2>"$tmp/e" || st=$?
one_line $st "^taskscope: unknown command 'rpeort' \(did you mean report\?\); taskscope --help lists them$" "rpeort"
st=0
"$ts" xyzzy >"$tmp/o" 2>"$tmp/e" || st=$?
one_line $st "^taskscope: unknown command 'xyzzy'; taskscope --help lists them$" "xyzzy"

echo "-- run -q: nothing but the program's own output"
cd "$tmp"
"$ts" run -q -o "$tmp/q" -- "$app" >"$tmp/q.out" 2>"$tmp/q.err" || fail "run -q: $(cat "$tmp/q.err")"
[ ! -s "$tmp/q.err" ] || fail "run -q said: $(cat "$tmp/q.err")"
[ -s "$tmp/q/profile.json" ] || fail "run -q: no profile"
"$ts" run -q --trace -o "$tmp/q" -- "$app" >"$tmp/q2.out" 2>"$tmp/q.err" || fail "run -q again: $(cat "$tmp/q.err")"
[ ! -s "$tmp/q.err" ] || fail "run -q, the folder there already, said: $(cat "$tmp/q.err")"
[ -s "$tmp/q.1/profile.json" ] && [ -s "$tmp/q.1/trace.json" ] || fail "run -q: q.1: $(ls "$tmp/q.1")"
cmp -s "$tmp/q.out" "$tmp/q2.out" || fail "run -q: the program's output differs"
"$ts" run -o "$tmp/q" -- "$app" >/dev/null 2>"$tmp/e" || fail "run: $(cat "$tmp/e")"
grep -q "$tmp/q already exists; writing to $tmp/q.2 instead" "$tmp/e" || fail "run without -q: $(cat "$tmp/e")"

echo "-- a TASKSCOPE_* variable nobody reads: one warning, the close name"
want="taskscope: warning: TASKSCOPE_SAMPL_MS is not a taskscope variable (did you mean TASKSCOPE_SAMPLE_MS?)"
TASKSCOPE_SAMPL_MS=5 "$ts" run --no-summary -o "$tmp/v" -- "$app" >/dev/null 2>"$tmp/e" || fail "run: $(cat "$tmp/e")"
[ "$(grep -c "TASKSCOPE_SAMPL_MS" "$tmp/e")" = 1 ] && grep -qxF "$want" "$tmp/e" ||
  fail "under run: $(cat "$tmp/e")"
TASKSCOPE_SAMPL_MS=5 "$ts" run -q -o "$tmp/v" -- "$app" >/dev/null 2>"$tmp/e" || fail "run -q: $(cat "$tmp/e")"
[ "$(cat "$tmp/e")" = "$want" ] || fail "under run -q (a warning stays): $(cat "$tmp/e")"
# the program's own library, without the launcher: once
TASKSCOPE_SAMPL_MS=5 TASKSCOPE_OUTPUT_DIR="$tmp/v2" TASKSCOPE_SUMMARY=0 "$app" >/dev/null 2>"$tmp/e" ||
  fail "tasktree: $(cat "$tmp/e")"
[ "$(grep -c "TASKSCOPE_SAMPL_MS" "$tmp/e")" = 1 ] && grep -qxF "$want" "$tmp/e" ||
  fail "without the launcher: $(cat "$tmp/e")"
# rank 1 of an MPI job, and a process the launcher checked already: silent
TASKSCOPE_SAMPL_MS=5 TASKSCOPE_OUTPUT_DIR="$tmp/v3" TASKSCOPE_SUMMARY=0 PMI_RANK=1 PMI_SIZE=2 \
  "$app" >/dev/null 2>"$tmp/e" || fail "rank 1: $(cat "$tmp/e")"
grep -q "TASKSCOPE_SAMPL_MS" "$tmp/e" && fail "rank 1 warned: $(cat "$tmp/e")"
TASKSCOPE_SAMPL_MS=5 TASKSCOPE_ENV_CHECKED=1 TASKSCOPE_OUTPUT_DIR="$tmp/v4" TASKSCOPE_SUMMARY=0 \
  "$app" >/dev/null 2>"$tmp/e" || fail "checked: $(cat "$tmp/e")"
grep -q "TASKSCOPE_SAMPL_MS" "$tmp/e" && fail "checked already, warned again: $(cat "$tmp/e")"
# far from every name: no guess
TASKSCOPE_ZZZZZZZZ=1 "$ts" run -q -o "$tmp/v5" -- "$app" >/dev/null 2>"$tmp/e" || fail "run: $(cat "$tmp/e")"
[ "$(cat "$tmp/e")" = "taskscope: warning: TASKSCOPE_ZZZZZZZZ is not a taskscope variable (docs/configuration.md lists them)" ] ||
  fail "TASKSCOPE_ZZZZZZZZ: $(cat "$tmp/e")"

echo "-- the examples each --help shows run as shown (./app: the bundled example)"
mkdir "$tmp/ex"
cd "$tmp/ex"
ln -s "$app" app
n=0
while IFS= read -r cmd; do
  # shellcheck disable=SC2086
  { "$ts" $cmd --help 2>/dev/null || true; } |
    awk '/^examples:/ {on = 1; next} on && /^[^ ]/ {on = 0} on && /^  taskscope / {print}' >"$tmp/examples"
  while IFS= read -r line; do
    line=${line#  taskscope }
    echo "   taskscope $line"
    # shellcheck disable=SC2086 # the example's words, as a shell splits them
    timeout 120 "$ts" $line >"$tmp/ex.out" 2>&1 </dev/null || fail "example 'taskscope $line' failed: $(cat "$tmp/ex.out")"
    n=$((n + 1))
  done <"$tmp/examples"
done <<<"$cmds"
[ "$n" -ge 8 ] || fail "only $n examples in the --help texts"
echo "ok: $n examples"
echo "PASS"

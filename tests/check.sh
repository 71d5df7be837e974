# check.sh - sourced by the shell tests that count their failed checks
# instead of stopping at the first: fail (says one, counts it), check
# (compares an actual value with the expected one, says ok or fails), and
# jq, which they all read profile.json with.  Each script ends with its
# own summary of $fails.
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
check() { # description, actual, expected
    if [ "$2" = "$3" ]; then echo "ok: $1 ($2)"; else fail "$1: got '$2', expected '$3'"; fi
}
command -v jq >/dev/null || { echo "FAIL: jq is missing (scripts/deps installs it)"; exit 1; }

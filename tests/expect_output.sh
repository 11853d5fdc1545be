#!/bin/sh
# Runs a test program and passes only when it exits 0 AND its output matches REGEX (grep -E):
# ctest's PASS_REGULAR_EXPRESSION alone ignores the exit status, so a program that prints its
# OK line and then fails (a leak report, a crash at exit) would pass. Status 77 (skipped) is
# passed through for SKIP_RETURN_CODE. With --status N, the command must exit with N instead of
# 0 (a program refusing bad arguments: its status and its message both checked).
#   expect_output.sh [--status N] REGEX COMMAND [ARGS...]
want=0
if [ "${1-}" = --status ]; then
  want=${2-}
  shift 2 2>/dev/null || shift $#
fi
case $want in
'' | *[!0-9]*) want=bad ;;
esac
if [ $# -lt 2 ] || [ "$want" = bad ]; then
  echo "usage: expect_output.sh [--status N] REGEX COMMAND [ARGS...]" >&2
  exit 2
fi
regex=$1
shift
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
rc=$?
cat "$out"
[ $rc -eq 77 ] && exit 77
if [ $rc -ne "$want" ]; then
  echo "expect_output.sh: FAIL: exit status $rc (expected $want)" >&2
  exit 1
fi
if ! grep -Eq -- "$regex" "$out"; then
  echo "expect_output.sh: FAIL: no line matches '$regex'" >&2
  exit 1
fi
exit 0

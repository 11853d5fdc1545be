#!/bin/sh
# Runs a test program and passes only when it exits 0 AND its output matches REGEX (grep -E):
# ctest's PASS_REGULAR_EXPRESSION alone ignores the exit status, so a program that prints its
# OK line and then fails (a leak report, a crash at exit) would pass. Status 77 (skipped) is
# passed through for SKIP_RETURN_CODE.
#   expect_output.sh REGEX COMMAND [ARGS...]
if [ $# -lt 2 ]; then
  echo "usage: expect_output.sh REGEX COMMAND [ARGS...]" >&2
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
if [ $rc -ne 0 ]; then
  echo "expect_output.sh: FAIL: exit status $rc" >&2
  exit 1
fi
if ! grep -Eq -- "$regex" "$out"; then
  echo "expect_output.sh: FAIL: no line matches '$regex'" >&2
  exit 1
fi
exit 0

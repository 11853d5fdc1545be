#!/bin/sh
# expect_usage_error.sh TEXT COMMAND [ARGS...]
# Test helper: passes when COMMAND (mpc_run with bad flags) exits with status 2 and writes
# exactly one line to stderr, starting with "mpc_run: " and containing TEXT.
text=$1
shift
err=$("$@" 2>&1 >/dev/null)
st=$?
printf 'stderr: %s\n' "$err"
if [ "$st" -ne 2 ]; then
  echo "FAIL: exit status $st, expected 2"
  exit 1
fi
if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
  echo "FAIL: expected exactly one line on stderr"
  exit 1
fi
case $err in
  "mpc_run: "*"$text"*) exit 0 ;;
  *) echo "FAIL: expected a line 'mpc_run: ...$text...'"; exit 1 ;;
esac

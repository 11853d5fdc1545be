#!/bin/sh
# expect_status.sh STATUS COMMAND [ARGS...]: passes when COMMAND exits with STATUS (its output is
# shown as is).
expected=$1
shift
"$@"
st=$?
if [ "$st" -ne "$expected" ]; then
  echo "FAIL: exit status $st, expected $expected" >&2
  exit 1
fi
echo "exit status $st, as expected"

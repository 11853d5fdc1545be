#!/bin/sh
# Performance models between runs, through the StarPU API (sched_models.c):
#   sched_models.sh <sched_models binary> <scratch dir> <policy>
# a first run calibrates and stores the models, a second one finds them; a corrupt file is
# reported, ignored, and replaced. The trace of the first run is checked as JSON.
set -u
prog=$1 dir=$2 sched=$3
rm -rf "$dir" && mkdir -p "$dir" || exit 1
export STARPU_PERF_MODEL_DIR="$dir/models" STARPU_SCHED="$sched" STARPU_NCPU=2
unset MPC_TG_PERFMODEL_DIR STARPU_CALIBRATE MPC_TG_CALIBRATE
fail() { echo "sched_models.sh: $*"; exit 1; }
MPC_TG_TRACE="$dir/trace.json" "$prog" calibrate || fail "the calibrating run failed"
ls "$dir/models"/mpc_example_hist.*.mpc >/dev/null 2>&1 || fail "no model stored in $dir/models"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to check the trace (scripts/install-deps.sh installs it)"
python3 -m json.tool "$dir/trace.json" >/dev/null || fail "the trace is not valid JSON"
python3 - "$dir/trace.json" <<'PY' || fail "the trace misses tasks"
import json, sys
t = json.load(open(sys.argv[1]))
tasks = [e for e in t["traceEvents"] if e.get("ph") == "X"]
assert len(tasks) == 30, len(tasks)
assert {e["name"] for e in tasks} == {"hist", "reg"}
assert all(len(e["args"]["handles"]) == 1 and e["dur"] > 0 for e in tasks)
assert len(t["mpcDependencies"]) >= 20  # the RW chains on two handles
PY
"$prog" reuse || fail "the stored models were not used"
for f in "$dir/models"/*.mpc; do printf 'mpc-perfmodel 1\nentry zz\n' > "$f"; done
"$prog" fresh 2> "$dir/fresh.err" || { cat "$dir/fresh.err"; fail "a corrupt model file broke the run"; }
grep -q "ignored" "$dir/fresh.err" || fail "the corrupt model file was not reported"
echo "sched_models.sh: $sched: OK"

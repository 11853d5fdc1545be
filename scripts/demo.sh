#!/usr/bin/env bash
# Set-up and demo on a fresh Debian 12 machine: installs the packages, builds MPC in build/
# (Release; tests and benchmarks off, scripts/test.sh turns them on), then runs 10,000
# user-level threads on 2 virtual processors through mpc_run.
# Arguments go to the demo (e.g. scripts/demo.sh 50000). BUILD_DIR and VPS override the defaults.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${BUILD_DIR:-build}
vps=${VPS:-2}

scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPC_BUILD_TESTS=OFF -DMPC_BUILD_BENCHMARKS=OFF
cmake --build "$build" -j"$(nproc)" --target mpc_run ult_demo
echo "+ $build/tools/mpc_run -c $vps $build/examples/ult_demo $*"
"$build/tools/mpc_run" -c "$vps" "$build/examples/ult_demo" "$@"

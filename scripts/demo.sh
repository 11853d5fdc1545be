#!/usr/bin/env bash
# Set-up and demo on a fresh Debian 12 machine: installs the packages, builds MPC in build/
# (Release; tests and benchmarks off, scripts/test.sh turns them on), then runs the MPI demo
# through mpc_run: a 2-D heat-diffusion stencil on 64 ranks (user-level threads of one
# process), checked against a serial run. Arguments go to the demo (grid size, iterations).
# BUILD_DIR, RANKS and VPS override the defaults.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${BUILD_DIR:-build}
vps=${VPS:-2}
ranks=${RANKS:-64}

scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMPC_BUILD_TESTS=OFF -DMPC_BUILD_BENCHMARKS=OFF
cmake --build "$build" -j"$(nproc)" --target mpc_run heat
echo "+ $build/tools/mpc_run -n $ranks -c $vps $build/examples/heat $*"
"$build/tools/mpc_run" -n "$ranks" -c "$vps" "$build/examples/heat" "$@"

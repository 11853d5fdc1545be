#!/usr/bin/env bash
# Full test run: installs the packages, configures build/ (Release, tests and benchmarks on),
# builds everything, then runs every ctest test except those labelled "stress" (and "slurm"
# when no Slurm can be started), the MPI suite in its three process layouts (labels p1, p2, p4)
# included, and prints ctest's summary. Extra arguments go to cmake's configure step, e.g.
#   BUILD_DIR=build-asan scripts/test.sh -DMPC_SANITIZE=address
# Exit status: non-zero if the build or any test fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${BUILD_DIR:-build}
jobs=$(nproc)

scripts/install-deps.sh
# The tests labelled slurm run MPC processes under `srun --mpi=pmix` on a one-node Slurm that
# scripts/slurm-up.sh starts (as root: CI); without root and without a running Slurm they are
# left out, with this message.
exclude="stress"
if ((EUID == 0)); then
  if ! scripts/slurm-up.sh; then
    echo "test: Slurm could not be started here (see above): the tests labelled slurm are left out"
    exclude="stress|slurm"
  fi
elif [[ "$(sinfo -h -n localhost -o %T 2>/dev/null || true)" != idle ]]; then
  echo "test: no Slurm node is up: the tests labelled slurm are left out (run scripts/slurm-up.sh as root)"
  exclude="stress|slurm"
fi
echo "+ $(c++ --version | head -n1); $(cmake --version | head -n1); $jobs cores"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMPC_BUILD_TESTS=ON -DMPC_BUILD_BENCHMARKS=ON -DMPC_BUILD_EXAMPLES=ON "$@"
cmake --build "$build" -j"$jobs"
# --timeout: default per-test limit (a test's own TIMEOUT property wins), so that a hang fails
# the run instead of eating the CI budget. --no-tests=error: finding no tests is a failure.
ctest --test-dir "$build" -j"$jobs" --output-on-failure --no-tests=error --timeout 600 -LE "$exclude"

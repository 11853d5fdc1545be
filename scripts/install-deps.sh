#!/usr/bin/env bash
# Installs the Debian 12 packages that building MPC, its tests and its demo need, if missing.
# Extra package names given as arguments are installed too (benchmarks/run uses this for peers).
# Runs as root (or through sudo) without a TTY; apt-get update runs only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config  # toolchain
  libboost-context-dev libboost-fiber-dev       # ULT context switches; boost.fiber as a peer
  libhwloc-dev hwloc-nox libnuma-dev            # topology, binding, NUMA placement
  libucx-dev libpmix-dev                        # transports between processes, bootstrap
  openmpi-bin                                   # mpirun: a PMIx launcher for the tests
  libgtest-dev libgmock-dev libbenchmark-dev    # tests and micro-benchmarks
  libstarpu-dev                                 # StarPU 1.3: the task-graph layer's compatibility test
  libopenblas-dev liblapacke-dev                # tile kernels of the task-graph BLAS examples
  gfortran python3                              # Fortran bindings (python3 generates them); trace JSON checks
  valgrind                                      # memcheck tests (mpi.valgrind.*), Valgrind client requests
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  if [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)" != ii* ]]; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

sudo=()
if ((EUID != 0)); then
  if ! command -v sudo >/dev/null; then
    echo "install-deps: missing packages (${missing[*]}); run as root or install sudo" >&2
    exit 1
  fi
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-y -q -o Dpkg::Use-Pty=0 -o APT::Color=0)
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install --no-install-recommends "${missing[@]}"

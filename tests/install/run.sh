#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and runs a project that
# finds it with find_package(MPC) and with pkg-config. Usage: run.sh BUILD_DIR SCRATCH_DIR
set -euo pipefail
build=$1
scratch=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
test -f "$scratch/prefix/include/mpc.h"
test -x "$scratch/prefix/bin/mpc_run"
libdir=$(find "$scratch/prefix" -name 'libmpc.so' -printf '%h\n' | head -n1)
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cmake -S "$here/consumer" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/build" >/dev/null
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$scratch/build/consumer_cxx"
"$scratch/build/consumer_c"
"$scratch/build/consumer_pc"
"$scratch/prefix/bin/mpc_run" --info >/dev/null
echo "install test OK"

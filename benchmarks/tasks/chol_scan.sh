#!/usr/bin/env bash
# benchmarks/tasks/chol_scan.sh BUILD OUT [ROUNDS]: tiled Cholesky (examples/taskgraph/cholesky_blas.c,
# n = N, default 8192; dmda, 2 workers) built against MPC (BUILD's starpu-1.3.pc) and against
# Debian's StarPU, each runtime at tiles of 320 384 448 512 in ROUNDS (default 5) rounds whose
# order alternates, after one calibration run of each; LAPACKE_dpotrf on 2 OpenBLAS threads
# (benchmarks/tasks/dense_ref.c) once per round. One line per run: round impl nb GFlop/s.
# Needs libstarpu-dev, libopenblas-dev, liblapacke-dev.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$(cd "${1:?usage: chol_scan.sh BUILD OUT [ROUNDS]}" && pwd)
OUT=${2:?usage: chol_scan.sh BUILD OUT [ROUNDS]}
ROUNDS=${3:-5}
N=${N:-8192}
mkdir -p "$OUT"
pcm=$B/taskgraph/pkgconfig-build
for impl in mpc starpu; do
  if [[ $impl == mpc ]]; then pc=$pcm; else pc=; fi
  flags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags starpu-1.3); libs=$(PKG_CONFIG_PATH=$pc pkg-config --libs starpu-1.3)
  libdir=$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir starpu-1.3)
  gcc -O2 $flags -I$ROOT/examples/taskgraph -o $OUT/chol_$impl $ROOT/examples/taskgraph/cholesky_blas.c $libs -DTASKS_HAVE_CBLAS -llapacke -lopenblas -lm -Wl,-rpath,$libdir || exit 1
done
gcc -O2 -o $OUT/dense_ref $ROOT/benchmarks/tasks/dense_ref.c -llapacke -lopenblas || exit 1
export STARPU_SCHED=dmda STARPU_NCPU=2 OPENBLAS_NUM_THREADS=1 STARPU_HOME=$OUT/home
mkdir -p $OUT/home
for nb in 320 384 448 512; do for impl in mpc starpu; do $OUT/chol_$impl $N $nb >/dev/null 2>&1; done; done  # models calibrated
for r in $(seq 1 $ROUNDS); do
  for nb in 320 384 448 512; do
    if (( r % 2 )); then order="mpc starpu"; else order="starpu mpc"; fi
    for impl in $order; do
      g=$($OUT/chol_$impl $N $nb 2>&1 | sed -n 's/.*, \([0-9.]*\) GFlop\/s.*/\1/p')
      echo "$r $impl $nb $g"
    done
  done
  g=$(OPENBLAS_NUM_THREADS=2 $OUT/dense_ref --what cholesky --n $N --threads 2 --reps 1 2>/dev/null | awk -F'\t' '/^ROW/ { print $5 }')
  echo "$r dpotrf - $g"
done

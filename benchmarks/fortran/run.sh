# benchmarks/run fortran: a Fortran MPI kernel of the NAS CG kind (issue 9), benchmarks/fortran/cg.f90
# (CG on a 48^3 7-point Laplacian, 100 iterations, z-slabs: a halo exchange and two 8-byte
# MPI_Allreduce per iteration), compiled unchanged with MPC's mpc_fc, Debian's Open MPI
# (mpif90.openmpi) and Debian's MPICH (mpif90.mpich), run with 2, 4 and 16 ranks. Ours runs the
# ranks as threads of one process (mpc_run -n N); the peers run N processes (with 16 ranks on
# 2 cores they are oversubscribed: Open MPI yields when idle, as in benchmarks/coll).
# Each figure: the median of 5 timed solves after a warm-up (--quick: 3), seconds per solve,
# max over ranks; every solve is checked (residual down by 10^3, else WRONG RESULT).
#
# Environment: BENCH_FORTRAN_ONLY="mpc openmpi mpich" (a subset), BENCH_FORTRAN_RANKS="2 4 16".
# shellcheck shell=bash source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_parse_args "$@"
BENCH_KEY=ranks
BENCH_VALUE_FMT=auto

src=$BENCH_ROOT/benchmarks/fortran/cg.f90
out=$BENCH_BUILD_DIR/fortran
only=" ${BENCH_FORTRAN_ONLY:-mpc openmpi mpich} "
wanted() { [[ $only == *" $1 "* ]]; }
read -r -a rank_counts <<<"${BENCH_FORTRAN_RANKS:-2 4 16}"

bench_need_packages gfortran openmpi-bin libopenmpi-dev mpich libmpich-dev
mkdir -p "$out" "$BENCH_BUILD_DIR/bench-logs"
args=()
[[ $BENCH_QUICK -eq 1 ]] && args+=(--quick)
limit=$((BENCH_QUICK == 1 ? 120 : 300))

mpc_exe=""
mpc_fc=$BENCH_BUILD_DIR/tools/mpc_fc
if wanted mpc && bench_mpc_ready; then
    if ! bench_try_build mpc_fortran || [[ ! -x $mpc_fc ]]; then
        bench_say "!! mpc: no mpc_fc / libmpc_fortran.a in $BENCH_BUILD_DIR (Fortran bindings off?); no mpc figures"
        BENCH_FAILED=1
    elif bench_compile fortran mpc "$mpc_fc" "$src" "$out/cg_mpc"; then
        mpc_exe=$out/cg_mpc
    fi
fi
ompi_exe=""
mpich_exe=""
if wanted openmpi; then
    bench_compile fortran openmpi mpif90.openmpi "$src" "$out/cg_openmpi" && ompi_exe=$out/cg_openmpi
fi
if wanted mpich; then
    bench_compile fortran mpich mpif90.mpich "$src" "$out/cg_mpich" && mpich_exe=$out/cg_mpich
fi
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
ncores=$(nproc)

failures=()
run_impl() {
    local impl=$1 n=$2 label="fortran-$1-$2ranks" cmd=()
    case $impl in
    mpc)
        [[ -n $mpc_exe ]] || return 0
        cmd=("$BENCH_MPC_RUN" -n "$n" "$mpc_exe")
        ;;
    openmpi)
        [[ -n $ompi_exe ]] || return 0
        cmd=(env OMPI_MCA_mpi_yield_when_idle=$((n > ncores ? 1 : 0)) mpirun.openmpi --allow-run-as-root
            --oversubscribe -np "$n" "$ompi_exe")
        ;;
    mpich)
        [[ -n $mpich_exe ]] || return 0
        local bind=()
        [[ $n -le $ncores ]] && bind=(-bind-to core)
        cmd=(mpiexec.mpich -n "$n" "${bind[@]}" "$mpich_exe")
        ;;
    esac
    local log=$BENCH_BUILD_DIR/bench-logs/$label.log failed_before=$BENCH_FAILED
    BENCH_FAILED=0
    bench_exec "$label" "$(command -v timeout)" --verbose -k 10 "$limit" "${cmd[@]}" --impl "$impl" "${args[@]}"
    if grep -q 'timeout: sending signal' "$log"; then
        failures+=("$label: killed after $limit s; log $log")
    elif grep -q 'WRONG RESULT' "$log"; then
        failures+=("$label: wrong results: $(grep -m 1 'WRONG RESULT' "$log")")
    elif [[ $BENCH_FAILED -ne 0 ]]; then
        failures+=("$label: failed, last line of its log: $(tail -n 1 "$log")")
    fi
    BENCH_FAILED=$((BENCH_FAILED | failed_before))
}

bench_say "benchmarks: fortran (CG) on $(bench_machine)"
bench_busy_check
for n in "${rank_counts[@]}"; do
    for impl in mpc openmpi mpich; do
        wanted "$impl" && run_impl "$impl" "$n"
    done
done
status=0
bench_report fortran || status=$?
if [[ ${#failures[@]} -gt 0 ]]; then
    printf '\nFailed runs:\n'
    printf -- '- %s\n' "${failures[@]}"
fi
exit "$status"

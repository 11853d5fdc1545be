#!/usr/bin/env bash
# tests/external/starpu_examples.sh [BUILD]: StarPU 1.3.10's own example programs (Debian's source
# package `starpu`), compiled unchanged with BUILD/tools/mpc_cc (default: build-dev) and with
# Debian's StarPU (pkg-config starpu-1.3), each run with STARPU_NCPU=2; prints one line per
# example: what each build did (ok: exit 0; skip: 77, StarPU's "cannot run here"; else the exit
# status or "build" when it did not compile or link) and, for ours, the first error line.
#
# Not part of ctest: the source comes from `apt-get source --download-only starpu`, which needs a
# deb-src entry (see benchmarks/hpcc/run.sh for the line to add), or from $STARPU_SRC_TARBALL. The
# examples are StarPU's (LGPL), used from their tarball, never copied into this repository.
# Results are recorded in docs/taskgraph.md ("StarPU's own examples").
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$here/build-dev}
mpc_cc=$build/tools/mpc_cc
work=$build/starpu-examples
mkdir -p "$work/src" "$work/bin"
[[ -x $mpc_cc ]] || { echo "no $mpc_cc (build the project first)" >&2; exit 2; }

tarball=${STARPU_SRC_TARBALL:-$(find "$work/src" -maxdepth 1 -name 'starpu_*.orig.tar.gz' | head -n 1)}
if [[ -z $tarball ]]; then
    (cd "$work/src" && apt-get source --download-only starpu >"$work/fetch.log" 2>&1)
    tarball=$(find "$work/src" -maxdepth 1 -name 'starpu_*.orig.tar.gz' | head -n 1)
    [[ -n $tarball ]] || { echo "no StarPU source: apt-get source starpu needs a deb-src entry (log: $work/fetch.log)" >&2; exit 2; }
fi
src=$work/src/tree
if [[ ! -d $src/examples ]]; then
    rm -rf "$src" && mkdir -p "$src" && tar xzf "$tarball" -C "$src" --strip-components=1
fi
have_starpu=0
pkg-config --exists starpu-1.3 2>/dev/null && have_starpu=1

# name|sources (relative to examples/)|arguments|extra flags
examples=(
    "hello_world|basic_examples/hello_world.c||"
    "vector_scal|basic_examples/vector_scal.c basic_examples/vector_scal_cpu.c||"
    "variable|basic_examples/variable.c basic_examples/variable_kernels_cpu.c||"
    "mult|basic_examples/mult.c||"
    "block|basic_examples/block.c basic_examples/block_cpu.c||"
    "dynamic_handles|basic_examples/dynamic_handles.c||"
    "task_insert_color|basic_examples/task_insert_color.c||"
    "multiformat|basic_examples/multiformat.c basic_examples/multiformat_conversion_codelets.c||"
    "topology|basic_examples/topology.c||"
    "callback|callback/callback.c||"
    "prologue|callback/prologue.c||"
    "tag_example|tag_example/tag_example.c||"
    "tag_example2|tag_example/tag_example2.c||"
    "tag_example3|tag_example/tag_example3.c||"
    "tag_example4|tag_example/tag_example4.c||"
    "tag_restartable|tag_example/tag_restartable.c||"
    "incrementer|incrementer/incrementer.c||"
    "sequential_consistency|dependency/sequential_consistency.c||"
    "task_end_dep|dependency/task_end_dep.c||"
    "task_end_dep_add|dependency/task_end_dep_add.c||"
    "fvector|filters/fvector.c||"
    "fblock|filters/fblock.c filters/fblock_cpu.c||"
    "fmatrix|filters/fmatrix.c||"
    "shadow|filters/shadow.c||"
    "shadow2d|filters/shadow2d.c||"
    "shadow3d|filters/shadow3d.c||"
    "frecursive|filters/frecursive.c||"
    "fread|filters/fread.c||"
    "fmultiple_manual|filters/fmultiple_manual.c||"
    "fmultiple_submit|filters/fmultiple_submit.c||"
    "fmultiple_submit_implicit|filters/fmultiple_submit_implicit.c||"
    "fmultiple_submit_readonly|filters/fmultiple_submit_readonly.c||"
    "minmax_reduction|reductions/minmax_reduction.c||"
    "dot_product|reductions/dot_product.c||"
    "pi_redux|pi/pi_redux.c|-ntasks 64 -nshot 100000|"
    "axpy|axpy/axpy.c common/blas.c||-DSTARPU_OPENBLAS -lopenblas"
    "pipeline|pipeline/pipeline.c common/blas.c||-DSTARPU_OPENBLAS -lopenblas"
    "worker_tree_example|worker_collections/worker_tree_example.c||"
    "worker_list_example|worker_collections/worker_list_example.c||"
    "profiling|profiling/profiling.c||"
    "dummy_sched|scheduler/dummy_sched.c||"
    "dummy_modular_sched|scheduler/dummy_modular_sched.c||"
    "sched_ctx|sched_ctx/sched_ctx.c||"
    "sched_ctx_delete|sched_ctx/sched_ctx_delete.c||"
    "sched_ctx_empty|sched_ctx/sched_ctx_empty.c||"
    "sched_ctx_prio|sched_ctx/prio.c||"
    "two_cpu_contexts|sched_ctx/two_cpu_contexts.c||"
    "dummy_sched_with_ctx|sched_ctx/dummy_sched_with_ctx.c||"
    "nested_sched_ctxs|sched_ctx/nested_sched_ctxs.c||-fopenmp"
    "parallel_code|sched_ctx/parallel_code.c||-fopenmp"
    "sched_ctx_without_sched_policy|sched_ctx/sched_ctx_without_sched_policy.c||-fopenmp"
    "sched_ctx_without_sched_policy_awake|sched_ctx/sched_ctx_without_sched_policy_awake.c||-fopenmp"
    "parallel_tasks_reuse_handle|sched_ctx/parallel_tasks_reuse_handle.c||-fopenmp"
    "vector_scal_spmd|spmd/vector_scal_spmd.c||"
    "cg|cg/cg.c cg/cg_kernels.c common/blas.c||-DSTARPU_OPENBLAS -lopenblas"
    "vector_scal_omp|openmp/vector_scal_omp.c||-fopenmp"
    "cholesky_tag|cholesky/cholesky_tag.c cholesky/cholesky_models.c cholesky/cholesky_kernels.c common/blas.c|-size 1920 -nblocks 6|-DSTARPU_OPENBLAS -lopenblas"
    "cholesky_tile_tag|cholesky/cholesky_tile_tag.c cholesky/cholesky_models.c cholesky/cholesky_kernels.c common/blas.c|-size 1920 -nblocks 6|-DSTARPU_OPENBLAS -lopenblas"
    "cholesky_grain_tag|cholesky/cholesky_grain_tag.c cholesky/cholesky_models.c cholesky/cholesky_kernels.c common/blas.c|-size 1920 -nblocks 6|-DSTARPU_OPENBLAS -lopenblas"
    "cholesky_implicit|cholesky/cholesky_implicit.c cholesky/cholesky_models.c cholesky/cholesky_kernels.c sched_ctx_utils/sched_ctx_utils.c common/blas.c|-size 1920 -nblocks 6|-DSTARPU_OPENBLAS -lopenblas"
    "lu_example_double|lu/lu_example_double.c lu/dlu.c lu/dlu_pivot.c lu/dlu_kernels.c common/blas.c|-size 1920 -nblocks 6 -bound|-DSTARPU_OPENBLAS -lopenblas"
    "lu_implicit_example_float|lu/lu_example_float.c lu/slu_implicit.c lu/slu_implicit_pivot.c lu/slu_kernels.c common/blas.c|-size 1920 -nblocks 6|-DSTARPU_OPENBLAS -lopenblas"
)

# run NAME COMPILER-ARGS... : builds and runs one flavour, prints its verdict
verdict() {
    local exe=$1 args=$2 rc
    (cd "$work/bin" && STARPU_NCPU=2 STARPU_SSILENT=1 timeout 120 "$exe" $args >"$exe.run.log" 2>&1)
    rc=$?
    case $rc in
    0) echo ok ;;
    77) echo skip ;;
    124) echo timeout ;;
    *) echo "rc=$rc" ;;
    esac
}

ok=0
total=0
printf '%-28s %-10s %-10s %s\n' example starpu mpc "first error of ours"
for e in "${examples[@]}"; do
    IFS='|' read -r name files args extra <<<"$e"
    srcs=()
    for f in $files; do srcs+=("$src/examples/$f"); done
    sp=n/a
    if [[ $have_starpu -eq 1 ]]; then
        # shellcheck disable=SC2046,SC2086
        if gcc -O2 -I"$src/examples" -I"$src/examples/common" $(pkg-config --cflags starpu-1.3) -o "$work/bin/$name.starpu" \
            "${srcs[@]}" $extra $(pkg-config --libs starpu-1.3) -lm >"$work/bin/$name.starpu.build.log" 2>&1; then
            sp=$(verdict "./$name.starpu" "$args")
        else
            sp=build
        fi
    fi
    why=""
    # shellcheck disable=SC2086
    if "$mpc_cc" -O2 -I"$src/examples" -I"$src/examples/common" -o "$work/bin/$name.mpc" "${srcs[@]}" $extra -lm \
        >"$work/bin/$name.mpc.build.log" 2>&1; then
        mp=$(verdict "./$name.mpc" "$args")
        [[ $mp == ok || $mp == skip ]] || why=$(grep -m 1 -i 'error\|abort\|fatal' "$work/bin/$name.mpc.run.log" | cut -c1-110)
    else
        mp=build
        why=$(grep -m 1 'error\|undefined reference' "$work/bin/$name.mpc.build.log" | sed 's|.*/examples/||' | cut -c1-110)
    fi
    total=$((total + 1))
    [[ $mp == ok || $mp == skip ]] && ok=$((ok + 1))
    printf '%-28s %-10s %-10s %s\n' "$name" "$sp" "$mp" "$why"
done

# StarPU's command-line tools that use only the public API (tools/ of the tarball): built the
# same two ways. Their sources include <common/config.h> (configure's output) for PACKAGE_*:
# a shim gives those. starpu_perfmodel_display runs on the models the examples above stored
# (-l, then -s on the first one listed, then its XML with -x).
mkdir -p "$work/shim/common"
cat >"$work/shim/common/config.h" <<'H'
#define PACKAGE_NAME "StarPU"
#define PACKAGE_VERSION "1.3.10"
#define PACKAGE_STRING "StarPU 1.3.10"
#define PACKAGE_BUGREPORT "starpu-devel@inria.fr"
H
tools=("perfmodel_display|-l" "machine_display|" "calibrate_bus|")
for e in "${tools[@]}"; do
    IFS='|' read -r name args <<<"$e"
    tsrc=$src/tools/starpu_$name.c
    sp=n/a
    if [[ $have_starpu -eq 1 ]]; then
        # shellcheck disable=SC2046
        if gcc -O2 -I"$work/shim" $(pkg-config --cflags starpu-1.3) -o "$work/bin/tool_$name.starpu" "$tsrc" \
            $(pkg-config --libs starpu-1.3) >"$work/bin/tool_$name.starpu.build.log" 2>&1; then
            sp=$(verdict "./tool_$name.starpu" "$args")
        else
            sp=build
        fi
    fi
    why=""
    if "$mpc_cc" -O2 -I"$work/shim" -o "$work/bin/tool_$name.mpc" "$tsrc" >"$work/bin/tool_$name.mpc.build.log" 2>&1; then
        mp=$(verdict "./tool_$name.mpc" "$args")
        if [[ $name == perfmodel_display && $mp == ok ]]; then
            sym=$(sed -n 's/^file: <\(.*\)>$/\1/p' "$work/bin/tool_$name.mpc.run.log" | head -n 1)
            if [[ -n $sym ]]; then
                for a in "-s $sym" "-x -s $sym"; do
                    [[ $(verdict "./tool_$name.mpc" "$a") == ok ]] || { mp="rc($a)"; break; }
                done
            fi
        fi
        [[ $mp == ok || $mp == skip ]] || why=$(grep -m 1 -i 'error\|abort\|fatal' "$work/bin/tool_$name.mpc.run.log" | cut -c1-110)
    else
        mp=build
        why=$(grep -m 1 'error\|undefined reference' "$work/bin/tool_$name.mpc.build.log" | cut -c1-110)
    fi
    total=$((total + 1))
    [[ $mp == ok || $mp == skip ]] && ok=$((ok + 1))
    printf '%-28s %-10s %-10s %s\n' "tools/starpu_$name" "$sp" "$mp" "$why"
done
echo "MPC: $ok of $total examples and tools built and ran (ok or skip); logs in $work/bin"

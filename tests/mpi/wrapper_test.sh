#!/usr/bin/env bash
# wrapper_test.sh MODE TOOLS SRC WORK [BUILD GENERATOR SANITIZER_FLAGS]
# Tests of the compiler wrappers and of mpc_run on programs they build (ctest, label "mpi").
#   TOOLS  <build>/tools (mpc_cc, mpc_cxx, mpicc, mpicxx, mpc_run)   SRC  tests/mpi
#   WORK   a scratch directory (emptied first)                         BUILD  the build tree
# MODE:
#   hello-c     mpc_cc and mpicc build hello.c (one step, and compile + link, and from a static
#               archive holding main); 7 ranks, singleton; a program without main: a link error
#   static-cxx  mpicxx builds static_objects.cpp; constructors and destructors run once per rank
#               (privatized), once in all with -fno-mpc-privatize
#   show        -show / --showme[:...] output, -c adds no link flags, MPC_CC, -fno-mpc-privatize
#   refuse      mpc_run refuses programs not built with the wrappers (status 2, one line)
#   privatize   objects not compiled by the wrappers: a clear link error, -fno-mpc-privatize links
#               them; a PIE with thread-local variables is refused by mpc_run
#   findmpi     CMake's FindMPI pointed at mpicc/mpicxx finds MPC; its programs run on 4 ranks;
#               a project with CC=mpicc CXX=mpicxx builds them too
#   install     the installed, relocated wrappers build a program that the installed mpc_run runs
#               (and Fortran programs with mpif90 / mpif77 when the Fortran bindings are built)
set -euo pipefail
mode=$1
tools=$2
src=$3
work=$4
build=${5:-}
generator=${6:-Ninja}
san_flags=${7:-}

rm -rf "$work"
mkdir -p "$work"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_ranks OUTPUT_FILE N: the output holds "rank R of N" exactly once for every R < N.
expect_ranks() {
  local out=$1 n=$2 r
  for ((r = 0; r < n; ++r)); do
    local c
    c=$(grep -c "^rank $r of $n\$" "$out" || true)
    [ "$c" -eq 1 ] || fail "'rank $r of $n' printed $c times (expected once); output: $(cat "$out")"
  done
  local total
  total=$(grep -c "^rank " "$out" || true)
  [ "$total" -eq "$n" ] || fail "$total rank lines, expected $n"
}

# count_lines FILE TEXT N: TEXT is printed on exactly N lines.
count_lines() {
  local c
  c=$(grep -cF -- "$2" "$1" || true)
  [ "$c" -eq "$3" ] || fail "'$2' printed $c times, expected $3; output: $(cat "$1")"
}

# run_status EXPECTED CMD...: runs CMD (stdout and stderr to $work/out) and checks its status.
run_status() {
  local expected=$1 st=0
  shift
  echo "+ $*"
  "$@" >"$work/out" 2>&1 || st=$?
  cat "$work/out"
  [ "$st" -eq "$expected" ] || fail "exit status $st, expected $expected: $*"
}

case $mode in
  hello-c)
    echo "+ $tools/mpc_cc -O2 -Wall -o $work/hello $src/hello.c"
    "$tools/mpc_cc" -O2 -Wall -o "$work/hello" "$src/hello.c"
    run_status 0 "$tools/mpc_run" -n 7 "$work/hello" 7
    expect_ranks "$work/out" 7
    # separate compile and link steps, through the mpicc name; a program run without mpc_run is
    # a singleton
    "$tools/mpicc" -c "$src/hello.c" -o "$work/hello.o"
    "$tools/mpicc" "$work/hello.o" -o "$work/hello2"
    run_status 0 "$work/hello2" 1
    expect_ranks "$work/out" 1
    run_status 0 "$tools/mpc_run" -n 3 -c 2 "$work/hello2" 3
    expect_ranks "$work/out" 3
    # the size check of hello.c works (a wrong expectation fails the job)
    run_status 1 "$tools/mpc_run" -n 2 "$work/hello2" 5
    # main in a static archive, nothing else on the link line (HPL and HPCC link so): the link
    # pulls main's member in, as a plain executable's link does
    ar rcs "$work/libhello.a" "$work/hello.o"
    "$tools/mpicc" -o "$work/hello3" "$work/libhello.a"
    run_status 0 "$tools/mpc_run" -n 3 "$work/hello3" 3
    expect_ranks "$work/out" 3
    # a program without main fails at link time, naming main
    printf 'int not_main(void) { return 0; }\n' >"$work/nomain.c"
    run_status 1 "$tools/mpc_cc" -o "$work/nomain" "$work/nomain.c"
    grep -q "main" "$work/out" || fail "no mention of main in the link error: $(cat "$work/out")"
    ;;

  static-cxx)
    # privatized (the default): every rank constructs and destroys its own objects
    "$tools/mpicxx" -O2 -Wall -o "$work/static_objects" "$src/static_objects.cpp"
    run_status 0 "$tools/mpc_run" -n 4 "$work/static_objects"
    count_lines "$work/out" "static constructor of global_object" 4
    count_lines "$work/out" "static destructor of global_object" 4
    count_lines "$work/out" "static constructor of function_local" 4
    count_lines "$work/out" "static destructor of function_local" 4
    for r in 0 1 2 3; do
      count_lines "$work/out" "rank $r of 4 sees global_object" 1
    done
    # -fno-mpc-privatize: one shared object, constructed once before the ranks start and
    # destroyed once after they all end
    "$tools/mpicxx" -O2 -Wall -fno-mpc-privatize -o "$work/static_shared" "$src/static_objects.cpp"
    run_status 0 "$tools/mpc_run" -n 4 "$work/static_shared"
    count_lines "$work/out" "static constructor of global_object" 1
    count_lines "$work/out" "static destructor of global_object" 1
    count_lines "$work/out" "static constructor of function_local" 1
    count_lines "$work/out" "static destructor of function_local" 1
    for r in 0 1 2 3; do
      count_lines "$work/out" "rank $r of 4 sees global_object" 1
    done
    last=$(grep -n "sees global_object" "$work/out" | tail -n1 | cut -d: -f1)
    dtor=$(grep -n "static destructor of global_object" "$work/out" | cut -d: -f1)
    [ "$dtor" -gt "$last" ] || fail "the shared global destructor ran before the last rank"
    ;;

  show)
    # two directories: mpi.h's, and StarPU's headers (starpu/1.3, included by name)
    incdirs=$("$tools/mpc_cc" --showme:incdirs)
    inc=${incdirs%% *}
    [ -f "$inc/mpi.h" ] || fail "--showme:incdirs '$incdirs' has no mpi.h"
    [ "$incdirs" = "$inc $inc/starpu/1.3" ] || fail "--showme:incdirs '$incdirs' lacks $inc/starpu/1.3"
    [ -f "$inc/starpu/1.3/starpu_data_filters.h" ] || fail "no starpu_data_filters.h in $inc/starpu/1.3"
    [ "$("$tools/mpc_cxx" --showme:incdirs)" = "$incdirs" ] || fail "--showme:incdirs of mpc_cxx"
    incf="-I$inc -I$inc/starpu/1.3"
    pic="-fPIC -fno-semantic-interposition"
    [ "$("$tools/mpc_cc" --showme:compile)" = "$incf $pic${san_flags:+ $san_flags}" ] ||
      fail "--showme:compile: $("$tools/mpc_cc" --showme:compile)"
    [ "$("$tools/mpc_cc" --showme:compile -fno-mpc-privatize)" = "$incf${san_flags:+ $san_flags}" ] ||
      fail "--showme:compile -fno-mpc-privatize: $("$tools/mpc_cc" --showme:compile -fno-mpc-privatize)"
    found_so=no
    found_a=no
    for d in $("$tools/mpc_cc" --showme:libdirs); do
      [ -e "$d/libmpc.so" ] && found_so=yes
      [ -e "$d/libmpc_start.a" ] && [ -e "$d/libmpc_image.a" ] && found_a=yes
    done
    [ "$found_so,$found_a" = yes,yes ] || fail "--showme:libdirs lacks libmpc.so, libmpc_image.a or libmpc_start.a"
    [ "$("$tools/mpc_cc" --showme:libs)" = "mpc_image mpc_image_libc mpc" ] || fail "--showme:libs"
    [ "$("$tools/mpc_cc" --showme:libs -fno-mpc-privatize)" = "mpc_start mpc" ] || fail "--showme:libs -fno-mpc-privatize"
    [ "$("$tools/mpc_cc" --showme:command)" = cc ] || fail "--showme:command"
    [ "$("$tools/mpc_cxx" --showme:command)" = c++ ] || fail "--showme:command of mpc_cxx"
    link=$("$tools/mpc_cc" --showme:link)
    case $link in
      *"-shared -Wl,-Bsymbolic -Wl,-z,defs -Wl,-e,mpc_image_entry"*-Wl,--whole-archive\ -lmpc_image\ -Wl,--no-whole-archive\ -lmpc_image_libc\ -lmpc\ -Wl,--push-state,--as-needed\ -lhwloc\ -Wl,--pop-state) ;;
      # (sanitizer builds: the libc archive whole, to win over the sanitizer's interceptors)
      *"-shared -Wl,-Bsymbolic -Wl,-z,defs -Wl,-e,mpc_image_entry"*-Wl,--whole-archive\ -lmpc_image\ -lmpc_image_libc\ -Wl,--no-whole-archive\ -lmpc\ -Wl,--push-state,--as-needed\ -lhwloc\ -Wl,--pop-state)
        [ -n "$san_flags" ] || fail "--showme:link: the libc archive whole without a sanitizer: $link" ;;
      *) fail "--showme:link: $link" ;;
    esac
    shared_link=$("$tools/mpc_cc" --showme:link -fno-mpc-privatize)
    case $shared_link in
      *-Wl,--export-dynamic*-Wl,--whole-archive\ -lmpc_start\ -Wl,--no-whole-archive\ -lmpc\ -Wl,--push-state,--as-needed\ -lhwloc\ -Wl,--pop-state) ;;
      *) fail "--showme:link -fno-mpc-privatize: $shared_link" ;;
    esac
    # -show / --showme: the whole command, the user's arguments between compile and link flags
    for flag in -show --showme -showme; do
      line=$("$tools/mpicc" $flag -O2 x.c -o x -fno-mpc-privatize)
      [ "$line" = "cc $incf${san_flags:+ $san_flags} -O2 x.c -o x $shared_link" ] || fail "$flag: $line"
      line=$("$tools/mpicc" $flag -O2 x.c -o x)
      [ "$line" = "cc $incf $pic${san_flags:+ $san_flags} -O2 x.c -o x $link" ] || fail "$flag (privatized): $line"
    done
    line=$("$tools/mpicxx" -show -c x.cpp)
    [ "$line" = "c++ $incf $pic${san_flags:+ $san_flags} -c x.cpp" ] || fail "-show -c: $line"
    # -pie / -no-pie: dropped when privatized (the program is linked -shared), kept otherwise
    line=$("$tools/mpicc" -show -no-pie x.c)
    case $line in *-no-pie*) fail "-no-pie kept in a privatized link: $line" ;; esac
    line=$("$tools/mpicc" -show -no-pie -fno-mpc-privatize x.c)
    case $line in *-no-pie*) ;; *) fail "-no-pie dropped with -fno-mpc-privatize: $line" ;; esac
    # a static executable cannot be privatized: refused, with the way out
    run_status 1 "$tools/mpc_cc" -static -o "$work/static" x.c
    grep -q "cannot be privatized.*-fno-mpc-privatize" "$work/out" || fail "-static: $(cat "$work/out")"
    for f in -E -S -M -MM; do
      line=$("$tools/mpc_cc" -show $f x.c)
      case $line in *-lmpc*) fail "-show $f links: $line" ;; esac
    done
    # a shared library gets libmpc but not the start-up code
    line=$("$tools/mpc_cc" -show -shared -fPIC lib.c -o libx.so)
    case $line in *-lmpc_start* | *--export-dynamic*) fail "-shared: $line" ;; *" -lmpc -Wl,--push-state,--as-needed -lhwloc -Wl,--pop-state") ;; *) fail "-shared: $line" ;; esac
    line=$(MPC_CC="ccache gcc" "$tools/mpc_cc" -show x.c)
    case $line in "ccache gcc -I$inc"*" x.c "*) ;; *) fail "MPC_CC: $line" ;; esac
    line=$(MPC_CXX=clang++ "$tools/mpicxx" --showme)
    case $line in "clang++ -I$inc"*) ;; *) fail "MPC_CXX: $line" ;; esac
    # unknown --showme:x is an error; --version works (nothing to link)
    run_status 1 "$tools/mpc_cc" --showme:nonsense
    grep -q "unknown option --showme:nonsense" "$work/out" || fail "no message for --showme:nonsense"
    run_status 0 "$tools/mpc_cc" --version
    run_status 0 "$tools/mpicxx" --version
    # -fno-mpc-privatize is dropped, not passed on (cc would reject it)
    printf 'int main(void) { return 0; }\n' >"$work/empty.c"
    "$tools/mpc_cc" -fno-mpc-privatize -c "$work/empty.c" -o "$work/empty.o"
    ;;

  refuse)
    msg="was not built with mpc_cc/mpc_cxx (MPI programs must link MPC's mpi.h and start-up code)"
    run_status 2 "$tools/mpc_run" -n 4 /bin/true
    [ "$(cat "$work/out")" = "mpc_run: /bin/true $msg" ] || fail "message: $(cat "$work/out")"
    # an MPI program compiled and linked against libmpc by hand, without the start-up code
    flags=$("$tools/mpc_cc" --showme:compile)
    libdir=$("$tools/mpc_cc" --showme:libdirs | cut -d' ' -f1)
    # shellcheck disable=SC2086
    cc $flags "$src/hello.c" -o "$work/plain" -L"$libdir" -Wl,-rpath,"$libdir" -lmpc
    run_status 2 "$tools/mpc_run" -n 2 "$work/plain" 2
    [ "$(cat "$work/out")" = "mpc_run: $work/plain $msg" ] || fail "message: $(cat "$work/out")"
    # a stripped program built with the wrapper is still recognised (the marker is in .dynsym)
    "$tools/mpc_cc" -o "$work/stripped" "$src/hello.c"
    strip "$work/stripped"
    run_status 0 "$tools/mpc_run" -n 2 "$work/stripped" 2
    expect_ranks "$work/out" 2
    # a script is trusted, and -v says so
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$work/stripped" >"$work/wrapper.sh"
    chmod +x "$work/wrapper.sh"
    run_status 0 "$tools/mpc_run" -v -n 3 "$work/wrapper.sh" 3
    grep -q "is a script (#!/bin/sh), run without checking" "$work/out" || fail "-v does not flag the script"
    expect_ranks "$work/out" 3
    ;;

  privatize)
    # An object compiled without the wrapper (cc defaults to -fPIE) that reads a variable of a
    # library (stdout) cannot join a privatized program: the link fails and says what to do.
    # (Its references to the program's own globals would link: -Bsymbolic binds them inside.)
    printf '#include <stdio.h>\nextern int shared_value;\nint get_value(void) { return stdout != NULL ? shared_value : 0; }\n' >"$work/plain_part.c"
    printf '#include <mpi.h>\nint shared_value = 3;\nint get_value(void);\nint main(int c, char** v) { MPI_Init(&c, &v); int r = get_value(); MPI_Finalize(); return r - 3; }\n' >"$work/main_part.c"
    cc -c "$work/plain_part.c" -o "$work/plain_part.o"
    run_status 1 "$tools/mpc_cc" -o "$work/mixed" "$work/main_part.c" "$work/plain_part.o"
    grep -q "was not compiled for privatization.*compile it with mpc_cc.*-fno-mpc-privatize" "$work/out" ||
      fail "no advice for a non-PIC object: $(cat "$work/out")"
    # with -fno-mpc-privatize it links and runs (the ranks share the globals)
    run_status 0 "$tools/mpc_cc" -fno-mpc-privatize -o "$work/mixed" "$work/main_part.c" "$work/plain_part.o"
    run_status 0 "$tools/mpc_run" -n 3 "$work/mixed"
    # compiled by the wrapper, it privatizes
    run_status 0 "$tools/mpc_cc" -o "$work/whole" "$work/main_part.c" "$work/plain_part.c"
    run_status 0 "$tools/mpc_run" -n 3 "$work/whole"
    # A shared library of the program's own, built with mpc_cc -shared: its globals would be
    # shared by the ranks, so mpc_run refuses the program (one line, status 2).
    printf 'int own_value = 1;\nint own_get(void) { return own_value; }\n' >"$work/own.c"
    run_status 0 "$tools/mpc_cc" -shared -o "$work/libown.so" "$work/own.c"
    printf '#include <mpi.h>\nint own_get(void);\nint main(int c, char** v) { MPI_Init(&c, &v); int r = own_get(); MPI_Finalize(); return r - 1; }\n' >"$work/uses_own.c"
    run_status 0 "$tools/mpc_cc" -o "$work/uses_own" "$work/uses_own.c" -L"$work" -lown -Wl,-rpath,"$work"
    run_status 2 "$tools/mpc_run" -n 2 "$work/uses_own"
    grep -q "links the shared library .*libown.so, built with mpc_cc.*Link it statically" "$work/out" ||
      fail "own shared library: $(cat "$work/out")"
    [ "$(wc -l <"$work/out")" -eq 1 ] || fail "own shared library: more than one line: $(cat "$work/out")"
    # A position-independent executable with thread-local variables (plain cc with the link
    # flags, as a build that drops -shared would make it): refused at mpc_run time, status 2.
    printf '#include <mpi.h>\n_Thread_local int t = 1;\nint main(int c, char** v) { MPI_Init(&c, &v); t = 2; MPI_Finalize(); return t - 2; }\n' >"$work/tls.c"
    incdirs=$("$tools/mpc_cc" --showme:incdirs)
    libdirs=$("$tools/mpc_cc" --showme:libdirs)
    set --
    for d in $incdirs; do set -- "$@" -I"$d"; done
    for d in $libdirs; do set -- "$@" -L"$d" -Wl,-rpath,"$d"; done
    # shellcheck disable=SC2086
    cc "$@" ${san_flags} "$work/tls.c" -o "$work/tls_pie" -Wl,-e,mpc_image_entry -Wl,--export-dynamic-symbol=main \
      -Wl,--whole-archive -lmpc_image -Wl,--no-whole-archive -lmpc
    run_status 2 "$tools/mpc_run" -n 2 "$work/tls_pie"
    grep -q "cannot run .* with one copy of its globals per rank: has thread-local variables and was linked as a position-independent executable" "$work/out" ||
      fail "PIE with TLS: $(cat "$work/out")"
    [ "$(wc -l <"$work/out")" -eq 1 ] || fail "PIE with TLS: more than one line: $(cat "$work/out")"
    ;;

  findmpi)
    [ -n "$build" ] || fail "findmpi needs BUILD"
    cmake_flags=()
    if [ -n "$san_flags" ]; then
      cmake_flags=(-DCMAKE_C_FLAGS="$san_flags" -DCMAKE_CXX_FLAGS="$san_flags" -DCMAKE_EXE_LINKER_FLAGS="$san_flags")
    fi
    echo "+ cmake -S $src/findmpi -B $work/build -DMPI_C_COMPILER=$tools/mpicc -DMPI_CXX_COMPILER=$tools/mpicxx"
    cmake -S "$src/findmpi" -B "$work/build" -G "$generator" -DMPC_TEST_SOURCE_DIR="$src" \
      -DMPI_C_COMPILER="$tools/mpicc" -DMPI_CXX_COMPILER="$tools/mpicxx" "${cmake_flags[@]}" >"$work/configure.log" 2>&1 ||
      { cat "$work/configure.log"; tail -n 60 "$work/build/CMakeFiles/CMakeError.log" 2>/dev/null; fail "configure"; }
    cat "$work/configure.log"
    grep -q 'Found MPI_C: .*(found version "3.1")' "$work/configure.log" || fail "FindMPI did not report MPI_C 3.1"
    grep -q 'Found MPI_CXX: .*(found version "3.1")' "$work/configure.log" || fail "FindMPI did not report MPI_CXX 3.1"
    cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build"; }
    run_status 0 "$tools/mpc_run" -n 4 "$work/build/hello_c" 4
    expect_ranks "$work/out" 4
    # FindMPI drops -fPIC and -shared: a position-independent executable, privatized too
    run_status 0 "$tools/mpc_run" -n 4 "$work/build/static_objects_cxx"
    count_lines "$work/out" "static constructor of global_object" 4
    count_lines "$work/out" "static destructor of global_object" 4
    count_lines "$work/out" "of 4 sees global_object" 4
    # the wrappers as the project's compilers (CC=mpicc CXX=mpicxx cmake ...)
    echo "+ CC=$tools/mpicc CXX=$tools/mpicxx cmake -S $src/findmpi -B $work/build-cc"
    CC="$tools/mpicc" CXX="$tools/mpicxx" cmake -S "$src/findmpi" -B "$work/build-cc" -G "$generator" \
      -DMPC_TEST_SOURCE_DIR="$src" -DMPC_TEST_WRAPPERS_AS_COMPILERS=ON >"$work/configure-cc.log" 2>&1 ||
      { cat "$work/configure-cc.log"; fail "configure with CC=mpicc"; }
    cmake --build "$work/build-cc" >"$work/build-cc.log" 2>&1 || { cat "$work/build-cc.log"; fail "build with CC=mpicc"; }
    run_status 0 "$tools/mpc_run" -n 3 "$work/build-cc/hello_c" 3
    expect_ranks "$work/out" 3
    run_status 0 "$tools/mpc_run" -n 2 "$work/build-cc/static_objects_cxx"
    count_lines "$work/out" "static destructor of global_object" 2
    ;;

  install)
    [ -n "$build" ] || fail "install needs BUILD"
    cmake --install "$build" --prefix "$work/prefix" >/dev/null
    for f in bin/mpc_cc bin/mpc_cxx bin/mpicc bin/mpicxx bin/mpc_run include/mpi.h; do
      [ -e "$work/prefix/$f" ] || fail "not installed: $f"
    done
    [ -L "$work/prefix/bin/mpicc" ] || fail "bin/mpicc is not a symlink"
    [ -n "$(find "$work/prefix" -name libmpc_start.a)" ] || fail "libmpc_start.a not installed"
    # relocatable: move the installed tree, and call it through a symlink from elsewhere
    mv "$work/prefix" "$work/moved"
    mkdir -p "$work/elsewhere"
    ln -s "$work/moved/bin/mpicc" "$work/elsewhere/mpicc"
    inc=$("$work/elsewhere/mpicc" --showme:incdirs)
    moved_inc="$(cd "$work/moved" && pwd -P)/include"
    [ "$inc" = "$moved_inc $moved_inc/starpu/1.3" ] || fail "--showme:incdirs of the moved tree: $inc"
    [ -f "$moved_inc/starpu/1.3/starpu_sched_component.h" ] || fail "not installed: include/starpu/1.3/starpu_sched_component.h"
    "$work/elsewhere/mpicc" -o "$work/hello" "$src/hello.c"
    "$work/moved/bin/mpicxx" -o "$work/static_objects" "$src/static_objects.cpp"
    run_status 0 "$work/moved/bin/mpc_run" -n 5 "$work/hello" 5
    expect_ranks "$work/out" 5
    run_status 0 "$work/moved/bin/mpc_run" -n 2 "$work/static_objects"
    count_lines "$work/out" "static destructor of global_object" 2
    # Fortran (when built): mpif.h and the modules beside mpi.h, libmpc_fortran.a beside libmpc
    if [ -e "$work/moved/bin/mpc_fc" ]; then
      for f in bin/mpif90 bin/mpifort bin/mpif77 include/mpif.h include/mpi.mod include/mpi_f08.mod; do
        [ -e "$work/moved/$f" ] || fail "not installed: $f"
      done
      ln -s "$work/moved/bin/mpif90" "$work/elsewhere/mpif90"
      "$work/elsewhere/mpicc" -c -o "$work/f08c.o" "$src/fortran/f08_status_ignore.c"  # its C part
      "$work/elsewhere/mpif90" -J "$work" -o "$work/f08" "$src/fortran/fcheck.f90" "$src/fortran/use_mpi_f08.f90" \
        "$work/f08c.o"  # fcheck: the test programs' check module
      "$work/moved/bin/mpif77" -o "$work/f77" "$src/fortran/mpif_basic.f"
      for p in f08 f77; do
        run_status 0 "$work/moved/bin/mpc_run" -n 3 "$work/$p"
        grep -q "3 ranks ok" "$work/out" || fail "installed $p: $(cat "$work/out")"
      done
    fi
    # the program finds the installed libmpc by its rpath, not the build tree's
    libs=$(ldd "$work/hello")
    grep -q "libmpc.so.* => $(cd "$work/moved" && pwd -P)/" <<<"$libs" || fail "rpath: $libs"
    ;;

  *)
    fail "unknown mode '$mode'"
    ;;
esac
echo "OK: $mode"

#!/bin/sh
# fc_wrapper_test.sh TOOLS SRC WORK: tests of mpc_fc (and mpif90, mpifort, mpif77), as
# wrapper_test.sh's "show" mode tests mpc_cc: the --showme[:...] output, -show, -c, MPC_FC,
# -fno-mpc-privatize, a bad --showme option; then programs built with each name run on 3 ranks.
set -eu
tools=$1
src=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

inc=$("$tools/mpc_fc" --showme:incdirs)
set -- $inc
[ $# -eq 2 ] || fail "--showme:incdirs: expected the C and Fortran include folders: $inc"
[ -f "$1/mpi.h" ] || fail "--showme:incdirs: no mpi.h in $1"
for f in mpif.h mpi.mod mpi_f08.mod; do
  [ -f "$2/$f" ] || fail "--showme:incdirs: no $f in $2"
done
cinc=$1
finc=$2
pic="-fPIC -fno-semantic-interposition"
compile=$("$tools/mpc_fc" --showme:compile)
case $compile in
  "-I$cinc -I$finc $pic"*) ;;
  *) fail "--showme:compile: $compile" ;;
esac
[ "$("$tools/mpc_fc" --showme:libs)" = "mpc_image mpc_image_libc mpc_fortran mpc" ] || fail "--showme:libs: $("$tools/mpc_fc" --showme:libs)"
[ "$("$tools/mpc_fc" --showme:libs -fno-mpc-privatize)" = "mpc_start mpc_fortran mpc" ] || fail "--showme:libs -fno-mpc-privatize"
found=no
for d in $("$tools/mpc_fc" --showme:libdirs); do
  [ -e "$d/libmpc_fortran.a" ] && found=yes
done
[ $found = yes ] || fail "--showme:libdirs lacks libmpc_fortran.a"
[ "$("$tools/mpc_fc" --showme:command)" = gfortran ] || fail "--showme:command"
[ "$(MPC_FC=gfortran-12 "$tools/mpc_fc" --showme:command)" = gfortran-12 ] || fail "MPC_FC"
link=$("$tools/mpc_fc" --showme:link)
case $link in
  *"-shared -Wl,-Bsymbolic -Wl,-z,defs -Wl,-e,mpc_image_entry"*"-Wl,--whole-archive -lmpc_image -Wl,--no-whole-archive -lmpc_image_libc -lmpc_fortran -lmpc -Wl,--push-state,--as-needed -lhwloc -Wl,--pop-state") ;;
  # (sanitizer builds: the libc archive whole, to win over the sanitizer's interceptors)
  *"-shared -Wl,-Bsymbolic -Wl,-z,defs -Wl,-e,mpc_image_entry"*"-Wl,--whole-archive -lmpc_image -lmpc_image_libc -Wl,--no-whole-archive -lmpc_fortran -lmpc -Wl,--push-state,--as-needed -lhwloc -Wl,--pop-state") ;;
  *) fail "--showme:link: $link" ;;
esac
for name in mpc_fc mpif90 mpifort mpif77; do
  for flag in -show --showme -showme; do
    line=$("$tools/$name" $flag -O2 x.f90 -o x)
    case $line in
      "gfortran -I$cinc $pic"*" -O2 x.f90 -o x "*"-I$finc "*"-lmpc_fortran -lmpc -Wl,--push-state,--as-needed -lhwloc -Wl,--pop-state") ;;
      *) fail "$name $flag: $line" ;;
    esac
  done
done
line=$("$tools/mpif90" -show -c x.f90)
case $line in
  *-lmpc*|*-Wl,*) fail "-show -c links: $line" ;;
  "gfortran -I$cinc $pic"*"-c x.f90 -I$finc") ;;
  *) fail "-show -c: $line" ;;
esac
if "$tools/mpc_fc" --showme:frobnicate 2>err; then
  fail "--showme:frobnicate accepted"
fi
grep -q "mpc_fc: unknown option --showme:frobnicate" err || fail "--showme:frobnicate: $(cat err)"

# Programs: one step, compile then link, each name, privatized or not.
"$tools/mpif77" -O1 "$src/mpif_basic.f" -o f77 || fail "mpif77 build"
"$tools/mpifort" -c "$src/fcheck.f90" -o fcheck.o || fail "mpifort -c (fcheck)"
"$tools/mpifort" -c "$src/use_mpi_f08.f90" -o f08.o || fail "mpifort -c"
"$tools/mpc_cc" -c "$src/f08_status_ignore.c" -o f08c.o || fail "mpc_cc -c (use_mpi_f08's C part)"
"$tools/mpifort" fcheck.o f08.o f08c.o -o f08 || fail "mpifort link (Fortran and C objects)"
"$tools/mpif90" -fno-mpc-privatize "$src/use_mpi.f90" -o f90 || fail "mpif90 -fno-mpc-privatize"
for p in f77 f08 f90; do
  "$tools/mpc_run" -n 3 "./$p" >out 2>&1 || fail "$p on 3 ranks: $(cat out)"
  grep -q "3 ranks ok" out || fail "$p: $(cat out)"
done
echo "mpc_fc: ok"

! MPI_REAL16 and MPI_COMPLEX32: gfortran's REAL(16) / COMPLEX(16) (IEEE binary128) through
! point to point and reductions whose results need more than double precision (each is exact in
! binary128, and lost when rounded to double), MPI_Type_create_f90_real / _complex, and the
! operations not defined on them. docs/fortran.md, "Datatypes".
program real16_f
  use mpi_f08
  use fcheck
  implicit none
  integer, parameter :: qp = 16
  real(qp), parameter :: tiny_step = 2.0_qp**(-100)
  real(qp) :: x(3), r(3), lo, hi, sec(6)
  complex(qp) :: z(2), zs(2)
  integer :: rank, size, k, n, ierr
  type(MPI_Datatype) :: t
  type(MPI_Comm) :: ret

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  check_rank = rank
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  call check(MPI_REAL16 /= MPI_DATATYPE_NULL .and. MPI_COMPLEX32 /= MPI_DATATYPE_NULL, 'MPI_REAL16 is a type')
  call MPI_Type_size(MPI_REAL16, n)
  call check(n == 16, 'MPI_Type_size(MPI_REAL16)')
  call MPI_Type_size(MPI_COMPLEX32, n)
  call check(n == 32, 'MPI_Type_size(MPI_COMPLEX32)')
  call MPI_Type_create_f90_real(precision(1.0_qp), range(1.0_qp), t)
  call MPI_Type_size(t, n)
  call check(n == 16, 'MPI_Type_create_f90_real(33, 4931)')
  call MPI_Type_create_f90_complex(precision(1.0_qp), MPI_UNDEFINED, t)
  call MPI_Type_size(t, n)
  call check(n == 32, 'MPI_Type_create_f90_complex(33)')

  ! SUM of 1 + rank * 2**-100: exact in binary128, 1 + ... rounds to 1 in double
  x = [1.0_qp + rank * tiny_step, -1.0_qp - rank * tiny_step, real(rank, qp)]
  call MPI_Allreduce(x, r, 3, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD)
  k = size * (size - 1) / 2
  call check(r(1) == size + k * tiny_step .and. r(2) == -(size + k * tiny_step) .and. r(3) == k, 'MPI_SUM')
  call check(size == 1 .or. (r(1) /= size .and. real(r(1), 8) == size), 'the sum needs binary128')
  ! MAX / MIN: values that differ beyond double precision
  call MPI_Allreduce(x(1), hi, 1, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD)
  call MPI_Allreduce(x(1), lo, 1, MPI_REAL16, MPI_MIN, MPI_COMM_WORLD)
  call check(hi == 1 + (size - 1) * tiny_step .and. lo == 1, 'MPI_MAX / MPI_MIN')
  ! PROD: rank 0 gives 1 + 2**-60, the others 2: exactly 2**(size-1) * (1 + 2**-60)
  x(1) = merge(1 + 2.0_qp**(-60), 2.0_qp, rank == 0)
  call MPI_Reduce(x(1), r(1), 1, MPI_REAL16, MPI_PROD, 0, MPI_COMM_WORLD)
  if (rank == 0) call check(r(1) == 2.0_qp**(size - 1) * (1 + 2.0_qp**(-60)), 'MPI_PROD')

  ! COMPLEX(16): SUM, and PROD by i on every rank but 0 (exact rotations)
  z(1) = cmplx(1 + rank * tiny_step, -rank * tiny_step, qp)
  z(2) = merge(cmplx(1 + 2.0_qp**(-70), 2.0_qp**(-80), qp), (0.0_qp, 1.0_qp), rank == 0)
  call MPI_Allreduce(z(1), zs(1), 1, MPI_COMPLEX32, MPI_SUM, MPI_COMM_WORLD)
  call check(zs(1) == cmplx(size + k * tiny_step, -k * tiny_step, qp), 'MPI_SUM on MPI_COMPLEX32')
  call MPI_Allreduce(z(2), zs(2), 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD)
  call check(zs(2) == cmplx(1 + 2.0_qp**(-70), 2.0_qp**(-80), qp) * (0.0_qp, 1.0_qp)**(size - 1), &
             'MPI_PROD on MPI_COMPLEX32')

  ! point to point, and a strided section of REAL(16)
  sec = -1
  x = [(rank + k * tiny_step, k = 1, 3)]
  call MPI_Sendrecv(x, 3, MPI_REAL16, mod(rank + 1, size), 1, sec(1:6:2), 3, MPI_REAL16, &
                    mod(rank - 1 + size, size), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  k = mod(rank - 1 + size, size)
  call check(all(sec(1:6:2) == [(k + n * tiny_step, n = 1, 3)]) .and. all(sec(2:6:2) == -1), 'Sendrecv of REAL(16)')
  call MPI_Allreduce(MPI_IN_PLACE, sec(2:6:2), 3, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD)
  call check(all(sec(2:6:2) == -size), 'MPI_IN_PLACE MPI_SUM on a REAL(16) section')

  ! operations not defined on them
  call MPI_Comm_dup(MPI_COMM_WORLD, ret)
  call MPI_Comm_set_errhandler(ret, MPI_ERRORS_RETURN)
  call MPI_Allreduce(z(1), zs(1), 1, MPI_COMPLEX32, MPI_MAX, ret, ierr)
  call check(ierr == MPI_ERR_OP, 'MPI_MAX on MPI_COMPLEX32')
  call MPI_Allreduce(x(1), r(1), 1, MPI_REAL16, MPI_BAND, ret, ierr)
  call check(ierr == MPI_ERR_OP, 'MPI_BAND on MPI_REAL16')
  call MPI_Comm_free(ret)

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(A)', 'real16_f: OK'
  call MPI_Finalize()
end program real16_f

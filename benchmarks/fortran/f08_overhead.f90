! Instructions per Isend+Irecv+Waitall to self of one REAL(8) through module mpi (the
! address, as mpi_f08 passed it before) and mpi_f08 (a descriptor), and of a strided section
! through mpi_f08. Usage: f08_overhead MODE N (MODE 1 mpi, 2 mpi_f08, 3 mpi_f08 section).
subroutine via_mpi(n)
  use mpi
  implicit none
  integer, intent(in) :: n
  integer :: i, req(2), ierr
  real(8) :: a(4), b(4)
  a = 1
  do i = 1, n
    call MPI_Irecv(b, 1, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(a, 1, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
  end do
end subroutine via_mpi
subroutine via_f08(n, strided)
  use mpi_f08
  implicit none
  integer, intent(in) :: n
  logical, intent(in) :: strided
  integer :: i
  type(MPI_Request) :: req(2)
  real(8) :: a(4), b(4)
  a = 1
  do i = 1, n
    if (strided) then
      call MPI_Irecv(b(1:4:2), 2, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, req(1))
      call MPI_Isend(a(1:4:2), 2, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, req(2))
    else
      call MPI_Irecv(b, 1, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, req(1))
      call MPI_Isend(a, 1, MPI_DOUBLE_PRECISION, 0, 1, MPI_COMM_WORLD, req(2))
    end if
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
  end do
end subroutine via_f08
program f08_overhead
  use mpi_f08
  implicit none
  character(len=16) :: arg
  integer :: mode, n
  call get_command_argument(1, arg)
  read(arg, *) mode
  call get_command_argument(2, arg)
  read(arg, *) n
  call MPI_Init()
  if (mode == 1) call via_mpi(n)
  if (mode >= 2) call via_f08(n, mode == 3)
  call MPI_Finalize()
end program f08_overhead

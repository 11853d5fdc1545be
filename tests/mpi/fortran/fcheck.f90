! check(ok, what) for the mpi_f08 test programs: prints the failed check's line, flushes it and
! calls MPI_Abort. Set check_rank to the rank first.
module fcheck
  use mpi_f08
  implicit none
  integer :: check_rank = -1
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(A,I0,2A)', 'FAIL: rank ', check_rank, ': ', what
      flush(6)  ! MPI_Abort ends the process without closing Fortran's units
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end module fcheck

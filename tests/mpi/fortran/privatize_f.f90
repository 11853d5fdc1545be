! Privatization of Fortran globals: a COMMON block, a module variable and a SAVE variable that
! every rank sets to its rank, then checks after a barrier (a shared copy would hold the rank
! of the last writer).
module rank_state
  implicit none
  integer :: module_rank = -1
  double precision :: module_array(100)
end module rank_state

program privatize_f
  use mpi
  use rank_state
  implicit none
  integer :: rank, nranks, ierr, common_rank
  double precision :: common_data(50)
  common /rank_block/ common_data, common_rank

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  common_rank = rank
  common_data = rank
  module_rank = rank
  module_array = -rank
  call saved(rank, .true.)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call check(common_rank == rank .and. all(common_data == rank), 'COMMON block')
  call check(module_rank == rank .and. all(module_array == -rank), 'module variable')
  call saved(rank, .false.)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(A,I0,A)', 'privatize_f: ', nranks, ' ranks ok'
  call MPI_Finalize(ierr)
contains
  subroutine saved(r, set)
    integer, intent(in) :: r
    logical, intent(in) :: set
    integer, save :: saved_rank = -1
    if (set) then
      saved_rank = r
    else
      call check(saved_rank == r, 'SAVE variable')
    end if
  end subroutine saved
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(A,I0,2A)', 'FAIL: rank ', rank, ': ', what
      flush(6)  ! MPI_Abort ends the process without closing Fortran's units
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine check
end program privatize_f

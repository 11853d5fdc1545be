! `use mpi_f08`: TYPE(MPI_Comm)... handles, optional ierror, TYPE(MPI_Status), MPI_IN_PLACE,
! MPI_STATUS_IGNORE, derived types and errors returned in ierror.
module f08_callbacks
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: last_error = MPI_SUCCESS
contains
  ! the element of larger magnitude (an MPI_User_function of mpi_f08)
  subroutine absmax(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    if (datatype == MPI_INTEGER) then
      where (abs(a) > abs(b)) b = a
    end if
  end subroutine absmax
  subroutine remember(comm, error_code)
    type(MPI_Comm) :: comm
    integer :: error_code
    if (comm /= MPI_COMM_NULL) last_error = error_code
  end subroutine remember
end module f08_callbacks

program use_mpi_f08
  use mpi_f08
  use f08_callbacks
  implicit none
  integer :: rank, nranks, i, ierr, cls, n
  type(MPI_Comm) :: dup
  type(MPI_Status) :: st
  type(MPI_Request) :: reqs(2)
  type(MPI_Datatype) :: pair
  type(MPI_Op) :: myop
  type(MPI_Errhandler) :: handler
  integer :: cls2
  double precision :: a(10), b(10), s
  integer :: iv(2)
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: name

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call check(dup /= MPI_COMM_WORLD .and. dup /= MPI_COMM_NULL, 'MPI_Comm_dup')
  call MPI_Comm_set_name(dup, 'f08 dup   ')
  call MPI_Comm_get_name(dup, name, n)
  call check(name == 'f08 dup' .and. n == 7, 'names (trailing blanks dropped)')

  a = [(dble(rank * 10 + i), i = 1, 10)]
  reqs = MPI_REQUEST_NULL
  call MPI_Irecv(b, 10, MPI_DOUBLE_PRECISION, mod(rank + nranks - 1, nranks), 1, dup, reqs(1))
  call MPI_Isend(a, 10, MPI_DOUBLE_PRECISION, mod(rank + 1, nranks), 1, dup, reqs(2))
  call MPI_Wait(reqs(1), st)
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE)
  call check(st%MPI_SOURCE == mod(rank + nranks - 1, nranks) .and. st%MPI_TAG == 1, 'TYPE(MPI_Status)')
  call MPI_Get_count(st, MPI_DOUBLE_PRECISION, n)
  call check(n == 10 .and. b(10) == mod(rank + nranks - 1, nranks) * 10 + 10, 'ring')
  call check(reqs(1) == MPI_REQUEST_NULL, 'request freed')

  s = rank
  call MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, dup, ierr)
  call check(ierr == MPI_SUCCESS .and. s == nranks * (nranks - 1) / 2d0, 'MPI_Allreduce in place')

  call MPI_Type_contiguous(2, MPI_INTEGER, pair)
  call MPI_Type_commit(pair)
  iv = [rank, -rank]
  call MPI_Bcast(iv, 1, pair, 0, dup)
  call check(all(iv == [0, 0]), 'MPI_Bcast of a derived type')
  call MPI_Type_free(pair)

  call MPI_Iprobe(MPI_ANY_SOURCE, 42, dup, flag, MPI_STATUS_IGNORE)
  call check(.not. flag, 'MPI_Iprobe')

  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  call MPI_Recv(b, 1, MPI_DOUBLE_PRECISION, -7, 0, dup, st, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_RANK, 'MPI_ERR_RANK in ierror')
  ! a user error handler (an MPI_Comm_errhandler_function of mpi_f08)
  call MPI_Comm_create_errhandler(remember, handler)
  call MPI_Comm_set_errhandler(dup, handler)
  call MPI_Send(a, 1, MPI_DOUBLE_PRECISION, nranks + 3, 0, dup)
  call MPI_Error_class(last_error, cls2)
  call check(cls2 == MPI_ERR_RANK, 'user error handler called with the error code')
  call MPI_Errhandler_free(handler)
  call MPI_Comm_free(dup)
  call check(dup == MPI_COMM_NULL, 'MPI_Comm_free')
  ! a user operation
  call MPI_Op_create(absmax, .true., myop)
  iv = [rank, -2 * rank]
  call MPI_Allreduce(MPI_IN_PLACE, iv, 2, MPI_INTEGER, myop, MPI_COMM_WORLD)
  call check(all(iv == [nranks - 1, -2 * (nranks - 1)]), 'user operation')
  call MPI_Op_free(myop)
  call check(MPI_Wtime() > 0, 'MPI_Wtime')
  call check(.not. MPI_SUBARRAYS_SUPPORTED, 'MPI_SUBARRAYS_SUPPORTED')
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(A,I0,A)', 'use_mpi_f08: ', nranks, ' ranks ok'
  call MPI_Finalize()
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(A,I0,2A)', 'FAIL: rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program use_mpi_f08

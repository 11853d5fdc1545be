! `use mpi_f08`: TYPE(MPI_Comm)... handles, optional ierror, TYPE(MPI_Status), MPI_IN_PLACE,
! MPI_STATUS_IGNORE, derived types, errors returned in ierror, attribute copy / delete procedures
! and generalized requests.
module f08_callbacks
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  implicit none
  integer :: last_error = MPI_SUCCESS
  integer :: copies = 0, deletes = 0, greq_calls = 0
  integer(kind=MPI_ADDRESS_KIND) :: deleted = -1
contains
  ! attribute copy / delete procedures (MPI_Comm_copy_attr_function...): the copy adds extra_state
  subroutine add_extra(oldcomm, comm_keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    copies = copies + 1
    attribute_val_out = attribute_val_in + extra_state
    flag = oldcomm /= MPI_COMM_NULL .and. comm_keyval /= MPI_KEYVAL_INVALID
    ierror = MPI_SUCCESS
  end subroutine add_extra
  subroutine count_delete(comm, comm_keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    deletes = deletes + 1
    deleted = attribute_val
    if (comm == MPI_COMM_NULL .or. comm_keyval == MPI_KEYVAL_INVALID .or. extra_state /= 10) deletes = -100
    ierror = MPI_SUCCESS
  end subroutine count_delete
  ! generalized request procedures: each counts a call; the query fills the status
  subroutine greq_query(extra_state, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    type(MPI_Status) :: status
    integer :: ierror
    greq_calls = greq_calls + 1
    status%MPI_TAG = int(extra_state)
    call MPI_Status_set_cancelled(status, .false.)
    ierror = MPI_SUCCESS
  end subroutine greq_query
  subroutine greq_free(extra_state, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    greq_calls = greq_calls + 10
    ierror = MPI_SUCCESS
    if (extra_state /= 31) ierror = MPI_ERR_OTHER
  end subroutine greq_free
  subroutine greq_cancel(extra_state, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    greq_calls = greq_calls + 100
    ierror = MPI_SUCCESS
    if (complete .or. extra_state /= 31) ierror = MPI_ERR_OTHER
  end subroutine greq_cancel
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
  use fcheck
  use, intrinsic :: iso_c_binding, only: c_int
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
  integer :: key, key2
  integer(kind=MPI_ADDRESS_KIND) :: val
  type(MPI_Comm) :: dup2
  type(MPI_Request) :: greq
  type(MPI_Datatype) :: t3, tdup
  type(MPI_Status) :: st2
  integer :: fst(MPI_STATUS_SIZE)
  double precision :: t0
  interface
    integer(c_int) function f08_status_kind(s, tag) bind(C, name='f08_status_kind')
      import :: MPI_Status, c_int
      type(MPI_Status), intent(in) :: s
      integer(c_int), value :: tag
    end function f08_status_kind
  end interface

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  check_rank = rank
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

  ! MPI_SIZEOF, ierror optional as everywhere in mpi_f08
  call MPI_Sizeof(a, n)
  call check(n == 8, 'MPI_Sizeof of a DOUBLE PRECISION array')
  call MPI_Sizeof(iv(1), n, ierr)
  call check(n == 4 .and. ierr == MPI_SUCCESS, 'MPI_Sizeof of an INTEGER')
  call PMPI_Sizeof(flag, n)
  call check(n == 4, 'PMPI_Sizeof of a LOGICAL')

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
  ! attributes: module procedures and the predefined procedures as copy / delete callbacks
  call MPI_Comm_create_keyval(add_extra, count_delete, key, 10_MPI_ADDRESS_KIND)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key2, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  val = 100 + rank
  call MPI_Comm_set_attr(dup, key, val)
  call MPI_Comm_set_attr(dup, key2, val)
  call MPI_Comm_dup(dup, dup2)
  call MPI_Comm_get_attr(dup2, key, val, flag)
  call check(copies == 1 .and. flag .and. val == 110 + rank, 'mpi_f08 copy procedure')
  call MPI_Comm_get_attr(dup2, key2, val, flag)
  call check(.not. flag, 'mpi_f08 MPI_COMM_NULL_COPY_FN')
  call MPI_Comm_free(dup2)
  call check(deletes == 1 .and. deleted == 110 + rank, 'mpi_f08 delete procedure')
  call MPI_Comm_free(dup)
  call check(deletes == 2 .and. deleted == 100 + rank, 'mpi_f08 delete procedure on free')
  call MPI_Comm_free_keyval(key)
  call MPI_Comm_free_keyval(key2)
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, key, 0_MPI_ADDRESS_KIND)
  call MPI_Type_contiguous(3, MPI_INTEGER, t3)
  val = 2_MPI_ADDRESS_KIND**36
  call MPI_Type_set_attr(t3, key, val)
  call MPI_Type_dup(t3, tdup)
  val = 0
  call MPI_Type_get_attr(tdup, key, val, flag)
  call check(flag .and. val == 2_MPI_ADDRESS_KIND**36, 'mpi_f08 MPI_TYPE_DUP_FN')
  call MPI_Type_free(tdup)
  call MPI_Type_free(t3)
  call MPI_Type_free_keyval(key)
  ! a generalized request, cancelled then completed
  call MPI_Grequest_start(greq_query, greq_free, greq_cancel, 31_MPI_ADDRESS_KIND, greq)
  call MPI_Cancel(greq)
  call MPI_Grequest_complete(greq)
  call MPI_Wait(greq, st, ierr)
  call check(ierr == MPI_SUCCESS .and. greq_calls == 111 .and. st%MPI_TAG == 31, 'mpi_f08 generalized request')
  call check(greq == MPI_REQUEST_NULL, 'mpi_f08 generalized request freed')
  call check(MPI_Wtime() > 0, 'MPI_Wtime')
  ! the PMPI_ names: the same procedures (keywords and optional ierror included)
  a = rank
  call PMPI_Sendrecv(a, 3, MPI_DOUBLE_PRECISION, rank, 61, b, 10, MPI_DOUBLE_PRECISION, rank, 61, &
                     MPI_COMM_WORLD, st, ierr)
  call check(ierr == MPI_SUCCESS .and. st%MPI_TAG == 61 .and. b(3) == rank, 'PMPI_Sendrecv')
  call PMPI_Get_count(status=st, datatype=MPI_DOUBLE_PRECISION, count=n)
  call check(n == 3, 'PMPI_Get_count with keywords')
  call PMPI_Allreduce(dble(rank), s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call check(s == dble(nranks) * (nranks - 1) / 2, 'PMPI_Allreduce')
  t0 = PMPI_Wtime()
  call check(t0 > 0 .and. PMPI_Wtick() > 0, 'PMPI_Wtime / PMPI_Wtick')
  ! TYPE(MPI_Status) <-> INTEGER(MPI_STATUS_SIZE)
  call MPI_Status_f082f(st, fst, ierr)
  call check(ierr == MPI_SUCCESS .and. fst(MPI_SOURCE) == rank .and. fst(MPI_TAG) == 61, 'MPI_Status_f082f')
  call MPI_Status_f2f08(fst, st2)
  call check(st2%MPI_SOURCE == rank .and. st2%MPI_TAG == 61 .and. st2%MPI_ERROR == st%MPI_ERROR, 'MPI_Status_f2f08')
  call MPI_Get_count(st2, MPI_DOUBLE_PRECISION, n)
  call check(n == 3, 'MPI_Get_count of a converted status')
  ! C code called from Fortran tells the ignore addresses from a status
  call check(f08_status_kind(MPI_STATUS_IGNORE, 0) == 1, 'MPI_F08_STATUS_IGNORE in C')
  call check(f08_status_kind(MPI_STATUSES_IGNORE(1), 0) == 2, 'MPI_F08_STATUSES_IGNORE in C')
  call check(f08_status_kind(st2, 61) == 0, 'a TYPE(MPI_Status) read by MPI_Status_f082c in C')
  call check(MPI_SUBARRAYS_SUPPORTED .and. MPI_ASYNC_PROTECTS_NONBLOCKING, 'MPI_SUBARRAYS_SUPPORTED')
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(A,I0,A)', 'use_mpi_f08: ', nranks, ' ranks ok'
  call MPI_Finalize()
end program use_mpi_f08

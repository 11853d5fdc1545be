! Fortran callbacks through `use mpi`: communicator and datatype keyvals with Fortran copy and
! delete procedures (MPI-2 and MPI-1 forms), the predefined MPI_*_NULL_COPY_FN / MPI_*_DUP_FN,
! attribute values as INTEGER(KIND=MPI_ADDRESS_KIND) (default INTEGER for MPI_ATTR_PUT/GET), and
! generalized requests whose query / free / cancel procedures are Fortran subroutines.
module cb_state
  use mpi, only: MPI_ADDRESS_KIND
  implicit none
  integer :: copies = 0, deletes = 0, last_keyval = -1, last_handle = -1
  integer(kind=MPI_ADDRESS_KIND) :: last_deleted = -1, last_extra = -1
  logical :: copy_flag = .true.
  integer :: copy_error = 0
  integer :: old_copies = 0, old_deletes = 0, old_last = -1
  integer :: queries = 0, frees = 0, cancels = 0
  logical :: cancel_complete = .true.
  integer(kind=MPI_ADDRESS_KIND) :: greq_extra = -1
  integer :: failures = 0
contains
  ! Reports a failed check and counts it; the program aborts at its end if any failed.
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    write (*, '(2A)') 'FAIL: ', what
  end subroutine check
end module cb_state

program callbacks_f
  use mpi
  use cb_state
  implicit none
  integer :: ierr, rank, nranks, comm1, comm2, comm3, key, key2, tkey, okey, t1, t2, req, total
  integer :: status(MPI_STATUS_SIZE), oval
  integer(kind=MPI_ADDRESS_KIND) :: val, extra, big
  logical :: flag
  external :: my_copy, my_delete, old_copy, old_delete, greq_query, greq_free, greq_cancel

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm1, ierr)
  call MPI_Comm_set_errhandler(comm1, MPI_ERRORS_RETURN, ierr)

  ! ---- a communicator keyval with Fortran copy and delete procedures ----
  extra = 42
  call MPI_Comm_create_keyval(my_copy, my_delete, key, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_create_keyval')
  val = 7 + rank
  call MPI_Comm_set_attr(comm1, key, val, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_set_attr')
  val = -1
  call MPI_Comm_get_attr(comm1, key, val, flag, ierr)
  call check(flag .and. val == 7 + rank, 'MPI_Comm_get_attr: the value stored')
  call MPI_Comm_dup(comm1, comm2, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_dup with a Fortran copy procedure')
  call check(copies == 1 .and. last_keyval == key .and. last_handle == comm1, 'the copy procedure ran once, on comm1')
  call check(last_extra == 42, 'the copy procedure got extra_state')
  call MPI_Comm_get_attr(comm2, key, val, flag, ierr)
  call check(flag .and. val == 1007 + rank, 'the copied value arrives in the duplicate')
  call MPI_Allreduce(copies, total, 1, MPI_INTEGER, MPI_SUM, comm2, ierr)
  call check(total == nranks, 'the duplicate works')
  call MPI_Comm_free(comm2, ierr)
  call check(deletes == 1 .and. last_deleted == 1007 + rank, 'MPI_Comm_free ran the delete procedure')
  call check(last_extra == 42, 'the delete procedure got extra_state')
  call MPI_Comm_delete_attr(comm1, key, ierr)
  call check(ierr == MPI_SUCCESS .and. deletes == 2 .and. last_deleted == 7 + rank, 'MPI_Comm_delete_attr')
  call MPI_Comm_get_attr(comm1, key, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'no attribute after MPI_Comm_delete_attr')
  ! a full 64-bit value; a copy procedure that returns flag = .false.: nothing in the duplicate
  big = 2_MPI_ADDRESS_KIND**40 + 5
  call MPI_Comm_set_attr(comm1, key, big, ierr)
  call MPI_Comm_get_attr(comm1, key, val, flag, ierr)
  call check(flag .and. val == big, 'a 64-bit attribute value')
  copy_flag = .false.
  call MPI_Comm_dup(comm1, comm2, ierr)
  call check(copies == 2, 'the copy procedure ran again')
  call MPI_Comm_get_attr(comm2, key, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'flag = .false.: the duplicate has no attribute')
  call MPI_Comm_free(comm2, ierr)
  call check(deletes == 2, 'nothing to delete in the duplicate')
  ! an error returned in the copy procedure's ierror fails the duplication with it
  copy_flag = .true.
  copy_error = MPI_ERR_OTHER
  call MPI_Comm_dup(comm1, comm2, ierr)
  call check(ierr == MPI_ERR_OTHER .and. comm2 == MPI_COMM_NULL, 'the copy procedure''s ierror is returned')
  copy_error = 0
  ! freeing comm1 later deletes big; the keyval may be freed while attributes remain
  call MPI_Comm_free_keyval(key, ierr)
  call check(ierr == MPI_SUCCESS .and. key == MPI_KEYVAL_INVALID, 'MPI_Comm_free_keyval')
  ! bad input: an invalid keyval is an error returned in ierror
  call MPI_Comm_set_attr(comm1, key, big, ierr)
  call check(ierr == MPI_ERR_KEYVAL, 'MPI_Comm_set_attr with an invalid keyval')

  ! ---- the predefined procedures ----
  extra = 0
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key2, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'keyvals with the predefined procedures')
  val = 11
  call MPI_Comm_set_attr(comm1, key, val, ierr)
  val = big + 3
  call MPI_Comm_set_attr(comm1, key2, val, ierr)
  call MPI_Comm_dup(comm1, comm3, ierr)
  call MPI_Comm_get_attr(comm3, key, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'MPI_COMM_NULL_COPY_FN copies nothing')
  call MPI_Comm_get_attr(comm3, key2, val, flag, ierr)
  call check(flag .and. val == big + 3, 'MPI_COMM_DUP_FN copies the value')
  call MPI_Comm_free(comm3, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_free with MPI_COMM_NULL_DELETE_FN')
  call MPI_Comm_free_keyval(key, ierr)
  call MPI_Comm_free_keyval(key2, ierr)

  ! ---- MPI-1: MPI_KEYVAL_CREATE, MPI_ATTR_PUT / MPI_ATTR_GET with default INTEGERs ----
  call MPI_Keyval_create(old_copy, old_delete, okey, 5, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Keyval_create')
  call MPI_Attr_put(comm1, okey, 300 + rank, ierr)
  call MPI_Comm_dup(comm1, comm2, ierr)
  call check(old_copies == 1, 'the MPI-1 copy procedure ran')
  oval = -1
  call MPI_Attr_get(comm2, okey, oval, flag, ierr)
  call check(flag .and. oval == 600 + 2 * rank, 'MPI_Attr_get: the MPI-1 copy doubled the value')
  call MPI_Attr_delete(comm2, okey, ierr)
  call check(old_deletes == 1 .and. old_last == 600 + 2 * rank, 'the MPI-1 delete procedure got the value')
  call MPI_Comm_free(comm2, ierr)
  call MPI_Keyval_free(okey, ierr)
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, okey, 0, ierr)
  call MPI_Attr_put(comm1, okey, -17, ierr)
  call MPI_Comm_dup(comm1, comm2, ierr)
  call MPI_Attr_get(comm2, okey, oval, flag, ierr)
  call check(flag .and. oval == -17, 'MPI_DUP_FN copies the value')
  call MPI_Comm_free(comm2, ierr)
  call MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, key, 0, ierr)
  call MPI_Attr_put(comm1, key, 1, ierr)
  call MPI_Comm_dup(comm1, comm2, ierr)
  call MPI_Attr_get(comm2, key, oval, flag, ierr)
  call check(.not. flag, 'MPI_NULL_COPY_FN copies nothing')
  call MPI_Comm_free(comm2, ierr)
  call MPI_Keyval_free(key, ierr)
  call MPI_Keyval_free(okey, ierr)

  ! ---- a datatype keyval ----
  copies = 0
  deletes = 0
  call MPI_Type_contiguous(2, MPI_INTEGER, t1, ierr)
  extra = 99
  call MPI_Type_create_keyval(my_copy, my_delete, tkey, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Type_create_keyval')
  val = 50
  call MPI_Type_set_attr(t1, tkey, val, ierr)
  call MPI_Type_get_attr(t1, tkey, val, flag, ierr)
  call check(flag .and. val == 50, 'MPI_Type_get_attr')
  call MPI_Type_dup(t1, t2, ierr)
  call check(copies == 1 .and. last_handle == t1 .and. last_extra == 99, 'MPI_Type_dup ran the copy procedure')
  call MPI_Type_get_attr(t2, tkey, val, flag, ierr)
  call check(flag .and. val == 1050, 'the copied value arrives in the duplicate datatype')
  call MPI_Type_free(t2, ierr)
  call check(deletes == 1 .and. last_deleted == 1050, 'MPI_Type_free ran the delete procedure')
  call MPI_Type_delete_attr(t1, tkey, ierr)
  call check(deletes == 2 .and. last_deleted == 50, 'MPI_Type_delete_attr')
  call MPI_Type_free_keyval(tkey, ierr)
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tkey, extra, ierr)
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, key, extra, ierr)
  val = big
  call MPI_Type_set_attr(t1, tkey, val, ierr)
  call MPI_Type_set_attr(t1, key, val, ierr)
  call MPI_Type_dup(t1, t2, ierr)
  call MPI_Type_get_attr(t2, tkey, val, flag, ierr)
  call check(flag .and. val == big, 'MPI_TYPE_DUP_FN copies the value')
  call MPI_Type_get_attr(t2, key, val, flag, ierr)
  call check(.not. flag, 'MPI_TYPE_NULL_COPY_FN copies nothing')
  call MPI_Type_free(t2, ierr)
  call MPI_Type_free(t1, ierr)
  call MPI_Type_free_keyval(tkey, ierr)
  call MPI_Type_free_keyval(key, ierr)

  ! ---- generalized requests ----
  extra = 77
  call MPI_Grequest_start(greq_query, greq_free, greq_cancel, extra, req, ierr)
  call check(ierr == MPI_SUCCESS .and. req /= MPI_REQUEST_NULL, 'MPI_Grequest_start')
  call MPI_Test(req, flag, status, ierr)
  call check(.not. flag .and. queries == 0, 'not complete before MPI_Grequest_complete')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  call check(ierr == MPI_SUCCESS .and. req == MPI_REQUEST_NULL, 'MPI_Wait on a generalized request')
  call check(queries == 1 .and. frees == 1 .and. greq_extra == 77, 'query and free ran with extra_state')
  call check(extra == 1077, 'the free procedure got the EXTRA_STATE variable itself (MPICH''s greqf)')
  call check(status(MPI_SOURCE) == rank .and. status(MPI_TAG) == 123, 'the status the query procedure filled')
  call MPI_Test_cancelled(status, flag, ierr)
  call check(.not. flag, 'not cancelled')
  ! cancelled before completion: the cancel procedure sees complete = .false.
  extra = 78
  call MPI_Grequest_start(greq_query, greq_free, greq_cancel, extra, req, ierr)
  call MPI_Cancel(req, ierr)
  call check(cancels == 1 .and. .not. cancel_complete .and. greq_extra == 78, 'the cancel procedure ran')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  call check(queries == 2 .and. frees == 2, 'query and free ran for the cancelled request')
  call MPI_Test_cancelled(status, flag, ierr)
  call check(flag, 'MPI_Status_set_cancelled from the query procedure')

  call MPI_Comm_free(comm1, ierr)

  ! ---- a keyval's record goes with the keyval and its last attribute ----
  ! mpc_f_keyval_records() counts them per process, so the ranks take turns.
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  do total = 0, nranks - 1
    if (total == rank) call check_records()
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do
  if (failures > 0) then
    flush(6)
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(A)', 'callbacks_f: OK'
  call MPI_Finalize(ierr)
end program callbacks_f

! The records of keyvals created from Fortran (libmpc's count, not an MPI call): one per keyval
! until the keyval is freed and its last attribute is gone, for communicator, datatype and
! MPI-1 keyvals; none left behind by many created and freed.
subroutine check_records()
  use mpi
  use cb_state
  use, intrinsic :: iso_c_binding, only: c_long
  implicit none
  interface
    integer(c_long) function mpc_f_keyval_records() bind(C, name='mpc_f_keyval_records')
      import :: c_long
    end function mpc_f_keyval_records
  end interface
  integer :: key, okey, ty, self, ierr, i
  integer(c_long) :: base
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  external :: my_copy, my_delete, old_copy, old_delete
  base = mpc_f_keyval_records()
  extra = 42
  call MPI_Comm_create_keyval(my_copy, my_delete, key, extra, ierr)
  call check(mpc_f_keyval_records() == base + 1, 'a record per Fortran keyval')
  call MPI_Comm_dup(MPI_COMM_SELF, self, ierr)
  val = 3
  call MPI_Comm_set_attr(self, key, val, ierr)
  call MPI_Comm_free_keyval(key, ierr)
  call check(mpc_f_keyval_records() == base + 1, 'the record stays while an attribute of the freed keyval does')
  call MPI_Comm_free(self, ierr)
  call check(ierr == MPI_SUCCESS .and. last_deleted == 3, 'the delete procedure of a freed keyval ran')
  call check(mpc_f_keyval_records() == base, 'the record went with the last attribute')
  ! a datatype keyval
  call MPI_Type_create_keyval(my_copy, my_delete, key, extra, ierr)
  call MPI_Type_contiguous(2, MPI_INTEGER, ty, ierr)
  val = 4
  call MPI_Type_set_attr(ty, key, val, ierr)
  call MPI_Type_free_keyval(key, ierr)
  call check(mpc_f_keyval_records() == base + 1, 'the datatype keyval''s record stays with its attribute')
  call MPI_Type_free(ty, ierr)
  call check(mpc_f_keyval_records() == base, 'the datatype keyval''s record went with MPI_TYPE_FREE')
  ! MPI-1, no attribute: freed at once
  call MPI_Keyval_create(old_copy, old_delete, okey, 5, ierr)
  call check(mpc_f_keyval_records() == base + 1, 'a record per MPI-1 keyval')
  call MPI_Keyval_free(okey, ierr)
  call check(mpc_f_keyval_records() == base, 'MPI_KEYVAL_FREE freed the record')
  ! many keyvals created and freed leave nothing behind
  do i = 1, 1000
    call MPI_Comm_create_keyval(my_copy, my_delete, key, extra, ierr)
    call MPI_Comm_free_keyval(key, ierr)
  end do
  call check(mpc_f_keyval_records() == base, 'no record left by 1000 keyvals')
end subroutine check_records

! MPI-2 copy procedure: the copy is the value plus 1000 (flag as cb_state says).
subroutine my_copy(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
  use mpi, only: MPI_ADDRESS_KIND
  use cb_state
  implicit none
  integer :: oldcomm, keyval, ierror
  integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
  logical :: flag
  copies = copies + 1
  last_keyval = keyval
  last_handle = oldcomm
  last_extra = extra_state
  attribute_val_out = attribute_val_in + 1000
  flag = copy_flag
  ierror = copy_error
end subroutine my_copy

subroutine my_delete(comm, keyval, attribute_val, extra_state, ierror)
  use mpi, only: MPI_ADDRESS_KIND, MPI_SUCCESS
  use cb_state
  implicit none
  integer :: comm, keyval, ierror
  integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
  deletes = deletes + 1
  last_deleted = attribute_val
  last_extra = extra_state
  if (comm == -1 .or. keyval == -1) deletes = -100
  ierror = MPI_SUCCESS
end subroutine my_delete

! MPI-1 procedures: default INTEGER values; the copy doubles the value.
subroutine old_copy(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
  use mpi, only: MPI_SUCCESS
  use cb_state
  implicit none
  integer :: oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, ierror
  logical :: flag
  old_copies = old_copies + 1
  if (extra_state /= 5 .or. oldcomm == -1 .or. keyval == -1) old_copies = -100
  attribute_val_out = 2 * attribute_val_in
  flag = .true.
  ierror = MPI_SUCCESS
end subroutine old_copy

subroutine old_delete(comm, keyval, attribute_val, extra_state, ierror)
  use mpi, only: MPI_SUCCESS
  use cb_state
  implicit none
  integer :: comm, keyval, attribute_val, extra_state, ierror
  old_deletes = old_deletes + 1
  old_last = attribute_val
  if (extra_state /= 5 .or. comm == -1 .or. keyval == -1) old_deletes = -100
  ierror = MPI_SUCCESS
end subroutine old_delete

subroutine greq_query(extra_state, status, ierror)
  use mpi
  use cb_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  integer :: status(MPI_STATUS_SIZE), ierror, rank
  queries = queries + 1
  greq_extra = extra_state
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierror)
  status(MPI_SOURCE) = rank
  status(MPI_TAG) = 123
  call MPI_Status_set_cancelled(status, cancels > 0 .and. extra_state == 78, ierror)
  ierror = MPI_SUCCESS
end subroutine greq_query

subroutine greq_free(extra_state, ierror)
  use mpi
  use cb_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  integer :: ierror
  frees = frees + 1
  greq_extra = extra_state
  extra_state = extra_state + 1000  ! the program's own variable (as in Open MPI and MPICH)
  ierror = MPI_SUCCESS
end subroutine greq_free

subroutine greq_cancel(extra_state, complete, ierror)
  use mpi
  use cb_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  logical :: complete
  integer :: ierror
  cancels = cancels + 1
  cancel_complete = complete
  greq_extra = extra_state
  ierror = MPI_SUCCESS
end subroutine greq_cancel

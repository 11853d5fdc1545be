! `use mpi`: collectives (MPI_IN_PLACE included), derived datatypes, error codes returned in
! ierror under MPI_ERRORS_RETURN, LOGICAL arguments, a Cartesian topology, groups and a split.
program use_mpi
  use mpi
  implicit none
  integer :: ierr, rank, nranks, i, j, root, cls, len, newtype, cart, left, right, sub
  integer :: grp, wgrp, n_grp, col_comm, crank
  integer :: dims(1), coords(1), ivec(4), iall(64), counts(64)
  logical :: periods(1), flag
  double precision :: x(4), y(4), mat(5, 3), col(5)
  double precision, allocatable :: gath(:), a2a_s(:), a2a_r(:)
  integer :: status(MPI_STATUS_SIZE), reqs(2), statuses(MPI_STATUS_SIZE, 2)
  character(len=MPI_MAX_ERROR_STRING) :: msg
  integer(kind=MPI_ADDRESS_KIND) :: tag_ub
  complex :: z(2)
  integer :: myop
  logical :: lflags(2)
  external :: absmax
  integer :: si, stype
  double precision :: sd
  integer(kind=MPI_ADDRESS_KIND) :: addrs(2)
  logical(kind=1) :: l1(2), l1r(2)
  logical(kind=2) :: l2(2), l2r(2)
  logical(kind=8) :: l8(2), l8r(2)
  type(MPI_Status) :: st08
  integer :: fst(MPI_STATUS_SIZE)
  integer :: info, nkeys, vlen
  character(len=MPI_MAX_INFO_KEY) :: key
  character(len=MPI_MAX_INFO_VAL) :: val

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call check(nranks <= 64, 'at most 64 ranks')

  ! ---- collectives ----
  root = nranks - 1
  ivec = 0
  if (rank == root) ivec = [1, 2, 3, 4]
  call MPI_Bcast(ivec, 4, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  call check(all(ivec == [1, 2, 3, 4]), 'MPI_Bcast')
  x = [(dble(rank + i), i = 1, 4)]
  call MPI_Allreduce(x, y, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 4
    call check(y(i) == dble(nranks) * (nranks - 1) / 2 + nranks * i, 'MPI_Allreduce')
  end do
  ! MPI_IN_PLACE: the result replaces the input
  call MPI_Allreduce(MPI_IN_PLACE, x, 4, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. x(1) == dble(nranks), 'MPI_Allreduce in place')
  i = rank
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, i, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    call check(i == nranks * (nranks - 1) / 2, 'MPI_Reduce in place')
  else
    call MPI_Reduce(i, j, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Allgather(rank * 3, 1, MPI_INTEGER, iall, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(iall(1:nranks) == [(3 * i, i = 0, nranks - 1)]), 'MPI_Allgather')
  iall(rank + 1) = -rank
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, iall, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(iall(1:nranks) == [(-i, i = 0, nranks - 1)]), 'MPI_Allgather in place')
  allocate(gath(2 * nranks), a2a_s(nranks), a2a_r(nranks))
  call MPI_Gather([dble(rank), dble(-rank)], 2, MPI_REAL8, gath, 2, MPI_REAL8, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 0, nranks - 1
      call check(gath(2 * i + 1) == i .and. gath(2 * i + 2) == -i, 'MPI_Gather')
    end do
  end if
  a2a_s = [(dble(100 * rank + i), i = 0, nranks - 1)]
  call MPI_Alltoall(a2a_s, 1, MPI_DOUBLE_PRECISION, a2a_r, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call check(all(a2a_r == [(dble(100 * i + rank), i = 0, nranks - 1)]), 'MPI_Alltoall')
  counts(1:nranks) = 1
  call MPI_Scan(1, i, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(i == rank + 1, 'MPI_Scan')
  z = [cmplx(rank, 1), cmplx(1, rank)]
  call MPI_Allreduce(MPI_IN_PLACE, z, 2, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(z(1) == cmplx(nranks * (nranks - 1) / 2, nranks), 'MPI_COMPLEX sum')

  ! LOGICAL reductions
  lflags = [rank == 0, .true.]
  call MPI_Allreduce(MPI_IN_PLACE, lflags, 2, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check((lflags(1) .eqv. nranks == 1) .and. lflags(2), 'MPI_LAND on LOGICAL')
  lflags = [rank == nranks - 1, .false.]
  call MPI_Allreduce(MPI_IN_PLACE, lflags, 2, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(lflags(1) .and. .not. lflags(2), 'MPI_LOR on LOGICAL')

  ! a user operation (a Fortran subroutine called by the C reduction)
  call MPI_Op_create(absmax, .true., myop, ierr)
  ivec = [rank, -rank, 2 * rank, 0]
  call MPI_Allreduce(MPI_IN_PLACE, ivec, 4, MPI_INTEGER, myop, MPI_COMM_WORLD, ierr)
  call check(all(ivec == [nranks - 1, -(nranks - 1), 2 * (nranks - 1), 0]), 'user operation')
  call MPI_Op_commutative(myop, flag, ierr)
  call check(flag, 'MPI_Op_commutative')
  call MPI_Op_free(myop, ierr)
  call check(myop == MPI_OP_NULL, 'MPI_Op_free')

  ! ---- derived datatypes: a column and a row of a matrix ----
  mat = reshape([(dble(i), i = 1, 15)], [5, 3])
  call MPI_Type_vector(3, 1, 5, MPI_DOUBLE_PRECISION, newtype, ierr)
  call MPI_Type_commit(newtype, ierr)
  if (nranks > 1) then
    if (rank == 0) then
      call MPI_Send(mat(2, 1), 1, newtype, 1, 3, MPI_COMM_WORLD, ierr)   ! row 2: 2, 7, 12
    else if (rank == 1) then
      col = 0
      call MPI_Recv(col, 3, MPI_DOUBLE_PRECISION, 0, 3, MPI_COMM_WORLD, status, ierr)
      call check(all(col(1:3) == [2d0, 7d0, 12d0]), 'MPI_Type_vector row')
      call MPI_Get_count(status, MPI_DOUBLE_PRECISION, i, ierr)
      call check(i == 3, 'count of a vector')
    end if
  end if
  call MPI_Type_size(newtype, i, ierr)
  call check(i == 24, 'MPI_Type_size')
  call MPI_Type_free(newtype, ierr)
  call check(newtype == MPI_DATATYPE_NULL, 'MPI_Type_free')

  ! a struct of two separate variables at absolute addresses, sent from MPI_BOTTOM
  si = -1
  sd = -1
  if (rank == root) then
    si = 42
    sd = 2.5d0
  end if
  call MPI_Get_address(si, addrs(1), ierr)
  call MPI_Get_address(sd, addrs(2), ierr)
  call MPI_Type_create_struct(2, [1, 1], addrs, [MPI_INTEGER, MPI_DOUBLE_PRECISION], stype, ierr)
  call MPI_Type_commit(stype, ierr)
  call MPI_Bcast(MPI_BOTTOM, 1, stype, root, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. si == 42 .and. sd == 2.5d0, 'MPI_BOTTOM and a struct type')
  call MPI_Type_free(stype, ierr)

  ! ---- point-to-point with arrays of requests and statuses ----
  reqs = MPI_REQUEST_NULL
  if (nranks > 1) then
    right = mod(rank + 1, nranks)
    left = mod(rank + nranks - 1, nranks)
    call MPI_Irecv(col, 5, MPI_DOUBLE_PRECISION, left, 4, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(mat(:, 3), 5, MPI_DOUBLE_PRECISION, right, 4, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, statuses, ierr)
    call MPI_F_SYNC_REG(col)  ! MPI 3.1 section 17.1.8: the compiler must reload col
    call check(all(col == mat(:, 3)), 'MPI_Waitall data')
    call check(statuses(MPI_SOURCE, 1) == left .and. statuses(MPI_TAG, 1) == 4, 'statuses')
    call check(all(reqs == MPI_REQUEST_NULL), 'requests freed')
    call MPI_Irecv(col, 5, MPI_DOUBLE_PRECISION, left, 5, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(mat(:, 1), 5, MPI_DOUBLE_PRECISION, right, 5, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(all(col == mat(:, 1)), 'MPI_Waitall with MPI_STATUSES_IGNORE')
  end if
  ! MPI_Waitany / MPI_Testany count from 1 in Fortran; MPI_UNDEFINED when nothing is active
  call MPI_Isend(1, 0, MPI_INTEGER, rank, 6, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitany(2, reqs, i, status, ierr)
  call check(i == 2 .and. reqs(2) == MPI_REQUEST_NULL, 'MPI_Waitany index')
  call MPI_Recv(j, 0, MPI_INTEGER, rank, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_Testany(2, reqs, i, flag, status, ierr)
  call check(flag .and. i == MPI_UNDEFINED, 'MPI_Testany without active requests')
  call MPI_Test(reqs(1), flag, status, ierr)
  call check(flag, 'MPI_Test of MPI_REQUEST_NULL')

  ! ---- errors returned in ierror ----
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, nranks + 5, 0, MPI_COMM_WORLD, ierr)
  call check(ierr /= MPI_SUCCESS, 'send to a bad rank fails')
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_RANK, 'MPI_ERR_RANK')
  call MPI_Error_string(ierr, msg, len, i)
  call check(len > 0 .and. len_trim(msg) == len, 'MPI_Error_string')
  call MPI_Bcast(x, -1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_COUNT, 'MPI_ERR_COUNT')
  call MPI_Comm_rank(MPI_COMM_NULL, i, ierr)
  call check(ierr /= MPI_SUCCESS, 'MPI_COMM_NULL')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  call check(flag .and. tag_ub >= 32767, 'MPI_TAG_UB')

  ! ---- topology (LOGICAL arrays), groups, split ----
  dims = 0
  call MPI_Dims_create(nranks, 1, dims, ierr)
  periods = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  call MPI_Cart_shift(cart, 0, 1, left, right, ierr)
  call check(left == mod(rank + nranks - 1, nranks) .and. right == mod(rank + 1, nranks), 'MPI_Cart_shift')
  periods = .false.
  call MPI_Cart_get(cart, 1, dims, periods, coords, ierr)
  call check(periods(1) .and. coords(1) == rank .and. dims(1) == nranks, 'MPI_Cart_get')
  call MPI_Cart_sub(cart, [.false.], sub, ierr)
  call MPI_Comm_size(sub, i, ierr)
  call check(i == 1, 'MPI_Cart_sub')
  call MPI_Comm_free(sub, ierr)
  call MPI_Comm_free(cart, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, wgrp, ierr)
  call MPI_Group_incl(wgrp, 1, [root], grp, ierr)
  call MPI_Group_size(grp, n_grp, ierr)
  call MPI_Group_rank(grp, i, ierr)
  call check(n_grp == 1 .and. (i == 0 .eqv. rank == root), 'MPI_Group_incl')
  call MPI_Group_free(grp, ierr)
  call MPI_Group_free(wgrp, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, col_comm, ierr)
  call MPI_Comm_rank(col_comm, crank, ierr)
  call MPI_Comm_size(col_comm, i, ierr)
  call check(crank == i - 1 - rank / 2, 'MPI_Comm_split key order')
  call MPI_Comm_free(col_comm, ierr)
  call check(col_comm == MPI_COMM_NULL, 'MPI_Comm_free')

  ! ---- sized LOGICAL types: MPI_LAND / MPI_LOR on LOGICAL(1), (2), (8) ----
  l1 = [.true., rank == 0]
  call MPI_Allreduce(l1, l1r, 2, MPI_LOGICAL1, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. logical(l1r(1)) .and. (logical(l1r(2)) .eqv. nranks == 1), 'MPI_LOGICAL1 MPI_LAND')
  l2 = [.false., rank == nranks - 1]
  call MPI_Allreduce(l2, l2r, 2, MPI_LOGICAL2, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. logical(l2r(1)) .and. logical(l2r(2)), 'MPI_LOGICAL2 MPI_LOR')
  l8 = [.true., .false.]
  call MPI_Allreduce(l8, l8r, 2, MPI_LOGICAL8, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. logical(l8r(1)) .and. .not. logical(l8r(2)), 'MPI_LOGICAL8 MPI_LAND')
  call MPI_Type_size(MPI_LOGICAL1, i, ierr)
  call MPI_Type_size(MPI_LOGICAL2, j, ierr)
  call check(i == 1 .and. j == 2, 'MPI_LOGICAL1 / 2 sizes')
  call MPI_Type_size(MPI_LOGICAL8, i, ierr)
  call MPI_Type_size(MPI_LOGICAL4, j, ierr)
  call check(i == 8 .and. j == 4, 'MPI_LOGICAL8 / 4 sizes')
  ! optional types MPC does not provide are MPI_DATATYPE_NULL; REAL(16) is binary128 (f_real16)
  call check(MPI_REAL2 == MPI_DATATYPE_NULL .and. MPI_COMPLEX4 == MPI_DATATYPE_NULL .and. &
             MPI_INTEGER16 == MPI_DATATYPE_NULL, 'unsupported types are null')
  call MPI_Type_size(MPI_REAL16, i, ierr)
  call MPI_Type_size(MPI_COMPLEX32, j, ierr)
  call check(i == 16 .and. j == 32 .and. ierr == MPI_SUCCESS, 'MPI_REAL16 / MPI_COMPLEX32 sizes')
  ! module mpi passes addresses: no subarrays (mpi_f08 has them)
  call check(.not. MPI_SUBARRAYS_SUPPORTED .and. .not. MPI_ASYNC_PROTECTS_NONBLOCKING, 'MPI_SUBARRAYS_SUPPORTED')
  call MPI_Type_size(MPI_INTEGER8, i, ierr)
  call MPI_Type_size(MPI_COMPLEX16, j, ierr)
  call check(i == 8 .and. j == 16, 'MPI_INTEGER8 / MPI_COMPLEX16 sizes')

  ! ---- TYPE(MPI_Status) of module mpi: MPI_STATUS_F2F08 / MPI_STATUS_F082F ----
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, rank, 44, i, 1, MPI_INTEGER, rank, 44, MPI_COMM_WORLD, status, ierr)
  call MPI_Status_f2f08(status, st08, ierr)
  call check(ierr == MPI_SUCCESS .and. st08%MPI_SOURCE == rank .and. st08%MPI_TAG == 44 .and. &
             st08%MPI_ERROR == status(MPI_ERROR), 'MPI_STATUS_F2F08')
  fst = -1
  call MPI_Status_f082f(st08, fst, ierr)
  call check(ierr == MPI_SUCCESS .and. all(fst == status), 'MPI_STATUS_F082F')
  call MPI_Get_count(fst, MPI_INTEGER, j, ierr)
  call check(j == 1, 'MPI_GET_COUNT of a converted status')

  ! info keys and values lose their leading and trailing blanks (MPI 3.1 section 9; MPICH's
  ! infotest2f); a blank inside stays
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, '  See Below ', ' no test  ', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  call MPI_Info_get_nthkey(info, 0, key, ierr)
  call check(nkeys == 1 .and. key == 'See Below', 'MPI_INFO_SET strips the blanks around a key')
  call MPI_Info_get(info, 'See Below', MPI_MAX_INFO_VAL, val, flag, ierr)
  call check(flag .and. val == 'no test', 'MPI_INFO_SET strips the blanks around a value')
  call MPI_Info_get_valuelen(info, ' See Below', vlen, flag, ierr)
  call check(flag .and. vlen == 7, 'MPI_INFO_GET_VALUELEN of a key given with a leading blank')
  val = 'kept'
  call MPI_Info_get(info, 'absent', MPI_MAX_INFO_VAL, val, flag, ierr)
  call check(.not. flag .and. val == 'kept', 'MPI_INFO_GET of an absent key leaves VALUE alone')
  call MPI_Info_delete(info, '   See Below', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  call check(ierr == MPI_SUCCESS .and. nkeys == 0, 'MPI_INFO_DELETE of a key given with leading blanks')
  call MPI_Info_free(info, ierr)

  ! MPI_SIZEOF (MPI 3.1 section 17.1.9): bytes of one element, scalar or array; the PMPI_ names
  ! of the functions
  call MPI_Sizeof(mat, nkeys, ierr)
  call check(ierr == MPI_SUCCESS .and. nkeys == 8, 'MPI_SIZEOF of a DOUBLE PRECISION array')
  call MPI_Sizeof(l2(1), nkeys, ierr)
  call check(nkeys == 2, 'MPI_SIZEOF of a LOGICAL(2)')
  call MPI_Sizeof(z, nkeys, ierr)
  call check(nkeys == 8, 'MPI_SIZEOF of a COMPLEX array')
  call MPI_Sizeof(key(1:5), nkeys, ierr)
  call check(nkeys == 5, 'MPI_SIZEOF of a CHARACTER(5)')
  call PMPI_Sizeof(rank, nkeys, ierr)
  call check(nkeys == 4, 'PMPI_SIZEOF of an INTEGER')
  call check(PMPI_Wtime() > 0d0 .and. PMPI_Wtick() > 0d0, 'PMPI_WTIME and PMPI_WTICK')

  deallocate(gath, a2a_s, a2a_r)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(A,I0,A)', 'use_mpi: ', nranks, ' ranks ok'
  call MPI_Finalize(ierr)
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(A,I0,2A)', 'FAIL: rank ', rank, ': ', what
      flush(6)  ! MPI_Abort ends the process without closing Fortran's units
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine check
end program use_mpi

! The element of larger magnitude (a user reduction, F77 style: every argument by reference).
subroutine absmax(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype, i
  integer :: invec(len), inoutvec(len)
  do i = 1, len
    if (abs(invec(i)) > abs(inoutvec(i))) inoutvec(i) = invec(i)
  end do
  if (datatype == -1) print *, 'unexpected datatype'
end subroutine absmax

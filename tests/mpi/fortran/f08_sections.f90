! `use mpi_f08` with array sections as choice buffers (MPI_SUBARRAYS_SUPPORTED): strided 1-D
! and 2-D sections, negative strides and scalars through point-to-point (blocking, non-blocking,
! persistent), Bcast, Allreduce (blocking and not), Gather, Sendrecv, with predefined and derived
! datatypes. Every element is checked, and every element outside a section must keep its
! value. Bad buffers give their error in ierror. docs/fortran.md, "Array sections".
module f08_sections_util
  use mpi_f08
  use fcheck
  use, intrinsic :: iso_c_binding, only: c_long, c_double, c_int
  implicit none
  type, bind(C) :: pt
    real(c_double) :: x
    integer(c_int) :: i
  end type pt
  interface
    ! derived types and copies the mpi_f08 buffers hold (f08/buffers.h), for leak checks
    integer(c_long) function mpc_f08_buffers_held() bind(C)
      import
    end function mpc_f08_buffers_held
  end interface
contains
  ! value of element i sent by rank r
  real(8) function val(r, i)
    integer, intent(in) :: r, i
    val = 1000.0d0 * r + i
  end function val
end module f08_sections_util

program f08_sections
  use f08_sections_util
  implicit none
  integer, parameter :: n = 10
  integer :: rank, size, left, right, i, j, k, ierr
  real(8) :: a(2 * n), b(3 * n), m2(4, n), m3(5, 6), s, t
  real(8), allocatable :: g(:), g2(:, :)
  complex(8) :: z(2 * n), zr(2 * n)
  type(pt) :: p(2 * n), q(3 * n)
  type(MPI_Request) :: req(2), preq(2)
  type(MPI_Status) :: st
  type(MPI_Datatype) :: pt_type, pair, tmp_type
  type(MPI_Comm) :: ret
  integer(kind=MPI_ADDRESS_KIND) :: base, disps(2)
  integer :: cnt
  logical :: inside(3 * n)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  check_rank = rank
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  right = mod(rank + 1, size)
  left = mod(rank - 1 + size, size)
  call check(MPI_SUBARRAYS_SUPPORTED .and. MPI_ASYNC_PROTECTS_NONBLOCKING, 'MPI_SUBARRAYS_SUPPORTED')

  ! ---- Isend of a(1:2n:2) + blocking Recv into b(3:3n:3) (1-D strided, both sides) ----
  do i = 1, 2 * n
    a(i) = val(rank, i)
  end do
  b = -1
  call MPI_Isend(a(1:2 * n:2), n, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, req(1))
  call MPI_Recv(b(3:3 * n:3), n, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, st)
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  call MPI_F_sync_reg(a(1:2 * n:2))
  call PMPI_F_sync_reg(b)
  call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt)
  call check(cnt == n, 'Recv count of a strided section')
  do i = 1, 3 * n
    if (mod(i, 3) == 0) then
      call check(b(i) == val(left, 2 * (i / 3) - 1), 'Recv into b(3:3n:3)')
    else
      call check(b(i) == -1, 'b outside the section untouched')
    end if
  end do

  ! ---- Irecv into a 2-D section m2(1:4:2, 2:n) + blocking Send of a row of m3 ----
  ! m2(1:4:2, 2:n) cannot be merged into one dimension: nested vectors; a partial count (7 of
  ! 2*(n-1)) stops inside a column.
  m2 = -1
  do j = 1, 6
    do i = 1, 5
      m3(i, j) = val(rank, 10 * i + j)
    end do
  end do
  call MPI_Irecv(m2(1:4:2, 2:n), 7, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, req(1))
  call MPI_Send(m3(2, 1:6), 6, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD)
  call MPI_Send(m3(1:5:4, 3), 1, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD)
  call MPI_Wait(req(1), st)
  call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt)
  call check(cnt == 6, 'Irecv count of a 2-D section')
  k = 0
  do j = 1, n
    do i = 1, 4
      if (j >= 2 .and. mod(i, 2) == 1 .and. k < 6) then
        k = k + 1
        call check(m2(i, j) == val(left, 20 + k), 'Irecv into m2(1:4:2, 2:n)')
      else
        call check(m2(i, j) == -1, 'm2 outside the received part untouched')
      end if
    end do
  end do
  ! the second message (m3(1,3)) into the 7th position of the section and beyond: 1 element
  m2 = -1
  call MPI_Recv(m2(1:4:2, 2:n), 7, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, st)
  call check(m2(1, 2) == val(left, 13) .and. count(m2 /= -1) == 1, 'second Recv into a 2-D section')

  ! ---- negative stride, Bcast ----
  b = -2
  if (rank == 0) b(1:3 * n:3) = [(val(0, i), i = 2 * n, 1, -2)]
  call MPI_Bcast(b(1:3 * n:3), n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
  do i = 1, 3 * n
    if (mod(i, 3) == 1) then
      call check(b(i) == val(0, 2 * n - 2 * (i / 3)), 'Bcast into b(1:3n:3)')
    else
      call check(b(i) == -2, 'b outside the Bcast section untouched')
    end if
  end do
  a = -1
  if (rank == 0) a = [(val(0, i), i = 1, 2 * n)]
  call MPI_Bcast(a(2 * n:1:-2), n, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
  do i = 1, 2 * n
    if (mod(i, 2) == 0) then
      call check(a(i) == val(0, i), 'Bcast into a(2n:1:-2)')
    else
      call check(a(i) == merge(val(0, i), -1.0d0, rank == 0), 'a outside the reversed section untouched')
    end if
  end do

  ! ---- Allreduce: strided send and receive buffers, MPI_IN_PLACE, then non-blocking ----
  do i = 1, 2 * n
    a(i) = val(rank, i)
  end do
  m2 = -1
  call MPI_Allreduce(a(1:2 * n:2), m2(3, 1:n), n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  do j = 1, n
    s = 0
    do k = 0, size - 1
      s = s + val(k, 2 * j - 1)
    end do
    call check(m2(3, j) == s, 'Allreduce into m2(3, :)')
    call check(all(m2([1, 2, 4], j) == -1), 'm2 outside the Allreduce row untouched')
  end do
  call MPI_Allreduce(MPI_IN_PLACE, a(2:2 * n:2), n, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  do i = 1, 2 * n
    t = merge(val(size - 1, i), val(rank, i), mod(i, 2) == 0)
    call check(a(i) == t, 'Allreduce MPI_IN_PLACE on a(2:2n:2)')
  end do
  m2 = -1
  do i = 1, 2 * n
    a(i) = val(rank, i)
  end do
  call MPI_Iallreduce(a(2:2 * n:2), m2(2:4:2, 1:n:2), n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req(1))
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  k = 0
  do j = 1, n
    do i = 1, 4
      if (mod(j, 2) == 1 .and. mod(i, 2) == 0) then
        k = k + 1
        s = 0
        do cnt = 0, size - 1
          s = s + val(cnt, 2 * k)
        end do
        call check(m2(i, j) == s, 'Iallreduce into m2(2:4:2, 1:n:2)')
      else
        call check(m2(i, j) == -1, 'm2 outside the Iallreduce section untouched')
      end if
    end do
  end do

  ! ---- Gather: strided send, strided 1-D receive (resized type), 2-D receive (copy) ----
  allocate(g(3 * n * size), g2(3, 2 * size))
  do i = 1, 2 * n
    a(i) = val(rank, i)
  end do
  g = -1
  g2 = -1
  call MPI_Gather(a(1:2 * n:2), n, MPI_DOUBLE_PRECISION, g(2:3 * n * size:3), n, MPI_DOUBLE_PRECISION, &
                  0, MPI_COMM_WORLD)
  call MPI_Gather(a(2:4:2), 2, MPI_DOUBLE_PRECISION, g2(1:3:2, :), 2, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    do i = 1, 3 * n * size
      if (mod(i, 3) == 2) then
        k = i / 3  ! 0-based position in the section
        call check(g(i) == val(k / n, 2 * mod(k, n) + 1), 'Gather into g(2::3)')
      else
        call check(g(i) == -1, 'g outside the Gather section untouched')
      end if
    end do
    ! rank k's two elements are the k+1-th pair of the section: column k+1
    do k = 0, size - 1
      call check(g2(1, k + 1) == val(k, 2) .and. g2(3, k + 1) == val(k, 4), 'Gather into g2(1:3:2, :)')
    end do
    call check(all(g2(:, size + 1:) == -1), 'g2 columns after the gathered ones untouched')
    call check(all(g2(2, :) == -1), 'g2 outside the Gather section untouched')
  else
    call check(all(g == -1) .and. all(g2 == -1), 'Gather: non-root receive buffers untouched')
  end if
  ! non-blocking: Ibcast into a 2-D section (nested types) and Igather into a strided section
  ! (resized type), completed together; the types are released at completion
  m2 = -1
  if (rank == 0) m2(1:4:2, 2:n) = reshape([(val(0, i), i = 1, 2 * (n - 1))], [2, n - 1])
  g = -1
  call MPI_Ibcast(m2(1:4:2, 2:n), 2 * (n - 1), MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, req(1))
  call MPI_Igather(a(2:2 * n:2), n, MPI_DOUBLE_PRECISION, g(3:3 * n * size:3), n, MPI_DOUBLE_PRECISION, &
                   0, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
  k = 0
  do j = 1, n
    do i = 1, 4
      if (j >= 2 .and. mod(i, 2) == 1) then
        k = k + 1
        call check(m2(i, j) == val(0, k), 'Ibcast into m2(1:4:2, 2:n)')
      else
        call check(m2(i, j) == -1, 'm2 outside the Ibcast section untouched')
      end if
    end do
  end do
  if (rank == 0) then
    do i = 1, 3 * n * size
      if (mod(i, 3) == 0) then
        k = i / 3 - 1
        call check(g(i) == val(k / n, 2 * mod(k, n) + 2), 'Igather into g(3::3)')
      else
        call check(g(i) == -1, 'g outside the Igather section untouched')
      end if
    end do
  end if
  deallocate(g, g2)

  ! ---- derived datatypes ----
  ! a struct of one Fortran derived type (extent = the element's length): nested types
  call MPI_Get_address(p(1)%x, base)
  call MPI_Get_address(p(1)%i, disps(2))
  disps(1) = 0
  disps(2) = disps(2) - base
  call MPI_Type_create_struct(2, [1, 1], disps, [MPI_DOUBLE_PRECISION, MPI_INTEGER], tmp_type)
  call MPI_Type_create_resized(tmp_type, 0_MPI_ADDRESS_KIND, int(storage_size(p(1)) / 8, MPI_ADDRESS_KIND), pt_type)
  call MPI_Type_free(tmp_type)
  call MPI_Type_commit(pt_type)
  do i = 1, 2 * n
    p(i) = pt(val(rank, i), rank * 100 + i)
  end do
  q = pt(-1.0d0, -1)
  call MPI_Sendrecv(p(2 * n:2:-2), n, pt_type, right, 3, q(1:3 * n:3), n, pt_type, left, 3, MPI_COMM_WORLD, st)
  do i = 1, 3 * n
    inside(i) = mod(i, 3) == 1
    if (inside(i)) then
      k = 2 * n - 2 * (i / 3)
      call check(q(i)%x == val(left, k) .and. q(i)%i == left * 100 + k, 'Sendrecv of a struct type section')
    else
      call check(q(i)%x == -1 .and. q(i)%i == -1, 'q outside the struct section untouched')
    end if
  end do
  ! MPI_DOUBLE_PRECISION on a COMPLEX(8) section: two datatypes per element; an odd count ends
  ! half-way into an element
  do i = 1, 2 * n
    z(i) = cmplx(val(rank, i), -val(rank, i), 8)
  end do
  zr = (-1, -1)
  call MPI_Irecv(zr(2:2 * n:2), 2 * n - 1, MPI_DOUBLE_PRECISION, left, 4, MPI_COMM_WORLD, req(1))
  call MPI_Send(z(1:2 * n:2), 2 * n - 1, MPI_DOUBLE_PRECISION, right, 4, MPI_COMM_WORLD)
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  do i = 1, 2 * n
    if (mod(i, 2) == 1) then
      call check(zr(i) == (-1, -1), 'zr outside the complex section untouched')
    else if (i < 2 * n) then
      call check(zr(i) == cmplx(val(left, i - 1), -val(left, i - 1), 8), 'complex section by MPI_DOUBLE_PRECISION')
    else
      call check(zr(i) == cmplx(val(left, i - 1), -1, 8), 'complex section: half of the last element')
    end if
  end do
  ! a pair of doubles on a REAL(8) section: spans two elements, sent through a copy
  call MPI_Type_contiguous(2, MPI_DOUBLE_PRECISION, pair)
  call MPI_Type_commit(pair)
  do i = 1, 2 * n
    a(i) = val(rank, i)
  end do
  b = -1
  call MPI_Irecv(b(1:3 * n:3), n / 2, pair, left, 5, MPI_COMM_WORLD, req(1))
  call MPI_Send(a(1:2 * n:2), n / 2, pair, right, 5, MPI_COMM_WORLD)
  call MPI_Wait(req(1), MPI_STATUS_IGNORE)
  do i = 1, 3 * n
    if (mod(i, 3) == 1) then
      call check(b(i) == val(left, 2 * (i / 3) + 1), 'pair type on b(1:3n:3)')
    else
      call check(b(i) == -1, 'b outside the pair section untouched')
    end if
  end do

  ! ---- persistent requests on sections, started twice ----
  call MPI_Recv_init(b(2:3 * n:3), n, MPI_DOUBLE_PRECISION, left, 6, MPI_COMM_WORLD, preq(1))
  call MPI_Send_init(a(2 * n:1:-2), n, MPI_DOUBLE_PRECISION, right, 6, MPI_COMM_WORLD, preq(2))
  do k = 1, 2
    do i = 1, 2 * n
      a(i) = val(rank, i) + k
    end do
    b = -1
    call MPI_Startall(2, preq)
    call MPI_Waitall(2, preq, MPI_STATUSES_IGNORE)
    do i = 1, 3 * n
      if (mod(i, 3) == 2) then
        call check(b(i) == val(left, 2 * n - 2 * (i / 3)) + k, 'persistent Recv_init into b(2:3n:3)')
      else
        call check(b(i) == -1, 'b outside the persistent section untouched')
      end if
    end do
  end do
  call check(mpc_f08_buffers_held() > 0, 'persistent requests hold their section types')
  call MPI_Request_free(preq(1))
  call MPI_Request_free(preq(2))

  ! ---- scalars (rank 0 buffers) ----
  s = val(rank, 7)
  t = -1
  call MPI_Sendrecv(s, 1, MPI_DOUBLE_PRECISION, right, 7, t, 1, MPI_DOUBLE_PRECISION, left, 7, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE)
  call check(t == val(left, 7), 'scalar Sendrecv')
  call MPI_Allreduce(s, t, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  call check(t == val(size - 1, 7), 'scalar Allreduce')

  ! ---- bad buffers: errors in ierror ----
  call MPI_Comm_dup(MPI_COMM_WORLD, ret)
  call MPI_Comm_set_errhandler(ret, MPI_ERRORS_RETURN)
  call MPI_Send(a(1:2 * n:2), n + 1, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, 0, ret, ierr)
  call check(ierr == MPI_ERR_COUNT, 'Send: count larger than the section')
  call MPI_Recv(m2(1:4:2, :), 2 * n + 1, MPI_DOUBLE_PRECISION, MPI_PROC_NULL, 0, ret, st, ierr)
  call check(ierr == MPI_ERR_COUNT, 'Recv: count larger than a 2-D section')
  call MPI_Allreduce(a(1:2 * n:2), b(1:3 * n:3), n + 1, MPI_DOUBLE_PRECISION, MPI_SUM, ret, ierr)
  call check(ierr == MPI_ERR_COUNT, 'Allreduce: count larger than the sections')
  call MPI_Irecv(b(1:3 * n:3), n, pair, MPI_PROC_NULL, 0, ret, req(1), ierr)
  call check(ierr == MPI_ERR_COUNT, 'Irecv: a derived type overrunning the section')
  call MPI_Bcast(a(1:2 * n:2), n / 2, pair, 0, ret, ierr)  ! within the section: a copy
  call check(ierr == MPI_SUCCESS, 'Bcast of pairs in the section')
  call MPI_Send_init(a(1:2 * n:2), n / 2, pair, MPI_PROC_NULL, 0, ret, preq(1), ierr)
  call check(ierr == MPI_ERR_BUFFER, 'Send_init: a section needing a copy')
  ! no communicator: raised on MPI_COMM_WORLD
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Buffer_attach(b(1:3 * n:3), 8 * n, ierr)
  call check(ierr == MPI_ERR_BUFFER, 'Buffer_attach: a non-contiguous section')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL)
  call MPI_Send(a(1:2 * n:2), 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, ret, ierr)
  call check(ierr == MPI_ERR_TYPE, 'Send: MPI_DATATYPE_NULL on a section')
  call MPI_Comm_free(ret)
  call MPI_Type_free(pair)
  call MPI_Type_free(pt_type)

  call MPI_Barrier(MPI_COMM_WORLD)
  call check(mpc_f08_buffers_held() == 0, 'every section type and copy released')
  call MPI_Finalize()
  if (rank == 0) print '(A)', 'f08_sections: OK'
end program f08_sections

! mpif.h (fixed form): point-to-point with arrays and statuses, MPI_STATUS_IGNORE, strings,
! LOGICAL flags, MPI_WTIME and an attribute copied by MPI_COMM_DUP_FN. Ring: each rank sends an
! array to the next one.
      program mpif_basic
      implicit none
      include 'mpif.h'
      integer n
      parameter (n=1000)
      integer ierr, rank, nranks, next, prev, i, count, len
      integer status(MPI_STATUS_SIZE), req
      double precision sbuf(n), rbuf(n), t0
      logical flag
      character*(MPI_MAX_OBJECT_NAME) cname
      character*(MPI_MAX_PROCESSOR_NAME) pname
      integer key, dup
      integer(kind=MPI_ADDRESS_KIND) extra, aval

      call MPI_INIT(ierr)
      call check(ierr .eq. MPI_SUCCESS, 'MPI_INIT')
      call MPI_INITIALIZED(flag, ierr)
      call check(flag, 'MPI_INITIALIZED')
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
      t0 = MPI_WTIME()
!     profiling control: no ierror argument in Fortran
      call MPI_PCONTROL(1)
      next = mod(rank + 1, nranks)
      prev = mod(rank + nranks - 1, nranks)
      do i = 1, n
        sbuf(i) = rank * 10000.0d0 + i
        rbuf(i) = -1
      end do
      call MPI_IRECV(rbuf, n, MPI_DOUBLE_PRECISION, prev, 7,
     &               MPI_COMM_WORLD, req, ierr)
      call MPI_SEND(sbuf, n, MPI_DOUBLE_PRECISION, next, 7,
     &              MPI_COMM_WORLD, ierr)
      call MPI_WAIT(req, status, ierr)
      call check(status(MPI_SOURCE) .eq. prev, 'status source')
      call check(status(MPI_TAG) .eq. 7, 'status tag')
      call MPI_GET_COUNT(status, MPI_DOUBLE_PRECISION, count, ierr)
      call check(count .eq. n, 'MPI_GET_COUNT')
      do i = 1, n
        call check(rbuf(i) .eq. prev * 10000.0d0 + i, 'ring data')
      end do
!     half an array (a section), received with MPI_STATUS_IGNORE
      call MPI_SENDRECV(sbuf(1), n / 2, MPI_REAL8, next, 8,
     &                  rbuf(n / 2 + 1), n / 2, MPI_REAL8, prev, 8,
     &                  MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call check(rbuf(n) .eq. prev * 10000.0d0 + n / 2, 'sendrecv')
      call MPI_IPROBE(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, flag,
     &                status, ierr)
      call check(.not. flag, 'MPI_IPROBE without a message')
      call MPI_COMM_GET_NAME(MPI_COMM_WORLD, cname, len, ierr)
      call check(cname .eq. 'MPI_COMM_WORLD', 'MPI_COMM_GET_NAME')
      call check(len .eq. 14, 'name length')
      call MPI_GET_PROCESSOR_NAME(pname, len, ierr)
      call check(len .gt. 0 .and. len_trim(pname) .eq. len, 'name')
      call check(MPI_WTIME() .ge. t0, 'MPI_WTIME')
      call check(MPI_WTICK() .gt. 0, 'MPI_WTICK')
!     attributes with the predefined procedures (EXTERNAL in mpif.h)
      extra = 0
      call MPI_COMM_CREATE_KEYVAL(MPI_COMM_DUP_FN,
     &     MPI_COMM_NULL_DELETE_FN, key, extra, ierr)
      call check(ierr .eq. MPI_SUCCESS, 'MPI_COMM_CREATE_KEYVAL')
      aval = 5 + rank
      call MPI_COMM_SET_ATTR(MPI_COMM_WORLD, key, aval, ierr)
      call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
      aval = -1
      call MPI_COMM_GET_ATTR(dup, key, aval, flag, ierr)
      call check(flag .and. aval .eq. 5 + rank, 'MPI_COMM_DUP_FN')
      call MPI_COMM_FREE(dup, ierr)
      call MPI_COMM_DELETE_ATTR(MPI_COMM_WORLD, key, ierr)
      call MPI_COMM_FREE_KEYVAL(key, ierr)
      call check(ierr .eq. MPI_SUCCESS, 'MPI_COMM_FREE_KEYVAL')
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) print '(A,I0,A)', 'mpif_basic: ', nranks,
     &  ' ranks ok'
      call MPI_FINALIZE(ierr)
      end

      subroutine check(ok, what)
      logical ok
      character*(*) what
      if (.not. ok) then
        print *, 'FAIL: ', what
        call exit(1)
      end if
      end

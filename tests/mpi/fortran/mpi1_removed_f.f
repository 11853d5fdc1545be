! The MPI-1 routines MPI-3.0 removed, as old Fortran programs call them (external procedures,
! default INTEGER addresses and displacements; MPICH's hindex1f and get_elem_u): a structure
! built with MPI_ADDRESS differences and MPI_TYPE_STRUCT, MPI_TYPE_HINDEXED, MPI_TYPE_HVECTOR,
! MPI_TYPE_EXTENT / LB / UB, MPI_ERRHANDLER_SET / GET; each type sent around a ring and checked.
      program mpi1f
      implicit none
      include 'mpif.h'
      integer ierr, rank, nranks, right, left, errs
      integer a1, a2, a3, disp(2), blens(2), types(2), tstruct
      integer thind, thvec, ext, lb, ub, eh, dh(2), bl(2)
      integer ibuf(2), jbuf(3), vbuf(6), wbuf(6), i
      double precision d, e
      common /pair/ d, ibuf
      errs = 0
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
      right = mod(rank + 1, nranks)
      left = mod(rank + nranks - 1, nranks)
!     a struct of a DOUBLE PRECISION and 2 INTEGERs, displacements from MPI_ADDRESS
      call MPI_ADDRESS(d, a1, ierr)
      call MPI_ADDRESS(ibuf, a2, ierr)
      if (ierr .ne. MPI_SUCCESS .or. a2 - a1 .ne. 8) then
         errs = errs + 1
         print *, 'MPI_ADDRESS difference ', a2 - a1, ' (8 expected)'
      endif
      disp(1) = 0
      disp(2) = a2 - a1
      blens(1) = 1
      blens(2) = 2
      types(1) = MPI_DOUBLE_PRECISION
      types(2) = MPI_INTEGER
      call MPI_TYPE_STRUCT(2, blens, disp, types, tstruct, ierr)
      call MPI_TYPE_COMMIT(tstruct, ierr)
      call MPI_TYPE_EXTENT(tstruct, ext, ierr)
      call MPI_TYPE_LB(tstruct, lb, ierr)
      call MPI_TYPE_UB(tstruct, ub, ierr)
      if (ext .ne. 16 .or. lb .ne. 0 .or. ub .ne. 16) then
         errs = errs + 1
         print *, 'struct extent/lb/ub ', ext, lb, ub
      endif
      d = rank + 0.5d0
      ibuf(1) = rank
      ibuf(2) = 10 * rank
      call MPI_SENDRECV_REPLACE(d, 1, tstruct, right, 1, left, 1,
     &     MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      if (d .ne. left + 0.5d0 .or. ibuf(1) .ne. left .or.
     &    ibuf(2) .ne. 10 * left) then
         errs = errs + 1
         print *, 'struct received ', d, ibuf
      endif
!     hindexed: elements 1-2 and 5-6 of 6 INTEGERs (byte displacements)
      bl(1) = 2
      bl(2) = 2
      dh(1) = 0
      dh(2) = 16
      call MPI_TYPE_HINDEXED(2, bl, dh, MPI_INTEGER, thind, ierr)
      call MPI_TYPE_COMMIT(thind, ierr)
!     hvector: 3 blocks of 1 INTEGER, 8 bytes apart (elements 1, 3, 5)
      call MPI_TYPE_HVECTOR(3, 1, 8, MPI_INTEGER, thvec, ierr)
      call MPI_TYPE_COMMIT(thvec, ierr)
      do i = 1, 6
         vbuf(i) = 100 * rank + i
         wbuf(i) = -1
      enddo
      call MPI_SENDRECV(vbuf, 1, thind, right, 2, wbuf, 1, thind,
     &     left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      if (wbuf(1) .ne. 100*left+1 .or. wbuf(2) .ne. 100*left+2 .or.
     &    wbuf(3) .ne. -1 .or. wbuf(5) .ne. 100*left+5 .or.
     &    wbuf(6) .ne. 100*left+6) then
         errs = errs + 1
         print *, 'hindexed received ', wbuf
      endif
      call MPI_SENDRECV(vbuf, 1, thvec, right, 3, jbuf, 3, MPI_INTEGER,
     &     left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      if (jbuf(1) .ne. 100*left+1 .or. jbuf(2) .ne. 100*left+3 .or.
     &    jbuf(3) .ne. 100*left+5) then
         errs = errs + 1
         print *, 'hvector received ', jbuf
      endif
      call MPI_TYPE_EXTENT(thvec, ext, ierr)
      if (ext .ne. 20) then
         errs = errs + 1
         print *, 'hvector extent ', ext, ' (20 expected)'
      endif
      call MPI_TYPE_FREE(thvec, ierr)
      call MPI_TYPE_FREE(thind, ierr)
      call MPI_TYPE_FREE(tstruct, ierr)
!     error handlers under their MPI-1 names
      call MPI_ERRHANDLER_SET(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
      call MPI_ERRHANDLER_GET(MPI_COMM_WORLD, eh, ierr)
      if (ierr .ne. MPI_SUCCESS .or. eh .ne. MPI_ERRORS_RETURN) then
         errs = errs + 1
         print *, 'MPI_ERRHANDLER_GET ', eh
      endif
      call MPI_ADDRESS(e, a3, ierr)
      call MPI_TYPE_EXTENT(MPI_DATATYPE_NULL, ext, ierr)
      if (ierr .eq. MPI_SUCCESS) then
         errs = errs + 1
         print *, 'MPI_TYPE_EXTENT of MPI_DATATYPE_NULL succeeded'
      endif
      call MPI_FINALIZE(ierr)
      if (errs .ne. 0) stop 1
      if (rank .eq. 0) print *, 'mpi1_removed_f ok'
      end

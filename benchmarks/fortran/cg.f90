! A conjugate-gradient kernel of the NAS CG kind, written for MPC's benchmarks (issue 9): CG on
! the 7-point Laplacian of an nx x ny x nz grid (Dirichlet boundaries), the grid cut into slabs
! of z planes, one slab per rank. Each iteration: one matrix-vector product after a halo
! exchange of one plane with each neighbour (MPI_Irecv / MPI_Isend / MPI_Waitall), and two
! dot products (MPI_Allreduce of one double) -- the communication pattern of NAS CG.
!
!   cg [--impl NAME] [--quick] [--n N] [--iters K]
! prints, on rank 0, one line per figure for benchmarks/lib.sh:
!   ROW cg_time <ranks> <impl> <seconds> s <min> <max> <no extra keys> <description>
! The time is the median of 5 solves (3 with --quick) of K iterations each, max over ranks.
! The log line (stderr) also gives the share of that solve rank 0 spent in MPI_Waitall (halo)
! and MPI_Allreduce (dot products): the rest is computation, the same code in every build.
! Every solve is checked: b = A * ones, so x must approach ones; a solve whose residual did not
! drop by 10^3 prints WRONG RESULT.
program cg
  use mpi
  implicit none
  integer :: n = 48, iters = 100, reps = 5
  character(len=32) :: impl = 'mpc'
  integer :: ierr, rank, nranks, z0, nzl, rep
  double precision, allocatable :: x(:, :, :), r(:, :, :), p(:, :, :), q(:, :, :), b(:, :, :)
  double precision, allocatable :: times(:)
  double precision :: t0, t, tmax, rnorm0, rnorm, err
  double precision :: tcomm = 0, comm_share = 0  ! seconds in MPI_Waitall / MPI_Allreduce in a solve
  character(len=256) :: what

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call parse_args()
  if (nranks > n) then
    if (rank == 0) print '(A)', 'cg: more ranks than z planes'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  ! slab of this rank: planes z0 .. z0 + nzl - 1 (0-based), plus one halo plane each side
  z0 = rank * n / nranks
  nzl = (rank + 1) * n / nranks - z0
  allocate(x(n, n, 0:nzl + 1), r(n, n, 0:nzl + 1), p(n, n, 0:nzl + 1), q(n, n, 0:nzl + 1))
  allocate(b(n, n, 0:nzl + 1), times(reps))
  p = 1
  call matvec(p, b)   ! b = A * ones

  call solve(rnorm0, rnorm, err)   ! warm-up
  do rep = 1, reps
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    tcomm = 0
    call solve(rnorm0, rnorm, err)
    t = MPI_Wtime() - t0
    if (rep == reps) comm_share = tcomm / t
    call MPI_Allreduce(t, tmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
    times(rep) = tmax
    if (rank == 0 .and. .not. (rnorm < rnorm0 * 1d-3)) then
      write (0, '(A,ES10.3,A,ES10.3)') 'cg: WRONG RESULT: residual ', rnorm, ' from ', rnorm0
    end if
  end do
  if (rank == 0) then
    call sort(times)
    write (0, '(A,A,I4,A,F10.5,A,ES10.3,A,ES10.3,A,F5.1,A)') trim(impl), ': ranks', nranks, '  median ', &
      times((reps + 1) / 2), ' s  residual ', rnorm, '  max |x - 1| ', err, '  in MPI ', &
      100 * comm_share, '% (rank 0, last solve)'
    write (what, '(A,I0,A,I0,A,I0,A)') 'CG on the 7-point Laplacian of a ', n, '^3 grid, ', iters, &
      ' iterations, ', nranks, ' z-slabs: seconds per solve, max over ranks'
    print '(A,I0,3A,F12.6,A,F12.6,A,F12.6,3A)', 'ROW'//achar(9)//'cg_time'//achar(9), nranks, &
      achar(9), trim(impl), achar(9), times((reps + 1) / 2), achar(9)//'s'//achar(9), times(1), &
      achar(9), times(reps), achar(9), achar(9), trim(what)
  end if
  deallocate(x, r, p, q, b, times)
  call MPI_Finalize(ierr)

contains

  subroutine parse_args()
    integer :: k, nargs
    character(len=64) :: a
    nargs = command_argument_count()
    k = 1
    do while (k <= nargs)
      call get_command_argument(k, a)
      select case (a)
      case ('--impl')
        k = k + 1
        call get_command_argument(k, impl)
      case ('--quick')
        reps = 3
      case ('--n')
        k = k + 1
        call get_command_argument(k, a)
        read (a, *) n
      case ('--iters')
        k = k + 1
        call get_command_argument(k, a)
        read (a, *) iters
      case default
        if (rank == 0) print '(2A)', 'cg: unknown argument ', trim(a)
        call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
      end select
      k = k + 1
    end do
  end subroutine parse_args

  ! v's halo planes from the neighbouring slabs (zero at the grid's faces)
  subroutine halo(v)
    double precision, intent(inout) :: v(n, n, 0:nzl + 1)
    integer :: reqs(4), k
    double precision :: t
    reqs = MPI_REQUEST_NULL
    k = n * n
    v(:, :, 0) = 0
    v(:, :, nzl + 1) = 0
    if (rank > 0) then
      call MPI_Irecv(v(1, 1, 0), k, MPI_DOUBLE_PRECISION, rank - 1, 1, MPI_COMM_WORLD, reqs(1), ierr)
      call MPI_Isend(v(1, 1, 1), k, MPI_DOUBLE_PRECISION, rank - 1, 2, MPI_COMM_WORLD, reqs(2), ierr)
    end if
    if (rank < nranks - 1) then
      call MPI_Irecv(v(1, 1, nzl + 1), k, MPI_DOUBLE_PRECISION, rank + 1, 2, MPI_COMM_WORLD, reqs(3), ierr)
      call MPI_Isend(v(1, 1, nzl), k, MPI_DOUBLE_PRECISION, rank + 1, 1, MPI_COMM_WORLD, reqs(4), ierr)
    end if
    t = MPI_Wtime()
    call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE, ierr)
    tcomm = tcomm + (MPI_Wtime() - t)
  end subroutine halo

  ! w = A v (A: 6 on the diagonal, -1 for each neighbour inside the grid)
  subroutine matvec(v, w)
    double precision, intent(inout) :: v(n, n, 0:nzl + 1)
    double precision, intent(out) :: w(n, n, 0:nzl + 1)
    integer :: ix, iy, iz
    double precision :: s
    call halo(v)
    do iz = 1, nzl
      do iy = 1, n
        do ix = 1, n
          s = 6 * v(ix, iy, iz) - v(ix, iy, iz - 1) - v(ix, iy, iz + 1)
          if (ix > 1) s = s - v(ix - 1, iy, iz)
          if (ix < n) s = s - v(ix + 1, iy, iz)
          if (iy > 1) s = s - v(ix, iy - 1, iz)
          if (iy < n) s = s - v(ix, iy + 1, iz)
          w(ix, iy, iz) = s
        end do
      end do
    end do
  end subroutine matvec

  double precision function dot(u, v)
    double precision, intent(in) :: u(n, n, 0:nzl + 1), v(n, n, 0:nzl + 1)
    double precision :: local
    double precision :: t
    local = sum(u(:, :, 1:nzl) * v(:, :, 1:nzl))
    t = MPI_Wtime()
    call MPI_Allreduce(local, dot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    tcomm = tcomm + (MPI_Wtime() - t)
  end function dot

  subroutine solve(rn0, rn, e)
    double precision, intent(out) :: rn0, rn, e
    double precision :: rho, rho_new, alpha, e_local
    integer :: it
    x = 0
    r = b
    p = r
    rho = dot(r, r)
    rn0 = sqrt(rho)
    do it = 1, iters
      call matvec(p, q)
      alpha = rho / dot(p, q)
      x(:, :, 1:nzl) = x(:, :, 1:nzl) + alpha * p(:, :, 1:nzl)
      r(:, :, 1:nzl) = r(:, :, 1:nzl) - alpha * q(:, :, 1:nzl)
      rho_new = dot(r, r)
      p(:, :, 1:nzl) = r(:, :, 1:nzl) + (rho_new / rho) * p(:, :, 1:nzl)
      rho = rho_new
    end do
    rn = sqrt(rho)
    e_local = maxval(abs(x(:, :, 1:nzl) - 1))
    call MPI_Allreduce(e_local, e, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  end subroutine solve

  subroutine sort(a)
    double precision, intent(inout) :: a(:)
    integer :: j, k
    double precision :: v
    do j = 2, size(a)
      v = a(j)
      k = j - 1
      do while (k >= 1)
        if (a(k) <= v) exit
        a(k + 1) = a(k)
        k = k - 1
      end do
      a(k + 1) = v
    end do
  end subroutine sort
end program cg

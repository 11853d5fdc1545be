// A C++ exception escaping main in one rank ends the job with one line naming the rank and the
// exception's what(); ctest checks the line and the exit status 1.
#include <mpi.h>

#include <stdexcept>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        throw std::runtime_error("bad input file");
    }
    MPI_Barrier(MPI_COMM_WORLD);  // the others wait here until the job ends
    MPI_Finalize();
    return 0;
}

// static_objects.cpp: a C++ MPI program with a global object and a function-local static one.
// Privatized (mpc_cc's default) each rank has its own copy of both: the constructors run once
// per rank, in the rank, before its main; the destructors once per rank, after its main. Built
// with -fno-mpc-privatize the ranks share them: constructors once before the ranks start,
// destructors once after they all end (tests/mpi/wrapper_test.sh static-cxx counts the lines).
#include <mpi.h>

#include <cstdio>
#include <string>

namespace {

struct announcer {
    std::string name;
    explicit announcer(const char* n) : name(n) { std::printf("static constructor of %s\n", name.c_str()); }
    ~announcer() {
        std::printf("static destructor of %s\n", name.c_str());
        std::fflush(stdout);
    }
};

announcer global_object("global_object");

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static announcer function_local("function_local");  // shared: the first rank to get here
    std::printf("rank %d of %d sees %s\n", rank, size, global_object.name.c_str());
    MPI_Finalize();
    return 0;
}

// static_objects.cpp: a C++ MPI program with a global object. Its constructor runs once before
// the ranks start and its destructor once after they all end (the program's globals are shared
// by the ranks until privatization lands), whatever the number of ranks.
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
    static announcer function_local("function_local");  // first rank to get here constructs it
    std::printf("rank %d of %d sees %s\n", rank, size, global_object.name.c_str());
    MPI_Finalize();
    return 0;
}

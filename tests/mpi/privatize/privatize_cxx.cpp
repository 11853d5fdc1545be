// privatize_cxx.cpp: C++ under privatization. Each rank has its own copy of a global object
// with a constructor (run in the rank's own user-level thread before its main: its members and
// the heap blocks it allocates lie in the rank's address slice), of a class static member, of
// a function-local static object, of a thread_local object with a constructor, and of an
// inline variable. Exceptions thrown and caught inside the rank's copy of the program work.
// The thread_local object is destroyed when the rank's main returns, before its globals.
// Each check fails when the ranks share these objects. Exit status 1 on any error.
#include <mpc.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int my_rank = -1;
int errors = 0;

void check(bool ok, const std::string& what) {
    if (!ok) {
        std::fprintf(stderr, "privatize_cxx: rank %d: FAIL: %s\n", my_rank, what.c_str());
        ++errors;
    }
}

struct recorder {
    int constructed = 0;
    int initialized_at_construction = -1;
    int slice_at_construction = -2;
    std::string name;
    recorder() : name(64, 'x') {  // long enough to live on the heap
        ++constructed;
        MPI_Initialized(&initialized_at_construction);
        slice_at_construction = MPC_Allocator_slice_of(name.data());
    }
};

recorder global_recorder;

struct counter_holder {
    static int count;
};
int counter_holder::count = 0;

inline int inline_var = 0;

bool tls_destroyed = false;

struct tls_object {
    int value;
    std::vector<int> data;
    tls_object() : value(42), data(4, 1) {}
    ~tls_object() { tls_destroyed = true; }  // when the rank's main returns, before the globals
};
thread_local tls_object tls_obj;

// Destroyed after the rank's main, after its thread-local objects: checks they were.
struct final_check {
    ~final_check() {
        if (!tls_destroyed) {
            std::fprintf(stderr, "privatize_cxx: rank %d: FAIL: the thread_local object was not destroyed\n", my_rank);
            std::fflush(stderr);
            std::_Exit(3);
        }
    }
};
final_check checker;

int bump_local() {
    static std::vector<int> seen;  // one per rank
    seen.push_back(static_cast<int>(seen.size()));
    return static_cast<int>(seen.size());
}

int thrower(int x) {
    if (x >= 0) {
        throw std::runtime_error("rank " + std::to_string(x));
    }
    return x;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    my_rank = rank;

    check(global_recorder.constructed == 1, "the global object was constructed " +
                                                std::to_string(global_recorder.constructed) + " times in this rank");
    check(global_recorder.initialized_at_construction == 0, "the constructor ran after MPI_Init");
    if (MPC_Allocator_active()) {
        check(global_recorder.slice_at_construction == rank,
              "the constructor allocated in the slice of " + std::to_string(global_recorder.slice_at_construction));
        check(MPC_Allocator_slice_of(&global_recorder) == rank, "the global object is not in the rank's slice");
    }
    int local = 0;
    tls_obj.value += rank;
    for (int step = 0; step < size; ++step) {
        if (step < rank) {
            ++counter_holder::count;
            ++inline_var;
            local = bump_local();
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    check(counter_holder::count == rank, "class static " + std::to_string(counter_holder::count));
    check(inline_var == rank, "inline variable " + std::to_string(inline_var));
    check(local == rank, "function-local static object counted " + std::to_string(local));
    check(tls_obj.value == 42 + rank && tls_obj.data.size() == 4, "thread_local object " + std::to_string(tls_obj.value));

    try {
        thrower(rank);
        check(false, "no exception");
    } catch (const std::runtime_error& e) {
        check(e.what() == "rank " + std::to_string(rank), std::string("caught ") + e.what());
    }

    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        std::printf(total == 0 ? "privatize_cxx: %d ranks ok\n" : "privatize_cxx: %d ranks, errors\n", size);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

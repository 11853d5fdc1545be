// Out-of-core storage (starpu_disk.h): disk nodes and their registration errors, handles whose
// home is a file on a disk, and eviction of idle handles to disk under the memory limit (with
// each backend), checked against values kept outside the runtime; what is never evicted (the
// application's memory, the ooc flag off, an acquired handle); and the same workload failing
// with -ENOMEM when no disk exists.
#include <gtest/gtest.h>
#include <starpu.h>

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

int start(int ncpus, const char* limit_mib) {
    if (limit_mib != nullptr) {
        setenv("STARPU_LIMIT_CPU_MEM", limit_mib, 1);
    } else {
        unsetenv("STARPU_LIMIT_CPU_MEM");
    }
    starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = ncpus;
    conf.sched_policy_name = "eager";
    conf.precedence_over_environment_variables = 1;
    const int rc = starpu_init(&conf);
    unsetenv("STARPU_LIMIT_CPU_MEM");
    return rc;
}

/// A fresh directory under /tmp, removed (with what is left in it) at the end.
struct scratch_dir {
    std::string path;
    scratch_dir() {
        char t[] = "/tmp/mpc-disk-test-XXXXXX";
        const char* p = mkdtemp(t);
        path = p != nullptr ? p : "";
    }
    ~scratch_dir() {
        if (!path.empty()) {
            std::string cmd = "rm -rf '" + path + "'";
            (void)std::system(cmd.c_str());
        }
    }
    std::size_t files() const {
        std::string cmd = "ls -A '" + path + "' | wc -l";
        FILE* f = popen(cmd.c_str(), "r");
        unsigned long n = 0;
        if (f != nullptr) {
            if (std::fscanf(f, "%lu", &n) != 1) {
                n = 0;
            }
            pclose(f);
        }
        return n;
    }
};

void write_file(const std::string& path, const std::vector<int>& v) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(int)));
}

std::vector<int> read_file(const std::string& path, std::size_t n) {
    std::vector<int> v(n, -1);
    std::ifstream f(path, std::ios::binary);
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(int)));
    return v;
}

// ---- codelets ------------------------------------------------------------------------------

void zero_fn(void* buffers[], void*) {
    auto* v = static_cast<starpu_vector_interface*>(buffers[0]);
    std::memset(reinterpret_cast<void*>(STARPU_VECTOR_GET_PTR(v)), 0, STARPU_VECTOR_GET_NX(v) * STARPU_VECTOR_GET_ELEMSIZE(v));
}
/// Adds 1 to every int of the vector.
void inc_fn(void* buffers[], void*) {
    auto* v = static_cast<starpu_vector_interface*>(buffers[0]);
    int* p = reinterpret_cast<int*>(STARPU_VECTOR_GET_PTR(v));
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(v); ++i) {
        p[i] += 1;
    }
}
/// Doubles every int.
void twice_fn(void* buffers[], void*) {
    auto* v = static_cast<starpu_vector_interface*>(buffers[0]);
    int* p = reinterpret_cast<int*>(STARPU_VECTOR_GET_PTR(v));
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(v); ++i) {
        p[i] *= 2;
    }
}
std::atomic<int> g_bad{0};
/// Every int equals the expected count (cl_arg).
void check_fn(void* buffers[], void* arg) {
    auto* v = static_cast<starpu_vector_interface*>(buffers[0]);
    const int* p = reinterpret_cast<const int*>(STARPU_VECTOR_GET_PTR(v));
    int want = 0;
    starpu_codelet_unpack_args(arg, &want);
    for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(v); ++i) {
        if (p[i] != want) {
            g_bad.fetch_add(1);
            return;
        }
    }
}

starpu_codelet zero_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = zero_fn;
    c.nbuffers = 1;
    c.modes[0] = STARPU_W;
    return c;
}();
starpu_codelet inc_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = inc_fn;
    c.nbuffers = 1;
    c.modes[0] = STARPU_RW;
    return c;
}();
starpu_codelet twice_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = twice_fn;
    c.nbuffers = 1;
    c.modes[0] = STARPU_RW;
    return c;
}();
starpu_codelet check_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = check_fn;
    c.nbuffers = 1;
    c.modes[0] = STARPU_R;
    return c;
}();

// ---- registration --------------------------------------------------------------------------

TEST(StarpuDisk, RegistrationMakesNumberedDiskNodesThatShutdownRemoves) {
    scratch_dir dir;
    ASSERT_FALSE(dir.path.empty());
    const std::string a = dir.path + "/a/deeper", b = dir.path + "/b";
    // Before starpu_init: refused.
    EXPECT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(a.c_str()), -1), -EINVAL);
    ASSERT_EQ(start(1, nullptr), 0);
    EXPECT_EQ(starpu_memory_nodes_get_count(), 1u);
    EXPECT_EQ(starpu_disk_register(nullptr, const_cast<char*>(a.c_str()), -1), -EINVAL);
    EXPECT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(a.c_str()), 1024 * 1024), -EINVAL)
        << "below STARPU_DISK_SIZE_MIN";
    // A path under a regular file cannot be a directory: -ENOENT, as StarPU's tests expect.
    const std::string file = dir.path + "/plain";
    write_file(file, {1});
    const std::string under = file + "/sub";
    EXPECT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(under.c_str()), -1), -ENOENT);
    const int n1 = starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(a.c_str()), STARPU_DISK_SIZE_MIN);
    const int n2 = starpu_disk_register(&starpu_disk_stdio_ops, const_cast<char*>(b.c_str()), -1);
    EXPECT_EQ(n1, 1);
    EXPECT_EQ(n2, 2);
    EXPECT_EQ(starpu_memory_nodes_get_count(), 3u);
    EXPECT_EQ(starpu_node_get_kind(0), STARPU_CPU_RAM);
    EXPECT_EQ(starpu_node_get_kind(1), STARPU_DISK_RAM);
    EXPECT_EQ(starpu_node_get_kind(2), STARPU_DISK_RAM);
    EXPECT_EQ(starpu_node_get_kind(3), STARPU_UNUSED);
    struct stat st{};
    EXPECT_EQ(stat(a.c_str(), &st), 0) << "plug makes the directory";
    EXPECT_EQ(starpu_disk_open(7, const_cast<char*>("x"), 4), nullptr);
    EXPECT_EQ(starpu_disk_open(1, const_cast<char*>("missing-file"), 4), nullptr);
    starpu_shutdown();
    EXPECT_NE(stat(a.c_str(), &st), 0) << "unplug removes the directory it made";
    EXPECT_NE(stat(b.c_str(), &st), 0);
    ASSERT_EQ(start(1, nullptr), 0);
    EXPECT_EQ(starpu_memory_nodes_get_count(), 1u) << "disks do not outlive the runtime";
    starpu_shutdown();
}

// ---- home on disk --------------------------------------------------------------------------

void home_on_disk_with(starpu_disk_ops* ops) {
    scratch_dir dir;
    constexpr std::size_t n = 4096;
    std::vector<int> a(n), c(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = static_cast<int>(i * 3 + 1);
    }
    write_file(dir.path + "/A", a);
    write_file(dir.path + "/C", c);
    ASSERT_EQ(start(2, nullptr), 0);
    const int dd = starpu_disk_register(ops, const_cast<char*>(dir.path.c_str()), STARPU_DISK_SIZE_MIN);
    ASSERT_GE(dd, 1);
    void* oa = starpu_disk_open(static_cast<unsigned>(dd), const_cast<char*>("A"), n * sizeof(int));
    void* oc = starpu_disk_open(static_cast<unsigned>(dd), const_cast<char*>("C"), n * sizeof(int));
    ASSERT_NE(oa, nullptr);
    ASSERT_NE(oc, nullptr);
    starpu_data_handle_t ha, hc;
    starpu_vector_data_register(&ha, dd, reinterpret_cast<uintptr_t>(oa), n, sizeof(int));
    starpu_vector_data_register(&hc, dd, reinterpret_cast<uintptr_t>(oc), n, sizeof(int));
    EXPECT_EQ(starpu_data_test_if_allocated_on_node(ha, static_cast<unsigned>(dd)), 1u);
    EXPECT_EQ(starpu_data_test_if_allocated_on_node(ha, STARPU_MAIN_RAM), 0u) << "read at the first use only";
    int alloc = -1, valid = -1, req = -1;
    starpu_data_query_status(ha, dd, &alloc, &valid, &req);
    EXPECT_EQ(alloc, 1);
    EXPECT_EQ(valid, 1);
    EXPECT_EQ(req, 0);
    EXPECT_EQ(starpu_data_is_on_node(ha, static_cast<unsigned>(dd)), 1u);
    EXPECT_EQ(starpu_task_insert(&twice_cl, STARPU_RW, ha, 0), 0);
    starpu_task_wait_for_all();
    EXPECT_EQ(starpu_data_is_on_node(ha, static_cast<unsigned>(dd)), 0u) << "written in main memory: the file is stale";
    starpu_data_query_status(ha, dd, &alloc, &valid, &req);
    EXPECT_EQ(alloc, 1);
    EXPECT_EQ(valid, 0);
    ASSERT_EQ(starpu_data_cpy(hc, ha, 0, nullptr, nullptr), 0);  // C = 2A, through main memory
    ASSERT_EQ(starpu_data_acquire_on_node(ha, dd, STARPU_R), 0);  // holds the main-memory copy
    const int* pa = reinterpret_cast<const int*>(starpu_data_get_local_ptr(ha));
    ASSERT_NE(pa, nullptr);
    EXPECT_EQ(pa[5], 2 * a[5]);
    starpu_data_release_on_node(ha, dd);
    starpu_data_unregister(ha);  // written back to A
    starpu_data_unregister(hc);
    starpu_disk_close(static_cast<unsigned>(dd), oa, n * sizeof(int));
    starpu_disk_close(static_cast<unsigned>(dd), oc, n * sizeof(int));
    starpu_shutdown();
    const std::vector<int> fa = read_file(dir.path + "/A", n), fc = read_file(dir.path + "/C", n);
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(fa[i], 2 * a[i]) << i;
        ASSERT_EQ(fc[i], 2 * a[i]) << i;
    }
}

TEST(StarpuDisk, AVectorWithItsHomeInAFileIsReadAtFirstUseAndWrittenBackAtUnregisterUnistd) {
    home_on_disk_with(&starpu_disk_unistd_ops);
}
TEST(StarpuDisk, AVectorWithItsHomeInAFileIsReadAtFirstUseAndWrittenBackAtUnregisterStdio) {
    home_on_disk_with(&starpu_disk_stdio_ops);
}
TEST(StarpuDisk, AVectorWithItsHomeInAFileIsReadAtFirstUseAndWrittenBackAtUnregisterODirect) {
    home_on_disk_with(&starpu_disk_unistd_o_direct_ops);
}

TEST(StarpuDisk, ABlockWithItsHomeInAFileKeepsItsLayout) {
    scratch_dir dir;
    constexpr unsigned nx = 5, ny = 3, nz = 4;
    std::vector<int> v(nx * ny * nz);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<int>(i);
    }
    write_file(dir.path + "/B", v);
    ASSERT_EQ(start(1, nullptr), 0);
    const int dd = starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(dir.path.c_str()), -1);
    ASSERT_EQ(dd, 1);
    void* ob = starpu_disk_open(1, const_cast<char*>("B"), v.size() * sizeof(int));
    starpu_data_handle_t h;
    starpu_block_data_register(&h, dd, reinterpret_cast<uintptr_t>(ob), nx * 2, nx * ny * 3, nx, ny, nz, sizeof(int));
    ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
    const int* p = reinterpret_cast<const int*>(STARPU_BLOCK_GET_PTR(starpu_data_get_interface_on_node(h, 0)));
    const unsigned ldy = STARPU_BLOCK_GET_LDY(starpu_data_get_interface_on_node(h, 0));
    const unsigned ldz = STARPU_BLOCK_GET_LDZ(starpu_data_get_interface_on_node(h, 0));
    for (unsigned z = 0; z < nz; ++z) {
        for (unsigned y = 0; y < ny; ++y) {
            for (unsigned x = 0; x < nx; ++x) {
                ASSERT_EQ(p[z * ldz + y * ldy + x], static_cast<int>((z * ny + y) * nx + x)) << x << y << z;
            }
        }
    }
    starpu_data_release(h);
    starpu_data_unregister(h);
    starpu_disk_close(1, ob, v.size() * sizeof(int));
    starpu_shutdown();
}

// ---- eviction ------------------------------------------------------------------------------

/// ndata vectors of `bytes` each (twice the 1 MiB limit in all), zeroed, then `iters` random
/// increments and a check of each; returns how many handles were seen with a disk copy.
int random_increments(int ndata, std::size_t bytes, int iters, std::vector<starpu_data_handle_t>& h,
                      std::vector<int>& count) {
    const auto nx = static_cast<uint32_t>(bytes / sizeof(int));
    h.assign(static_cast<std::size_t>(ndata), nullptr);
    count.assign(static_cast<std::size_t>(ndata), 0);
    for (int i = 0; i < ndata; ++i) {
        starpu_vector_data_register(&h[static_cast<std::size_t>(i)], -1, 0, nx, sizeof(int));
        if (starpu_task_insert(&zero_cl, STARPU_W, h[static_cast<std::size_t>(i)], 0) != 0) {
            return -1;
        }
    }
    std::mt19937 rng(42);
    for (int k = 0; k < iters; ++k) {
        const auto j = static_cast<std::size_t>(rng() % static_cast<unsigned>(ndata));
        if (starpu_task_insert(&inc_cl, STARPU_RW, h[j], 0) != 0) {
            return -1;
        }
        ++count[j];
    }
    int on_disk = 0;
    for (int i = 0; i < ndata; ++i) {
        const auto u = static_cast<std::size_t>(i);
        if (starpu_task_insert(&check_cl, STARPU_R, h[u], STARPU_VALUE, &count[u], sizeof(int), 0) != 0) {
            return -1;
        }
    }
    starpu_task_wait_for_all();
    for (int i = 0; i < ndata; ++i) {
        on_disk += starpu_data_test_if_allocated_on_node(h[static_cast<std::size_t>(i)], 1) != 0 ? 1 : 0;
    }
    return on_disk;
}

void evict_with(starpu_disk_ops* ops, int ncpus) {
    scratch_dir dir;
    ASSERT_EQ(start(ncpus, "1"), 0);
    ASSERT_EQ(starpu_disk_register(ops, const_cast<char*>(dir.path.c_str()), STARPU_DISK_SIZE_MIN), 1);
    g_bad = 0;
    std::vector<starpu_data_handle_t> h;
    std::vector<int> count;
    const int on_disk = random_increments(32, 64 * 1024, 400, h, count);
    EXPECT_GT(on_disk, 0) << "2 MiB of data under a 1 MiB limit: some handles went to disk";
    EXPECT_EQ(g_bad.load(), 0) << "every value survived its trips to disk";
    for (auto x : h) {
        starpu_data_unregister(x);
    }
    starpu_shutdown();
    EXPECT_EQ(dir.files(), 0u) << "the objects eviction made are gone with their handles";
}

TEST(StarpuDisk, IdleHandlesAreEvictedUnderTheMemoryLimitAndReadBackUnistd) { evict_with(&starpu_disk_unistd_ops, 2); }
TEST(StarpuDisk, IdleHandlesAreEvictedUnderTheMemoryLimitAndReadBackStdio) { evict_with(&starpu_disk_stdio_ops, 2); }
TEST(StarpuDisk, IdleHandlesAreEvictedUnderTheMemoryLimitAndReadBackODirect) {
    evict_with(&starpu_disk_unistd_o_direct_ops, 1);
}

// ---- where a handle is read back -----------------------------------------------------------

/// The unistd backend, counting the reads of whole objects and where they ran: on a worker, on
/// the program's thread, elsewhere (a helper thread of the engine).
std::atomic<int> g_reads{0}, g_reads_on_workers{0}, g_reads_on_main{0};
pthread_t g_main_thread;
starpu_disk_ops g_counting_ops;
void count_read() {
    g_reads.fetch_add(1);
    const bool worker = starpu_worker_get_id() >= 0;
    g_reads_on_workers.fetch_add(worker ? 1 : 0);
    // Not a worker, on the program's kernel thread (VP 0's, where worker 0 runs too).
    g_reads_on_main.fetch_add(!worker && pthread_equal(pthread_self(), g_main_thread) ? 1 : 0);
}
int counting_read(void* base, void* obj, void* buf, off_t offset, size_t size) {
    count_read();
    return starpu_disk_unistd_ops.read(base, obj, buf, offset, size);
}
int counting_full_read(void* base, void* obj, void** ptr, size_t* size, unsigned node) {
    count_read();
    return starpu_disk_unistd_ops.full_read(base, obj, ptr, size, node);
}
/// Writes made on a helper thread (neither a worker nor the program's thread): write-behind.
std::atomic<int> g_writes_on_helpers{0};
void count_write() {
    const bool worker = starpu_worker_get_id() >= 0;
    g_writes_on_helpers.fetch_add(!worker && !pthread_equal(pthread_self(), g_main_thread) ? 1 : 0);
}
int counting_write(void* base, void* obj, const void* buf, off_t offset, size_t size) {
    count_write();
    return starpu_disk_unistd_ops.write(base, obj, buf, offset, size);
}
int counting_full_write(void* base, void* obj, void* ptr, size_t size) {
    count_write();
    return starpu_disk_unistd_ops.full_write(base, obj, ptr, size);
}

/// g_counting_ops: the unistd backend counting its reads and writes; the counters reset.
void set_up_counting_ops() {
    g_counting_ops = starpu_disk_unistd_ops;
    g_counting_ops.read = counting_read;
    g_counting_ops.full_read = counting_full_read;
    g_counting_ops.write = counting_write;
    g_counting_ops.full_write = counting_full_write;
    g_main_thread = pthread_self();
    g_reads = 0;
    g_reads_on_workers = 0;
    g_reads_on_main = 0;
    g_writes_on_helpers = 0;
}

/// n vectors of 64 Ki ints (2 MiB in all) under a 1 MiB limit, each holding `want`: true when
/// every element does (read with starpu_data_acquire, after the tasks).
bool all_equal(std::vector<starpu_data_handle_t>& h, int want) {
    bool ok = true;
    for (auto x : h) {
        starpu_data_acquire(x, STARPU_R);
        const int* p = reinterpret_cast<const int*>(starpu_data_get_local_ptr(x));
        for (unsigned i = 0; i < starpu_vector_get_nx(x) && ok; ++i) {
            ok = p[i] == want;
        }
        starpu_data_release(x);
    }
    return ok;
}

// A submission does not read an evicted handle back: a helper thread does, started by the
// submission of a task that reads it, or, without helpers (MPC_SCHED_IO_THREADS=0), the worker
// that runs that task, just before it; a task that only writes it needs no read at all; an
// acquisition reads it itself.
void read_back_where(bool helpers) {
    scratch_dir dir;
    set_up_counting_ops();
    if (!helpers) {
        setenv("MPC_SCHED_IO_THREADS", "0", 1);
    }
    ASSERT_EQ(start(2, "1"), 0);
    unsetenv("MPC_SCHED_IO_THREADS");
    ASSERT_EQ(starpu_disk_register(&g_counting_ops, const_cast<char*>(dir.path.c_str()), STARPU_DISK_SIZE_MIN), 1);
    std::vector<starpu_data_handle_t> h(8, nullptr);
    for (auto& x : h) {
        starpu_vector_data_register(&x, -1, 0, 64 * 1024, sizeof(int));
        ASSERT_EQ(starpu_task_insert(&zero_cl, STARPU_W, x, 0), 0);
    }
    g_reads = 0;
    g_reads_on_workers = 0;
    g_reads_on_main = 0;
    for (int pass = 0; pass < 2; ++pass) {
        for (auto x : h) {
            ASSERT_EQ(starpu_task_insert(&inc_cl, STARPU_RW, x, 0), 0);
        }
    }
    starpu_task_wait_for_all();
    const int task_reads = g_reads.load();
    EXPECT_GT(task_reads, 0) << "2 MiB under a 1 MiB limit: handles went to disk and came back";
    EXPECT_EQ(g_reads_on_main.load(), 0) << "no submission read a handle back itself";
    EXPECT_EQ(g_reads_on_workers.load(), helpers ? 0 : task_reads)
        << (helpers ? "the reads ran on helper threads" : "the reads ran on the workers");
    const int on_workers = g_reads_on_workers.load();
    EXPECT_TRUE(all_equal(h, 2));
    EXPECT_EQ(g_reads_on_workers.load(), on_workers) << "the acquisitions read on the program's thread";
    EXPECT_GT(g_reads_on_main.load(), 0) << "the acquisitions read on the program's thread";
    const int before_w = g_reads.load();
    for (auto x : h) {
        ASSERT_EQ(starpu_task_insert(&zero_cl, STARPU_W, x, 0), 0);
    }
    starpu_task_wait_for_all();
    EXPECT_EQ(g_reads.load(), before_w) << "write-only tasks read nothing back";
    for (auto x : h) {
        ASSERT_EQ(starpu_task_insert(&inc_cl, STARPU_RW, x, 0), 0);
    }
    starpu_task_wait_for_all();
    EXPECT_TRUE(all_equal(h, 1));
    // Write-behind: handles with a disk copy, dirty when their last user left near the limit,
    // were written out by helpers (none without them).
    if (helpers) {
        EXPECT_GT(g_writes_on_helpers.load(), 0) << "write-behind ran on helper threads";
    } else {
        EXPECT_EQ(g_writes_on_helpers.load(), 0);
    }
    for (auto x : h) {
        starpu_data_unregister(x);
    }
    starpu_shutdown();
    EXPECT_EQ(dir.files(), 0u);
}

TEST(StarpuDisk, EvictedHandlesAreReadBackByHelpersForTheTasksThatReadThem) { read_back_where(true); }
TEST(StarpuDisk, WithoutHelpersTheWorkerReadsAnEvictedHandleBack) { read_back_where(false); }

/// The index of the first of h not in main memory (evicted), or -1.
int first_evicted(const std::vector<starpu_data_handle_t>& h) {
    for (std::size_t i = 0; i < h.size(); ++i) {
        if (starpu_data_test_if_allocated_on_node(h[i], STARPU_MAIN_RAM) == 0) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

// starpu_data_prefetch_on_node to main memory reads an evicted handle back ahead of its use:
// on the program's thread when synchronous, on a helper when asynchronous (the task after it
// waits for the read and reads nothing more); an idle prefetch takes only free memory; a task's
// inputs are prefetched with starpu_prefetch_task_input_on_node.
TEST(StarpuDisk, PrefetchReadsAnEvictedHandleBackAheadOfItsUse) {
    scratch_dir dir;
    set_up_counting_ops();
    g_bad = 0;
    ASSERT_EQ(start(2, "1"), 0);
    ASSERT_EQ(starpu_disk_register(&g_counting_ops, const_cast<char*>(dir.path.c_str()), STARPU_DISK_SIZE_MIN), 1);
    std::vector<starpu_data_handle_t> h(8, nullptr);
    std::vector<int> val(h.size(), 1);
    for (auto& x : h) {
        starpu_vector_data_register(&x, -1, 0, 64 * 1024, sizeof(int));
        ASSERT_EQ(starpu_task_insert(&zero_cl, STARPU_W, x, 0), 0);
        ASSERT_EQ(starpu_task_insert(&inc_cl, STARPU_RW, x, 0), 0);
    }
    starpu_task_wait_for_all();
    EXPECT_EQ(starpu_data_prefetch_on_node(h[0], 99, 0), -EINVAL) << "no node 99";
    auto check = [&](int i) {
        ASSERT_EQ(starpu_task_insert(&check_cl, STARPU_R, h[static_cast<std::size_t>(i)], STARPU_VALUE,
                                     &val[static_cast<std::size_t>(i)], sizeof(int), 0),
                  0);
        starpu_task_wait_for_all();
    };

    // Synchronous: read here, now.
    int e = first_evicted(h);
    ASSERT_GE(e, 0) << "2 MiB under a 1 MiB limit: some handles are on disk";
    int reads = g_reads.load(), on_main = g_reads_on_main.load();
    EXPECT_EQ(starpu_data_prefetch_on_node(h[static_cast<std::size_t>(e)], STARPU_MAIN_RAM, 0), 0);
    EXPECT_EQ(g_reads.load(), reads + 1);
    EXPECT_EQ(g_reads_on_main.load(), on_main + 1) << "a synchronous prefetch reads on the caller's thread";
    EXPECT_EQ(starpu_data_test_if_allocated_on_node(h[static_cast<std::size_t>(e)], STARPU_MAIN_RAM), 1u);
    check(e);
    EXPECT_EQ(g_reads.load(), reads + 1) << "the task after the prefetch read nothing";

    // Asynchronous: read on a helper; the task waits for it.
    e = first_evicted(h);
    ASSERT_GE(e, 0);
    reads = g_reads.load();
    on_main = g_reads_on_main.load();
    EXPECT_EQ(starpu_data_prefetch_on_node(h[static_cast<std::size_t>(e)], STARPU_MAIN_RAM, 1), 0);
    ASSERT_EQ(starpu_task_insert(&inc_cl, STARPU_RW, h[static_cast<std::size_t>(e)], 0), 0);
    ++val[static_cast<std::size_t>(e)];
    check(e);
    EXPECT_EQ(g_reads.load(), reads + 1) << "one read: the prefetch's";
    EXPECT_EQ(g_reads_on_main.load(), on_main) << "an asynchronous prefetch reads on a helper";

    // A task's inputs.
    e = first_evicted(h);
    ASSERT_GE(e, 0);
    reads = g_reads.load();
    starpu_task* t = starpu_task_create();
    t->cl = &check_cl;
    t->handles[0] = h[static_cast<std::size_t>(e)];
    EXPECT_EQ(starpu_prefetch_task_input_on_node(t, STARPU_MAIN_RAM), 0);
    t->destroy = 0;
    starpu_task_destroy(t);
    check(e);
    EXPECT_EQ(g_reads.load(), reads + 1) << "the task's input was read once, by the prefetch";

    // Idle: only free memory. Fill it first with handles read back.
    for (auto x : h) {
        starpu_data_acquire(x, STARPU_R);
        starpu_data_release(x);
    }
    e = first_evicted(h);
    ASSERT_GE(e, 0);
    const starpu_ssize_t room = starpu_memory_get_available(STARPU_MAIN_RAM);
    reads = g_reads.load();
    EXPECT_EQ(starpu_data_idle_prefetch_on_node(h[static_cast<std::size_t>(e)], STARPU_MAIN_RAM, 0), 0);
    if (room < static_cast<starpu_ssize_t>(64 * 1024 * sizeof(int))) {
        EXPECT_EQ(g_reads.load(), reads) << "no free room: an idle prefetch evicts nothing and reads nothing";
        EXPECT_EQ(starpu_data_test_if_allocated_on_node(h[static_cast<std::size_t>(e)], STARPU_MAIN_RAM), 0u);
    } else {
        EXPECT_EQ(g_reads.load(), reads + 1);
    }
    for (std::size_t i = 0; i < h.size(); ++i) {
        check(static_cast<int>(i));
    }
    EXPECT_EQ(g_bad.load(), 0) << "every value survived";
    for (auto x : h) {
        starpu_data_unregister(x);
    }
    starpu_shutdown();
    EXPECT_EQ(dir.files(), 0u);
}

// Partitioning handles that went to disk (read back for the children), writing through the
// children while others are evicted and written behind, then unpartitioning: every value is
// the one computed, through further trips to disk.
TEST(StarpuDisk, PartitionedHandlesComeBackFromDiskAndKeepTheirChildrensWrites) {
    scratch_dir dir;
    ASSERT_EQ(start(2, "1"), 0);
    ASSERT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(dir.path.c_str()), STARPU_DISK_SIZE_MIN),
              1);
    g_bad = 0;
    std::vector<starpu_data_handle_t> h(8, nullptr);
    std::vector<int> val(h.size(), 0);
    for (auto& x : h) {
        starpu_vector_data_register(&x, -1, 0, 64 * 1024, sizeof(int));
        ASSERT_EQ(starpu_task_insert(&zero_cl, STARPU_W, x, 0), 0);
    }
    for (int round = 0; round < 3; ++round) {
        for (std::size_t i = 0; i < h.size(); ++i) {
            ASSERT_EQ(starpu_task_insert(&inc_cl, STARPU_RW, h[i], 0), 0);
            ++val[i];
        }
        for (std::size_t i = round % 2; i < h.size(); i += 2) {  // half of them, through 4 children
            starpu_data_filter f{};
            f.filter_func = starpu_vector_filter_block;
            f.nchildren = 4;
            starpu_data_partition(h[i], &f);
            for (unsigned c = 0; c < 4; ++c) {
                ASSERT_EQ(starpu_task_insert(&inc_cl, STARPU_RW, starpu_data_get_sub_data(h[i], 1, c), 0), 0);
            }
            starpu_data_unpartition(h[i], STARPU_MAIN_RAM);
            ++val[i];
        }
    }
    for (std::size_t i = 0; i < h.size(); ++i) {
        ASSERT_EQ(starpu_task_insert(&check_cl, STARPU_R, h[i], STARPU_VALUE, &val[i], sizeof(int), 0), 0);
    }
    starpu_task_wait_for_all();
    EXPECT_EQ(g_bad.load(), 0) << "every value survived partitioning and its trips to disk";
    for (auto x : h) {
        starpu_data_unregister(x);
    }
    starpu_shutdown();
    EXPECT_EQ(dir.files(), 0u);
}

// While starpu_data_unpartition waits for a child's task, the parent looks idle (no plan, no
// user of its own) but the child writes into its memory: another thread's memory pressure must
// evict other handles, not the parent (before the fix the parent was written out and freed
// under the running child, whose increments were lost).
std::atomic<int> g_child_phase{0};  // 1: the child task runs; 2: it may end
void held_inc_fn(void* buffers[], void* arg) {
    g_child_phase.store(1);
    for (int i = 0; i < 10000 && g_child_phase.load() != 2; ++i) {
        usleep(1000);  // at most 10 s: the test fails rather than hangs
    }
    inc_fn(buffers, arg);
}
starpu_codelet held_inc_cl = [] {
    starpu_codelet c{};
    c.cpu_funcs[0] = held_inc_fn;
    c.nbuffers = 1;
    c.modes[0] = STARPU_RW;
    return c;
}();

struct pressure_args {
    starpu_data_handle_t parent = nullptr;
    std::atomic<bool> unpartitioning{false};
    int parent_in_memory = -1;  // while the child runs, after the pressure
    int acquired = 0;
};

void* pressure_thread(void* p) {
    auto* a = static_cast<pressure_args*>(p);
    while (g_child_phase.load() != 1 || !a->unpartitioning.load()) {
        usleep(1000);
    }
    usleep(50 * 1000);  // the main thread is inside starpu_data_unpartition by now
    // 8 new vectors of 256 KiB under the 1 MiB limit: older idle handles must go to disk.
    std::vector<starpu_data_handle_t> q(8, nullptr);
    for (auto& x : q) {
        starpu_vector_data_register(&x, -1, 0, 64 * 1024, sizeof(int));
        if (starpu_data_acquire(x, STARPU_W) == 0) {
            ++a->acquired;
            std::memset(reinterpret_cast<void*>(starpu_vector_get_local_ptr(x)), 0, 64 * 1024 * sizeof(int));
            starpu_data_release(x);
        }
    }
    a->parent_in_memory = static_cast<int>(starpu_data_test_if_allocated_on_node(a->parent, STARPU_MAIN_RAM));
    g_child_phase.store(2);
    for (auto x : q) {
        starpu_data_unregister(x);
    }
    return nullptr;
}

TEST(StarpuDisk, AParentStaysInMemoryWhileUnpartitionWaitsForItsChildrensTasks) {
    scratch_dir dir;
    ASSERT_EQ(start(2, "1"), 0);
    ASSERT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(dir.path.c_str()), STARPU_DISK_SIZE_MIN),
              1);
    g_bad = 0;
    g_child_phase = 0;
    pressure_args a;
    starpu_vector_data_register(&a.parent, -1, 0, 64 * 1024, sizeof(int));
    ASSERT_EQ(starpu_task_insert(&zero_cl, STARPU_W, a.parent, 0), 0);
    starpu_task_wait_for_all();
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, nullptr, pressure_thread, &a), 0);
    starpu_data_filter f{};
    f.filter_func = starpu_vector_filter_block;
    f.nchildren = 4;
    starpu_data_partition(a.parent, &f);
    ASSERT_EQ(starpu_task_insert(&held_inc_cl, STARPU_RW, starpu_data_get_sub_data(a.parent, 1, 0), 0), 0);
    for (unsigned c = 1; c < 4; ++c) {
        ASSERT_EQ(starpu_task_insert(&inc_cl, STARPU_RW, starpu_data_get_sub_data(a.parent, 1, c), 0), 0);
    }
    a.unpartitioning = true;
    starpu_data_unpartition(a.parent, STARPU_MAIN_RAM);
    pthread_join(th, nullptr);
    EXPECT_EQ(a.acquired, 8) << "the other thread's handles found room (others were evicted)";
    EXPECT_EQ(a.parent_in_memory, 1) << "the parent was not evicted under its child's running task";
    int want = 1;
    ASSERT_EQ(starpu_task_insert(&check_cl, STARPU_R, a.parent, STARPU_VALUE, &want, sizeof(int), 0), 0);
    starpu_task_wait_for_all();
    EXPECT_EQ(g_bad.load(), 0) << "every child's increment is in the parent";
    starpu_data_unregister(a.parent);
    starpu_shutdown();
    EXPECT_EQ(dir.files(), 0u);
}

TEST(StarpuDisk, WithoutADiskTheSameWorkloadRunsOutOfMemory) {
    ASSERT_EQ(start(2, "1"), 0);
    std::vector<starpu_data_handle_t> h;
    std::vector<int> count;
    EXPECT_EQ(random_increments(32, 64 * 1024, 400, h, count), -1) << "a submission got -ENOMEM";
    starpu_task_wait_for_all();
    for (auto x : h) {
        if (x != nullptr) {
            starpu_data_unregister(x);
        }
    }
    starpu_shutdown();
}

TEST(StarpuDisk, TheApplicationsMemoryTheOocFlagOffAndAcquiredHandlesStayInMemory) {
    scratch_dir dir;
    ASSERT_EQ(start(1, "1"), 0);
    ASSERT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(dir.path.c_str()), -1), 1);
    constexpr uint32_t nx = 64 * 1024 / sizeof(int);
    std::vector<int> mine(nx, 7);
    starpu_data_handle_t app, keep, held;
    starpu_vector_data_register(&app, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(mine.data()), nx, sizeof(int));
    starpu_vector_data_register(&keep, -1, 0, nx, sizeof(int));
    starpu_data_set_ooc_flag(keep, 0);
    starpu_vector_data_register(&held, -1, 0, nx, sizeof(int));
    ASSERT_EQ(starpu_task_insert(&zero_cl, STARPU_W, keep, 0), 0);
    ASSERT_EQ(starpu_task_insert(&zero_cl, STARPU_W, held, 0), 0);
    ASSERT_EQ(starpu_data_acquire(held, STARPU_RW), 0);
    // 2 MiB more through other handles: they evict each other, never these three.
    std::vector<starpu_data_handle_t> h;
    std::vector<int> count;
    g_bad = 0;
    EXPECT_GT(random_increments(32, 64 * 1024, 200, h, count), 0);
    EXPECT_EQ(g_bad.load(), 0);
    EXPECT_EQ(starpu_data_test_if_allocated_on_node(keep, 1), 0u);
    EXPECT_EQ(starpu_data_test_if_allocated_on_node(keep, STARPU_MAIN_RAM), 1u);
    EXPECT_EQ(starpu_data_test_if_allocated_on_node(held, 1), 0u);
    EXPECT_EQ(starpu_data_test_if_allocated_on_node(held, STARPU_MAIN_RAM), 1u);
    EXPECT_EQ(starpu_data_test_if_allocated_on_node(app, 1), 0u);
    starpu_data_release(held);
    for (auto x : h) {
        starpu_data_unregister(x);
    }
    starpu_data_unregister(app);
    starpu_data_unregister(keep);
    starpu_data_unregister(held);
    starpu_shutdown();
}

TEST(StarpuDisk, WontUseGoesFirstAndImportantHandlesLast) {
    scratch_dir dir;
    ASSERT_EQ(start(1, "1"), 0);
    ASSERT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(dir.path.c_str()), -1), 1);
    constexpr uint32_t nx = 64 * 1024 / sizeof(int);
    std::vector<starpu_data_handle_t> h(18, nullptr);
    for (int i = 0; i < 16; ++i) {  // 16 x 64 KiB: the whole 1 MiB limit, oldest first
        starpu_vector_data_register(&h[static_cast<std::size_t>(i)], -1, 0, nx, sizeof(int));
        ASSERT_EQ(starpu_task_insert(&zero_cl, STARPU_W, h[static_cast<std::size_t>(i)], 0), 0);
        starpu_task_wait_for_all();
    }
    starpu_data_advise_as_important(h[0], 1);  // the oldest, but important
    starpu_data_wont_use(h[10]);
    auto on_disk = [&](int i) { return starpu_data_test_if_allocated_on_node(h[static_cast<std::size_t>(i)], 1) != 0; };
    starpu_vector_data_register(&h[16], -1, 0, nx, sizeof(int));
    ASSERT_EQ(starpu_task_insert(&zero_cl, STARPU_W, h[16], 0), 0);
    starpu_task_wait_for_all();
    EXPECT_TRUE(on_disk(10)) << "wont_use: evicted first";
    EXPECT_FALSE(on_disk(0));
    starpu_vector_data_register(&h[17], -1, 0, nx, sizeof(int));
    ASSERT_EQ(starpu_task_insert(&zero_cl, STARPU_W, h[17], 0), 0);
    starpu_task_wait_for_all();
    EXPECT_TRUE(on_disk(1)) << "then the least recently used";
    EXPECT_FALSE(on_disk(0)) << "the important one stays while others can go";
    for (auto x : h) {
        starpu_data_unregister(x);
    }
    starpu_shutdown();
}

TEST(StarpuDisk, AFullDiskLeavesTheLimitToFailCleanly) {
    // A disk of 16 MiB cannot take 40 MiB of evicted data under a 16 MiB limit: the submission
    // that finds no room anywhere gets -ENOMEM; nothing crashes and every handle unregisters.
    scratch_dir dir;
    ASSERT_EQ(start(1, "16"), 0);
    ASSERT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, const_cast<char*>(dir.path.c_str()), STARPU_DISK_SIZE_MIN),
              1);
    std::vector<starpu_data_handle_t> h(40, nullptr);
    int failed_at = -1;
    for (int i = 0; i < 40; ++i) {
        starpu_vector_data_register(&h[static_cast<std::size_t>(i)], -1, 0, 1024 * 1024 / sizeof(int), sizeof(int));
        if (starpu_task_insert(&zero_cl, STARPU_W, h[static_cast<std::size_t>(i)], 0) != 0) {
            failed_at = i;
            break;
        }
        starpu_task_wait_for_all();
    }
    EXPECT_GE(failed_at, 30) << "16 MiB in memory and 16 MiB on disk: 32 handles fit, minus rounding";
    EXPECT_LT(failed_at, 40);
    for (auto x : h) {
        if (x != nullptr) {
            starpu_data_unregister(x);
        }
    }
    starpu_shutdown();
}

TEST(StarpuDisk, SwapDiskFromTheEnvironment) {
    scratch_dir dir;
    const std::string swap = dir.path + "/swap";
    setenv("STARPU_DISK_SWAP", swap.c_str(), 1);
    setenv("STARPU_DISK_SWAP_BACKEND", "stdio", 1);
    setenv("STARPU_DISK_SWAP_SIZE", "64", 1);
    ASSERT_EQ(start(2, "1"), 0);
    unsetenv("STARPU_DISK_SWAP");
    unsetenv("STARPU_DISK_SWAP_BACKEND");
    unsetenv("STARPU_DISK_SWAP_SIZE");
    EXPECT_EQ(starpu_disk_swap_node, 1);
    EXPECT_EQ(starpu_memory_nodes_get_count(), 2u);
    std::vector<starpu_data_handle_t> h;
    std::vector<int> count;
    g_bad = 0;
    EXPECT_GT(random_increments(32, 64 * 1024, 300, h, count), 0);
    EXPECT_EQ(g_bad.load(), 0);
    for (auto x : h) {
        starpu_data_unregister(x);
    }
    starpu_shutdown();
    EXPECT_EQ(starpu_disk_swap_node, -1);
}

}  // namespace

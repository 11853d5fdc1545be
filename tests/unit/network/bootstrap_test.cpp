// mpc_run's own bootstrap (network/bootstrap.hpp, network/supervisor.hpp) with real processes:
// the supervisor forks them, they all-gather blobs and meet in barriers; then every way a job
// can end early: a process killed by a signal, an exit without finalizing, a non-zero exit, an
// abort with its code, a process that ignores SIGTERM, a supervisor that dies (its processes
// die with it), and bad input (a wrong hello, garbage on the socket, bad environment).
// Children report through their exit status only (no GoogleTest in a forked child).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "network/bootstrap.hpp"
#include "network/bootstrap_wire.hpp"
#include "network/supervisor.hpp"

namespace {

using namespace mpc::net;

/// The blob process i contributes in round r: sizes from 0 to 100 KiB, bytes from (i, r).
blob blob_of(int i, int r) {
    std::size_t n = (static_cast<std::size_t>(i) * 7919 + static_cast<std::size_t>(r) * 104729) % (100 << 10);
    if ((i + r) % 5 == 0) {
        n = 0;
    }
    blob b(n);
    for (std::size_t k = 0; k < n; ++k) {
        b[k] = static_cast<std::byte>((k * 31 + static_cast<std::size_t>(i) * 7 + static_cast<std::size_t>(r)) & 0xff);
    }
    return b;
}

/// A child's body: connect, then `body(bootstrap&)` returns the exit status.
template <class Body>
supervisor::child_main child(int count, Body body) {
    return [count, body](int index, int fd) {
        alarm(20);  // a bug must fail the test, not hang it
        auto b = connect_local_bootstrap(fd, index, count);
        if (!b) {
            _exit(90);
        }
        _exit(body(*b.value(), index));
    };
}

supervisor::options opts(int count, int per_proc = 2) {
    supervisor::options o;
    o.count = count;
    for (int i = 0; i < count; ++i) {
        o.first_rank.push_back(i * per_proc);
        o.rank_count.push_back(per_proc);
    }
    o.grace_ms = 300;
    return o;
}

int run_job(const supervisor::options& o, const supervisor::child_main& m, std::string& msg) {
    auto s = supervisor::start(o, m);
    if (!s) {
        ADD_FAILURE() << s.error().reason();
        return -1;
    }
    return s.value().run(msg);
}

TEST(Bootstrap, ProcessesAllGatherBlobsAndMeetInBarriers) {
    for (int count : {1, 2, 5}) {
        std::string msg;
        int st = run_job(opts(count),
                         child(count,
                               [count](bootstrap& b, int index) {
                                   if (b.index() != index || b.count() != count ||
                                       std::strcmp(b.name(), "local") != 0) {
                                       return 10;
                                   }
                                   for (int r = 0; r < 20; ++r) {
                                       std::vector<blob> all;
                                       if (!b.allgather(blob_of(index, r), all) ||
                                           all.size() != static_cast<std::size_t>(count)) {
                                           return 11;
                                       }
                                       for (int i = 0; i < count; ++i) {
                                           if (all[static_cast<std::size_t>(i)] != blob_of(i, r)) {
                                               return 12;
                                           }
                                       }
                                       if (!b.barrier()) {
                                           return 13;
                                       }
                                   }
                                   return b.finalize() ? 0 : 14;
                               }),
                         msg);
        EXPECT_EQ(st, 0) << count << " processes: " << msg;
        EXPECT_EQ(msg, "");
    }
}

TEST(Bootstrap, AProcessKilledBySignalEndsTheJobNamingItsRanks) {
    std::string msg;
    int st = run_job(opts(4),
                     child(4,
                           [](bootstrap& b, int index) {
                               if (!b.barrier()) {
                                   return 20;
                               }
                               if (index == 2) {
                                   ::raise(SIGKILL);
                               }
                               // The others wait in a barrier that cannot complete: it fails
                               // (or the supervisor's SIGTERM ends them first).
                               return b.barrier() ? 21 : 22;
                           }),
                     msg);
    EXPECT_EQ(st, 128 + SIGKILL);
    EXPECT_NE(msg.find("process 2 (ranks 4-5)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("killed by signal 9"), std::string::npos) << msg;
}

TEST(Bootstrap, ExitsWithoutFinalizingOrWithAStatusEndTheJob) {
    std::string msg;
    int st = run_job(opts(3, 1), child(3, [](bootstrap& b, int index) {
                         if (index == 1) {
                             return 0;  // no finalize: MPI_Finalize was not called
                         }
                         return b.barrier() ? 31 : 32;
                     }),
                     msg);
    EXPECT_EQ(st, 1);
    EXPECT_NE(msg.find("process 1 (rank 1)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("without finalizing"), std::string::npos) << msg;

    st = run_job(opts(3, 1), child(3, [](bootstrap& b, int index) {
                     if (index == 0) {
                         return 5;
                     }
                     return b.barrier() ? 33 : 34;
                 }),
                 msg);
    EXPECT_EQ(st, 5);
    EXPECT_NE(msg.find("process 0 (rank 0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("exited with status 5"), std::string::npos) << msg;
}

TEST(Bootstrap, AbortEndsEveryProcessWithItsCode) {
    std::string msg;
    auto s = supervisor::start(opts(3), child(3, [](bootstrap& b, int index) {
                                   if (index == 2) {
                                       b.abort(7, "bad input file");
                                       return 40;  // not reached: the supervisor kills this process too
                                   }
                                   for (;;) {
                                       ::pause();
                                   }
                               }));
    ASSERT_TRUE(s);
    std::vector<pid_t> pids = s.value().pids();
    int st = s.value().run(msg);
    EXPECT_EQ(st, 7);
    EXPECT_NE(msg.find("process 2 (ranks 4-5)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("MPI_Abort(7): bad input file"), std::string::npos) << msg;
    for (pid_t p : pids) {
        EXPECT_EQ(::waitpid(p, nullptr, WNOHANG), -1) << "every process was reaped";
    }
}

TEST(Bootstrap, AProcessThatIgnoresSigtermIsKilledAfterTheGrace) {
    std::string msg;
    auto s = supervisor::start(opts(2), child(2, [](bootstrap& b, int index) {
                                   if (index == 1) {
                                       ::signal(SIGTERM, SIG_IGN);
                                   }
                                   if (!b.barrier()) {  // process 1 ignores SIGTERM from here on
                                       return 50;
                                   }
                                   if (index == 0) {
                                       return 3;
                                   }
                                   for (;;) {
                                       ::pause();
                                   }
                               }));
    ASSERT_TRUE(s);
    int st = s.value().run(msg);
    EXPECT_EQ(st, 3) << "the first failure names the job's end";
    EXPECT_NE(msg.find("exited with status 3"), std::string::npos) << msg;
    int ws = s.value().wait_status(1);
    EXPECT_TRUE(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL) << "SIGKILL after the grace period";
}

TEST(Bootstrap, ProcessesDieWithTheirSupervisor) {
    // Orphans come back to this process (a subreaper), so that they can be counted.
    ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    int pipefd[2], ready[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    ASSERT_EQ(::pipe(ready), 0);
    pid_t sup = ::fork();
    ASSERT_GE(sup, 0);
    if (sup == 0) {
        alarm(20);
        int ready_w = ready[1];
        auto s = supervisor::start(opts(3), child(3, [ready_w](bootstrap&, int) {
                                       (void)!::write(ready_w, "r", 1);  // connected: the hello was answered
                                       for (;;) {
                                           ::pause();
                                       }
                                       return 0;
                                   }));
        if (!s) {
            _exit(1);
        }
        std::vector<pid_t> pids = s.value().pids();
        (void)!::write(pipefd[1], pids.data(), pids.size() * sizeof(pid_t));
        std::thread serve([&s] {
            std::string m;
            s.value().run(m);
        });
        char c;
        for (int i = 0; i < 3; ++i) {
            (void)!::read(ready[0], &c, 1);
        }
        ::raise(SIGKILL);  // the supervisor dies without ending its processes
    }
    ::close(pipefd[1]);
    ::close(ready[1]);
    pid_t pids[3] = {};
    ASSERT_EQ(::read(pipefd[0], pids, sizeof pids), static_cast<ssize_t>(sizeof pids));
    ::close(pipefd[0]);
    ::close(ready[0]);
    int ws = 0;
    ASSERT_EQ(::waitpid(sup, &ws, 0), sup);
    EXPECT_TRUE(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL) << "the supervisor got its processes connected";
    for (pid_t p : pids) {
        ASSERT_EQ(::waitpid(p, &ws, 0), p) << "an orphan outlived its supervisor";
        EXPECT_TRUE(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL) << "killed by PR_SET_PDEATHSIG";
    }
    ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(Bootstrap, BadInputIsAnErrorNotAHang) {
    // A process that claims another index: the supervisor refuses the hello, the process
    // cannot start, and its exit ends the job.
    std::string msg;
    int st = run_job(opts(2), [](int index, int fd) {
        alarm(20);
        auto b = connect_local_bootstrap(fd, 1 - index, 2);
        _exit(b ? 0 : 3);
    }, msg);
    EXPECT_EQ(st, 3) << msg;

    // Out-of-range arguments.
    EXPECT_FALSE(connect_local_bootstrap(-1, 0, 1));
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    EXPECT_FALSE(connect_local_bootstrap(::dup(sv[0]), 2, 2));

    // The other side is not a supervisor: garbage instead of the hello reply.
    const char garbage[64] = "this is not a bootstrap message, whatever it says";
    ASSERT_EQ(::write(sv[1], garbage, sizeof garbage), static_cast<ssize_t>(sizeof garbage));
    auto b = connect_local_bootstrap(sv[0], 0, 1);
    ASSERT_FALSE(b);
    EXPECT_NE(std::string(b.error().reason()).find("malformed"), std::string::npos) << b.error().reason();
    // The other side closes: an error, not a hang.
    ::close(sv[1]);
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ::close(sv[1]);
    EXPECT_FALSE(connect_local_bootstrap(sv[0], 0, 1));
}

TEST(Bootstrap, TheEnvironmentChoosesTheBootstrap) {
    ::unsetenv("MPC_BOOTSTRAP_FD");
    auto single = bootstrap_from_env();
    ASSERT_TRUE(single);
    EXPECT_STREQ(single.value()->name(), "single");
    EXPECT_EQ(single.value()->index(), 0);
    EXPECT_EQ(single.value()->count(), 1);
    std::vector<blob> all;
    ASSERT_TRUE(single.value()->allgather(blob_of(0, 1), all));
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0], blob_of(0, 1));
    EXPECT_TRUE(single.value()->barrier());

    ::setenv("MPC_BOOTSTRAP_FD", "twelve", 1);
    EXPECT_FALSE(bootstrap_from_env());
    ::setenv("MPC_BOOTSTRAP_FD", "9", 1);
    ::unsetenv("MPC_PROC_INDEX");
    EXPECT_FALSE(bootstrap_from_env()) << "an fd without MPC_PROC_INDEX/MPC_PROC_COUNT";
    ::unsetenv("MPC_BOOTSTRAP_FD");
}

}  // namespace

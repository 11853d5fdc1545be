// Fault reporting: each scenario runs in a child process (fault_child MODE, fork + exec, so the
// child starts single-threaded and clean); the test checks its exit status and that one line of
// its output names the fault and the ULT.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#ifndef MPC_FAULT_CHILD
#error "MPC_FAULT_CHILD must name the fault_child executable"
#endif

namespace {

struct child_result {
    int status = 0;          // as returned by waitpid
    bool timed_out = false;  // killed by us
    std::string output;      // stdout and stderr, interleaved

    bool exited_ok() const { return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0; }
    std::string describe() const {
        std::ostringstream os;
        if (timed_out) {
            os << "timed out (killed)";
        } else if (WIFEXITED(status)) {
            os << "exit status " << WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            os << "killed by signal " << WTERMSIG(status);
        }
        os << "; output:\n" << output;
        return os.str();
    }
};

/// Runs fault_child MODE with extra environment variables; kills it after `limit`.
child_result run_child(const char* mode, std::initializer_list<std::pair<const char*, const char*>> env = {},
                       std::chrono::seconds limit = std::chrono::seconds(40)) {
    child_result res;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        ADD_FAILURE() << "pipe2: " << std::strerror(errno);
        return res;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
        ADD_FAILURE() << "fork: " << std::strerror(errno);
        ::close(fds[0]);
        ::close(fds[1]);
        return res;
    }
    if (pid == 0) {
        ::dup2(fds[1], 1);
        ::dup2(fds[1], 2);
        for (const auto& [name, value] : env) {
            ::setenv(name, value, 1);
        }
        ::execl(MPC_FAULT_CHILD, MPC_FAULT_CHILD, mode, static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(fds[1]);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char buf[4096];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            ::kill(pid, SIGKILL);
            res.timed_out = true;
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            continue;
        }
        ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;  // EOF: the child (and everything that had the pipe) is gone
        }
        res.output.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    while (::waitpid(pid, &res.status, 0) < 0 && errno == EINTR) {
    }
    return res;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

/// True when one line of `out` contains every one of `needles` (case-insensitive).
bool one_line_has(const std::string& out, std::initializer_list<const char*> needles) {
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        std::string l = lower(line);
        bool all = true;
        for (const char* n : needles) {
            if (l.find(lower(n)) == std::string::npos) {
                all = false;
                break;
            }
        }
        if (all) {
            return true;
        }
    }
    return false;
}

int count_lines_with(const std::string& out, const char* needle) {
    std::istringstream in(out);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        n += lower(line).find(lower(needle)) != std::string::npos;
    }
    return n;
}

TEST(Fault, ControlRunExitsCleanly) {
    child_result r = run_child("ok");
    EXPECT_TRUE(r.exited_ok()) << r.describe();
    EXPECT_NE(r.output.find("finished normally"), std::string::npos) << r.describe();
    EXPECT_EQ(count_lines_with(r.output, "fatal"), 0) << r.describe();
}

TEST(Fault, UnknownModeIsAnError) {
    child_result r = run_child("no-such-mode");
    EXPECT_FALSE(r.exited_ok()) << r.describe();
}

TEST(Fault, StackOverflowIsReportedWithTheUltName) {
    child_result r = run_child("overflow");
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_FALSE(r.timed_out) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"stack overflow", "deep-recursor"})) << r.describe();
    EXPECT_EQ(count_lines_with(r.output, "stack overflow"), 1) << "one line, not several:\n" << r.describe();
    EXPECT_EQ(r.output.find("finished normally"), std::string::npos) << r.describe();
}

TEST(Fault, StackOverflowOnAnotherVp) {
    child_result r = run_child("overflow-vp1");
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_FALSE(r.timed_out) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"stack overflow", "deep-recursor"})) << r.describe();
}

TEST(Fault, SegmentationFaultNamesTheAddress) {
    child_result r = run_child("segv");
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_FALSE(r.timed_out) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"segmentation fault", "0x4000dead0000", "bad-pointer"})) << r.describe();
    EXPECT_EQ(count_lines_with(r.output, "stack overflow"), 0) << "a wild pointer is not an overflow\n"
                                                                << r.describe();
}

TEST(Fault, SegmentationFaultOnAnotherVp) {
    child_result r = run_child("segv-vp1");
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_FALSE(r.timed_out) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"segmentation fault", "0x4000dead0000", "bad-pointer"})) << r.describe();
}

TEST(Fault, CanaryCatchesOverflowOfGuardlessStack) {
    child_result r = run_child("canary");
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_FALSE(r.timed_out) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"stack overflow", "canary-victim"})) << r.describe();
    EXPECT_EQ(r.output.find("not a guard-less one"), std::string::npos) << r.describe();
    EXPECT_EQ(r.output.find("survived the yield"), std::string::npos)
        << "the overflow must be caught when the ULT is switched out\n"
        << r.describe();
}

TEST(Fault, DeadlockIsReportedWithTheBlockedUlts) {
    child_result r = run_child("deadlock", {{"MPC_SCHED_DEADLOCK_TIMEOUT", "1"}});
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_FALSE(r.timed_out) << "the deadlock was not detected\n" << r.describe();
    EXPECT_NE(lower(r.output).find("deadlock"), std::string::npos) << r.describe();
    EXPECT_NE(r.output.find("locker-A"), std::string::npos) << r.describe();
    EXPECT_NE(r.output.find("locker-B"), std::string::npos) << r.describe();
    EXPECT_EQ(r.output.find("deadlock not detected"), std::string::npos) << r.describe();
}

TEST(Fault, DeadlockReportShowsTheWaitReason) {
    child_result r = run_child("deadlock", {{"MPC_SCHED_DEADLOCK_TIMEOUT", "1"}});
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"waiter-C", "custom reason 42"})) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"locker-A", "mutex"})) << r.describe();
}

TEST(Fault, DeadlockOfThePrimaryUltAlone) {
    child_result r = run_child("deadlock-primary", {{"MPC_SCHED_DEADLOCK_TIMEOUT", "1"}});
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_FALSE(r.timed_out) << "the deadlock was not detected\n" << r.describe();
    EXPECT_NE(lower(r.output).find("deadlock"), std::string::npos) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"primary", "semaphore"})) << r.describe();
}

TEST(Fault, NoDeadlockReportedWhileUltsSleepOrPoll) {
    child_result r = run_child("no-false-deadlock", {{"MPC_SCHED_DEADLOCK_TIMEOUT", "1"}});
    EXPECT_TRUE(r.exited_ok()) << r.describe();
    EXPECT_EQ(lower(r.output).find("deadlock"), std::string::npos) << r.describe();
    EXPECT_NE(r.output.find("finished normally"), std::string::npos) << r.describe();
}

TEST(Fault, FinalizeAfterThePrimaryUltMoved) {
    // finalize() called by the primary ULT while it runs on VP 1: it must either work or
    // return an error, not kill the process.
    child_result r = run_child("finalize-moved");
    EXPECT_TRUE(r.exited_ok()) << r.describe();
    EXPECT_NE(r.output.find("finished normally"), std::string::npos) << r.describe();
}

TEST(Fault, BlockingOutsideAUltIsFatalAndSaysSo) {
    child_result r = run_child("lock-outside-ult");
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_FALSE(r.timed_out) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"block", "ult"})) << r.describe();
    EXPECT_EQ(r.output.find("got the lock"), std::string::npos) << r.describe();
}

TEST(Fault, ExitFromThePrimaryUltIsFatalAndSaysSo) {
    child_result r = run_child("exit-primary");
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_FALSE(r.timed_out) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"exit", "primary"})) << r.describe();
}

TEST(Fault, UncaughtExceptionIsReported) {
    child_result r = run_child("exception");
    EXPECT_FALSE(r.exited_ok()) << r.describe();
    EXPECT_FALSE(r.timed_out) << r.describe();
    EXPECT_TRUE(one_line_has(r.output, {"exception", "thrower"})) << r.describe();
    EXPECT_NE(r.output.find("boom-42"), std::string::npos) << "the exception's what() helps\n" << r.describe();
}

}  // namespace

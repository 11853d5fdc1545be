// Uses the installed engine headers and library: 100 ULTs over 2 VPs add into a counter.
#include <atomic>
#include <cstdio>
#include <vector>

#include "scheduler/sched.hpp"
#include "scheduler/sync.hpp"

int main() {
    if (!mpc::sched::init({.nr_vps = 2}).ok()) {
        return 1;
    }
    mpc::sched::mutex m;
    long total = 0;
    std::vector<mpc::sched::ult*> us;
    for (int i = 1; i <= 100; ++i) {
        auto u = mpc::sched::spawn([&m, &total, i] {
            mpc::sched::yield();
            m.lock();
            total += i;
            m.unlock();
        });
        if (!u.ok()) {
            return 1;
        }
        us.push_back(*u);
    }
    for (auto* u : us) {
        if (!mpc::sched::join(u).ok()) {
            return 1;
        }
    }
    if (!mpc::sched::finalize().ok() || total != 5050) {
        std::printf("total %ld, expected 5050\n", total);
        return 1;
    }
    std::printf("consumer OK\n");
    return 0;
}

/// \file
/// ULT-local storage: a process-wide key table and a lazily allocated value array per ULT.

#include <atomic>
#include <cstdlib>

#include "scheduler/detail.hpp"

namespace mpc::sched {
namespace {
constexpr int max_keys = 256;
using dtor_fn = void (*)(void*);
std::atomic<bool> key_used[max_keys];
std::atomic<dtor_fn> key_dtor[max_keys];
/// Bumped when a key is deleted, so that values set under an older incarnation of the same
/// key number read as unset.
std::atomic<std::uint32_t> key_gen[max_keys];

struct slot {
    void* value;
    std::uint32_t gen;
};

slot* slots_of(ult* u) noexcept { return reinterpret_cast<slot*>(u->keys); }

bool live_key(key k) noexcept { return k >= 0 && k < max_keys && key_used[k].load(std::memory_order_acquire); }
}  // namespace

result<key> key_create(void (*destructor)(void*)) noexcept {
    for (int k = 0; k < max_keys; ++k) {
        bool expected = false;
        if (key_used[k].compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
            key_dtor[k].store(destructor, std::memory_order_release);
            return k;
        }
    }
    return status(errc::busy, "all 256 ULT-local keys are in use");
}

status key_delete(key k) noexcept {
    if (k < 0 || k >= max_keys || !key_used[k].load()) {
        return {errc::invalid_argument, "no such ULT-local key"};
    }
    key_dtor[k].store(nullptr, std::memory_order_release);
    key_gen[k].fetch_add(1, std::memory_order_acq_rel);
    key_used[k].store(false, std::memory_order_release);
    return {};
}

status set_specific(key k, void* value) noexcept {
    if (!initialized()) {
        return {errc::not_initialized, "set_specific() before init()"};
    }
    ult* u = self();
    if (u == nullptr) {
        return {errc::not_in_ult, "set_specific() outside a ULT"};
    }
    if (!live_key(k)) {
        return {errc::invalid_argument, "no such ULT-local key"};
    }
    if (u->keys == nullptr) {
        u->keys = static_cast<void**>(std::calloc(max_keys, sizeof(slot)));
        if (u->keys == nullptr) {
            return {errc::no_memory, "ULT-local key table"};
        }
    }
    slots_of(u)[k] = {value, key_gen[k].load(std::memory_order_acquire)};
    return {};
}

void* get_specific(key k) noexcept {
    ult* u = self();
    if (u == nullptr || u->keys == nullptr || !live_key(k)) {
        return nullptr;
    }
    const slot& s = slots_of(u)[k];
    return s.gen == key_gen[k].load(std::memory_order_acquire) ? s.value : nullptr;
}

namespace detail {

void run_key_destructors(ult* u) noexcept {
    if (u->keys == nullptr) {
        return;
    }
    // As POSIX does for threads: repeat while destructors set new values (at most 4 rounds).
    for (int round = 0; round < 4; ++round) {
        bool any = false;
        for (int k = 0; k < max_keys; ++k) {
            slot& s = slots_of(u)[k];
            void* v = s.value;
            dtor_fn d = key_dtor[k].load(std::memory_order_acquire);
            bool current = live_key(k) && s.gen == key_gen[k].load(std::memory_order_acquire);
            s.value = nullptr;
            if (v != nullptr && d != nullptr && current) {
                d(v);
                any = true;
            }
        }
        if (!any) {
            break;
        }
    }
}

void free_keys(ult* u) noexcept {
    std::free(u->keys);
    u->keys = nullptr;
}

}  // namespace detail
}  // namespace mpc::sched

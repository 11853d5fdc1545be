/// \file
/// small_list<T, N>: a growing array of trivially copyable T whose first N elements live inline
/// (no allocation for the common small case: a task's successors, an insert call's buffers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace mpc::tg::detail {

template <class T, std::uint32_t N>
class small_list {
    static_assert(std::is_trivially_copyable_v<T> && N > 0);

public:
    small_list() noexcept = default;
    small_list(const small_list&) = delete;
    small_list& operator=(const small_list&) = delete;
    ~small_list() {
        if (v_ != inline_) {
            std::free(v_);
        }
    }
    /// False when no memory is left for a longer list (nothing changed then).
    [[nodiscard]] bool push_back(const T& x) noexcept {
        if (n_ == cap_) {
            const std::uint32_t cap = cap_ * 2;
            auto* v = static_cast<T*>(std::malloc(sizeof(T) * cap));
            if (v == nullptr) {
                return false;
            }
            std::memcpy(static_cast<void*>(v), v_, sizeof(T) * n_);
            if (v_ != inline_) {
                std::free(v_);
            }
            v_ = v;
            cap_ = cap;
        }
        v_[n_++] = x;
        return true;
    }
    const T* begin() const noexcept { return v_; }
    const T* end() const noexcept { return v_ + n_; }
    const T& operator[](std::size_t i) const noexcept { return v_[i]; }
    std::size_t size() const noexcept { return n_; }

private:
    T inline_[N] = {};
    T* v_ = inline_;
    std::uint32_t n_ = 0;
    std::uint32_t cap_ = N;
};

}  // namespace mpc::tg::detail

/// \file
/// mpc::status and mpc::result<T>: the error currency of every internal call.
/// A status is an error code plus an optional static reason; it never allocates, so it can be
/// returned from a fault path or a context switch.
#pragma once

#include <cerrno>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

namespace mpc {

/// Error codes of the runtime. mpi_compat maps each to an MPI error class.
enum class errc : std::uint8_t {
    ok = 0,
    invalid_argument,  ///< a caller passed a value outside the documented domain
    no_memory,         ///< an allocation or mapping failed
    busy,              ///< the object is in use (e.g. joining a detached ULT)
    not_initialized,   ///< the runtime (or the layer) is not started
    already_initialized,
    not_in_ult,        ///< a call that may block was made from outside a ULT
    unsupported,       ///< the operation is not provided by this component
    system,            ///< a system call failed; sys_errno() holds errno
    deadlock,          ///< the runtime found that nothing can make progress
    internal,
};

/// Text of an error code ("invalid argument", ...); never null.
const char* to_string(errc e) noexcept;

/// The result of an operation that returns nothing: ok, or a code with a static reason.
class [[nodiscard]] status {
public:
    constexpr status() noexcept = default;
    constexpr status(errc code, const char* reason = nullptr, int sys_errno = 0) noexcept
        : code_(code), errno_(sys_errno), reason_(reason) {}

    static status from_errno(const char* reason, int e = errno) noexcept { return {errc::system, reason, e}; }

    constexpr bool ok() const noexcept { return code_ == errc::ok; }
    constexpr explicit operator bool() const noexcept { return ok(); }
    constexpr errc code() const noexcept { return code_; }
    constexpr int sys_errno() const noexcept { return errno_; }
    /// Static text saying what failed ("mmap of a ULT stack"), or the code's text.
    const char* reason() const noexcept { return reason_ ? reason_ : to_string(code_); }
    /// Makes a "not looked at" status explicit.
    void ignore() const noexcept {}

private:
    errc code_ = errc::ok;
    int errno_ = 0;
    const char* reason_ = nullptr;
};

/// A value or a status; a small std::expected for C++20.
template <class T>
class [[nodiscard]] result {
    static_assert(!std::is_reference_v<T>, "result<T&> is not supported");

public:
    result(T value) noexcept(std::is_nothrow_move_constructible_v<T>) : has_(true) {  // NOLINT: implicit by design
        new (&storage_) T(std::move(value));
    }
    result(status st) noexcept : has_(false), status_(st) {}  // NOLINT: implicit by design
    result(const result&) = delete;
    result& operator=(const result&) = delete;
    result(result&& o) noexcept(std::is_nothrow_move_constructible_v<T>) : has_(o.has_), status_(o.status_) {
        if (has_) {
            new (&storage_) T(std::move(*o.ptr()));
        }
    }
    ~result() {
        if (has_) {
            ptr()->~T();
        }
    }

    bool ok() const noexcept { return has_; }
    explicit operator bool() const noexcept { return has_; }
    const status& error() const noexcept { return status_; }
    T& value() & noexcept { return *ptr(); }
    T&& value() && noexcept { return std::move(*ptr()); }
    T& operator*() noexcept { return *ptr(); }
    T* operator->() noexcept { return ptr(); }

private:
    T* ptr() noexcept { return std::launder(reinterpret_cast<T*>(&storage_)); }
    bool has_;
    status status_{};
    alignas(T) unsigned char storage_[sizeof(T)];
};

}  // namespace mpc

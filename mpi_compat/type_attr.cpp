/// \file
/// Attribute caching on datatypes (MPI 3.1 section 6.7.4), designed as attr.cpp's caching on
/// communicators.
///
/// Keyvals live in a process-wide table of their own (a communicator keyval is not a datatype
/// keyval: MPI_ERR_KEYVAL); their handles are never reused. Each attribute holds a shared_ptr to
/// its keyval, so callbacks still run after MPI_Type_free_keyval. Callbacks run without any
/// lock held: they may call MPI.
///
/// Datatypes are process-wide objects shared by the ranks (datatype/handles.hpp), so their
/// attributes are in one process-wide map under a mutex, keyed by owner (owner_of()): a derived
/// type is one MPI object, made by one rank, and its handle owns its attributes; a predefined
/// type (or an MPI_Type_create_f90_* type) is one object of the process here but one per rank in
/// MPI's model, so each rank has its own attributes on it. MPI_Type_dup and MPI_Type_free read
/// one atomic counter and take no lock while no datatype has attributes.
///
/// Names follow the same model: a derived type's name lives on its object (datatype::set_name);
/// the names that ranks give predefined and f90 types are in attr_state::names, keyed by owner
/// (rank and handle). Those handles are never freed, so the entries last as long as the process.

#include "mpi_compat/type_attr.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpi_compat/attr.hpp"
#include "mpi_compat/binding.hpp"
#include "mpi_compat/datatype/handles.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/runtime.hpp"

namespace mpc::mpi {
namespace {

struct type_keyval {
    MPI_Type_copy_attr_function* copy_fn = nullptr;
    MPI_Type_delete_attr_function* delete_fn = nullptr;
    void* extra_state = nullptr;
    keyval_release release;  ///< set by create_type_keyval
};

/// One attribute; `key` keeps the keyval's callbacks alive after MPI_Type_free_keyval.
struct type_attr {
    int keyval = 0;
    void* value = nullptr;
    std::shared_ptr<const type_keyval> key;
};

/// Handles: keyval_base + n, n >= 1, never reused (communicator keyvals are 0x25000000 + n).
constexpr int keyval_base = 0x27000000;

struct attr_state {
    std::mutex lock;
    std::unordered_map<int, std::shared_ptr<const type_keyval>> keyvals;  ///< live keyvals
    int next = 1;
    /// Attributes by owner, in the order they were set; no empty lists.
    std::unordered_map<std::uint64_t, std::vector<type_attr>> attrs;
    /// attrs.size(), for the lock-free test of MPI_Type_dup and MPI_Type_free.
    std::atomic<std::size_t> owners{0};
    /// Names that ranks gave predefined and f90 types, by owner (owner_of()).
    std::unordered_map<std::uint64_t, std::string> names;
};

attr_state& state() {
    static attr_state* const s = new attr_state;  // leaked: static destructors may still free types
    return *s;
}

/// Whose attributes a call on handle h (naming t) reaches: the handle of a derived type; for a
/// predefined or f90 type, the handle and the calling rank (world rank + 1; 0 outside ranks).
std::uint64_t owner_of(MPI_Datatype h, const datatype& t) noexcept {
    std::uint64_t owner = static_cast<std::uint32_t>(h);
    if (t.is_predefined()) {
        const task* self = current();
        owner |= static_cast<std::uint64_t>(self != nullptr ? self->world_rank + 1 : 0) << 32;
    }
    return owner;
}

/// The owner of a derived handle's attributes.
std::uint64_t derived_owner(MPI_Datatype h) noexcept { return static_cast<std::uint32_t>(h); }

std::shared_ptr<const type_keyval> find_keyval(int kv) {
    attr_state& s = state();
    std::lock_guard<std::mutex> g(s.lock);
    auto it = s.keyvals.find(kv);
    return it != s.keyvals.end() ? it->second : nullptr;
}

/// The attribute `kv` of `owner`, or null (under the lock).
type_attr* find_attr(attr_state& s, std::uint64_t owner, int kv) noexcept {
    auto it = s.attrs.find(owner);
    if (it == s.attrs.end()) {
        return nullptr;
    }
    for (type_attr& a : it->second) {
        if (a.keyval == kv) {
            return &a;
        }
    }
    return nullptr;
}

/// Appends an attribute to `owner`'s list (under the lock); false when out of memory.
bool add_attr(attr_state& s, std::uint64_t owner, type_attr a) noexcept {
    try {
        if (auto it = s.attrs.find(owner); it != s.attrs.end()) {
            it->second.push_back(std::move(a));
            return true;
        }
        std::vector<type_attr> list;
        list.push_back(std::move(a));
        s.attrs.emplace(owner, std::move(list));
    } catch (const std::bad_alloc&) {
        return false;
    }
    s.owners.store(s.attrs.size(), std::memory_order_release);
    return true;
}

/// Removes the attribute `kv` of `owner`, if any (under the lock).
void erase_attr(attr_state& s, std::uint64_t owner, int kv) noexcept {
    auto it = s.attrs.find(owner);
    if (it == s.attrs.end()) {
        return;
    }
    std::vector<type_attr>& list = it->second;
    for (auto a = list.begin(); a != list.end(); ++a) {
        if (a->keyval == kv) {
            list.erase(a);
            break;
        }
    }
    if (list.empty()) {
        s.attrs.erase(it);
        s.owners.store(s.attrs.size(), std::memory_order_release);
    }
}

/// Drops every attribute of `owner` without calling a callback.
void forget_all(attr_state& s, std::uint64_t owner) noexcept {
    std::lock_guard<std::mutex> g(s.lock);
    if (s.attrs.erase(owner) != 0) {
        s.owners.store(s.attrs.size(), std::memory_order_release);
    }
}

int call_delete(MPI_Datatype h, const type_attr& a) noexcept {
    MPI_Type_delete_attr_function* fn = a.key->delete_fn;
    return fn != nullptr ? fn(h, a.keyval, a.value, a.key->extra_state) : MPI_SUCCESS;
}

/// Deletes all of `owner`'s attributes (those of handle h), last set first; stops at a
/// failing callback and returns its code.
int delete_all(attr_state& s, MPI_Datatype h, std::uint64_t owner) noexcept {
    for (;;) {
        type_attr last;
        {
            std::lock_guard<std::mutex> g(s.lock);
            auto it = s.attrs.find(owner);
            if (it == s.attrs.end()) {
                return MPI_SUCCESS;
            }
            last = it->second.back();
        }
        if (int rc = call_delete(h, last); rc != MPI_SUCCESS) {
            return rc;
        }
        std::lock_guard<std::mutex> g(s.lock);
        erase_attr(s, owner, last.keyval);
    }
}

}  // namespace

int on_type_dup(MPI_Datatype from, MPI_Datatype newtype) noexcept {
    attr_state& s = state();
    if (s.owners.load(std::memory_order_acquire) == 0) {
        return MPI_SUCCESS;
    }
    const datatype* t = datatype_from_handle(from);
    if (t == nullptr) {
        return MPI_SUCCESS;
    }
    std::vector<type_attr> src;  // a copy: callbacks may change the list
    try {
        std::lock_guard<std::mutex> g(s.lock);
        auto it = s.attrs.find(owner_of(from, *t));
        if (it == s.attrs.end()) {
            return MPI_SUCCESS;
        }
        src = it->second;
    } catch (const std::bad_alloc&) {
        return MPI_ERR_NO_MEM;
    }
    const std::uint64_t to = derived_owner(newtype);
    for (const type_attr& a : src) {
        void* out = nullptr;
        int flag = 0;
        int rc = a.key->copy_fn != nullptr ? a.key->copy_fn(from, a.keyval, a.key->extra_state, a.value, &out, &flag)
                                           : MPI_SUCCESS;
        if (rc == MPI_SUCCESS && flag != 0) {
            std::lock_guard<std::mutex> g(s.lock);
            rc = add_attr(s, to, type_attr{a.keyval, out, a.key}) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
        }
        if (rc != MPI_SUCCESS) {
            (void)delete_all(s, newtype, to);  // best effort: the copy failure is what gets reported
            forget_all(s, to);                 // the handle is about to be freed, and reused later
            return rc;
        }
    }
    return MPI_SUCCESS;
}

int on_type_free(MPI_Datatype h) noexcept {
    attr_state& s = state();
    if (s.owners.load(std::memory_order_acquire) == 0) {
        return MPI_SUCCESS;
    }
    return delete_all(s, h, derived_owner(h));
}

int set_type_name(MPI_Datatype h, const datatype& t, const char* name) noexcept {
    if (!t.is_predefined()) {
        t.set_name(name);
        return MPI_SUCCESS;
    }
    attr_state& s = state();
    try {
        std::string n(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
        std::lock_guard<std::mutex> g(s.lock);
        s.names[owner_of(h, t)] = std::move(n);
    } catch (const std::bad_alloc&) {
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

int get_type_name(MPI_Datatype h, const datatype& t, char* buf) noexcept {
    if (t.is_predefined()) {
        attr_state& s = state();
        std::lock_guard<std::mutex> g(s.lock);
        if (auto it = s.names.find(owner_of(h, t)); it != s.names.end()) {
            std::memcpy(buf, it->second.c_str(), it->second.size() + 1);
            return static_cast<int>(it->second.size());
        }
    }
    return t.get_name(buf);
}

}  // namespace mpc::mpi

using namespace mpc::mpi;

namespace {

int create_keyval(MPI_Type_copy_attr_function* copy_fn, MPI_Type_delete_attr_function* delete_fn, int* keyval,
                  void* extra, void (*release)(void*) = nullptr) noexcept {
    static constexpr const char* call = "MPI_Type_create_keyval";
    if (keyval == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, call, "null keyval pointer");
    }
    attr_state& s = state();
    try {
        auto k = std::make_shared<type_keyval>(copy_fn, delete_fn, extra);
        std::unique_lock<std::mutex> g(s.lock);
        if (s.next >= 0xffffff) {
            g.unlock();
            return raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "no datatype keyval left");
        }
        k->release.set(extra, release);  // only once the keyval exists: on failure the caller keeps extra
        const int h = keyval_base + s.next;
        s.keyvals.emplace(h, std::move(k));
        ++s.next;
        *keyval = h;
    } catch (const std::bad_alloc&) {
        return raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    }
    return MPI_SUCCESS;
}

int free_keyval(int* keyval) noexcept {
    static constexpr const char* call = "MPI_Type_free_keyval";
    if (keyval == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, call, "null keyval pointer");
    }
    attr_state& s = state();
    {
        std::lock_guard<std::mutex> g(s.lock);
        if (s.keyvals.erase(*keyval) == 1) {
            *keyval = MPI_KEYVAL_INVALID;
            return MPI_SUCCESS;
        }
    }
    return raise(MPI_COMM_WORLD, MPI_ERR_KEYVAL, call, "invalid datatype keyval %#x", *keyval);
}

int set_attr(MPI_Datatype h, int kv, void* value) noexcept {
    static constexpr const char* call = "MPI_Type_set_attr";
    const datatype* t = datatype_from_handle(h);
    if (t == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, call, "invalid datatype %#x", h);
    }
    std::shared_ptr<const type_keyval> k = find_keyval(kv);
    if (k == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_KEYVAL, call, "invalid datatype keyval %#x", kv);
    }
    const std::uint64_t owner = owner_of(h, *t);
    attr_state& s = state();
    std::unique_lock<std::mutex> g(s.lock);
    if (const type_attr* a = find_attr(s, owner, kv); a != nullptr) {
        const type_attr old = *a;
        g.unlock();
        if (int rc = call_delete(h, old); rc != MPI_SUCCESS) {
            return raise(MPI_COMM_WORLD, rc, call, "the delete callback of the old value returned %d", rc);
        }
        g.lock();
        if (type_attr* again = find_attr(s, owner, kv); again != nullptr) {
            again->value = value;
            return MPI_SUCCESS;
        }
    }
    if (!add_attr(s, owner, type_attr{kv, value, std::move(k)})) {
        g.unlock();
        return raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    }
    return MPI_SUCCESS;
}

int get_attr(MPI_Datatype h, int kv, void* value, int* flag) noexcept {
    static constexpr const char* call = "MPI_Type_get_attr";
    const datatype* t = datatype_from_handle(h);
    if (t == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, call, "invalid datatype %#x", h);
    }
    if (value == nullptr || flag == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_ARG, call, "null attribute_val or flag pointer");
    }
    attr_state& s = state();
    std::unique_lock<std::mutex> g(s.lock);
    const type_attr* a = find_attr(s, owner_of(h, *t), kv);
    if (a == nullptr) {  // a set attribute keeps its keyval alive after MPI_Type_free_keyval
        g.unlock();
        if (find_keyval(kv) == nullptr) {
            return raise(MPI_COMM_WORLD, MPI_ERR_KEYVAL, call, "invalid datatype keyval %#x", kv);
        }
        *flag = 0;
        return MPI_SUCCESS;
    }
    *flag = 1;
    *static_cast<void**>(value) = a->value;
    return MPI_SUCCESS;
}

int delete_attr(MPI_Datatype h, int kv) noexcept {
    static constexpr const char* call = "MPI_Type_delete_attr";
    const datatype* t = datatype_from_handle(h);
    if (t == nullptr) {
        return raise(MPI_COMM_WORLD, MPI_ERR_TYPE, call, "invalid datatype %#x", h);
    }
    const std::uint64_t owner = owner_of(h, *t);
    attr_state& s = state();
    type_attr old;
    {
        std::unique_lock<std::mutex> g(s.lock);
        const type_attr* a = find_attr(s, owner, kv);
        if (a == nullptr) {  // a set attribute keeps its keyval alive after MPI_Type_free_keyval
            g.unlock();
            if (find_keyval(kv) == nullptr) {
                return raise(MPI_COMM_WORLD, MPI_ERR_KEYVAL, call, "invalid datatype keyval %#x", kv);
            }
            return MPI_SUCCESS;  // nothing to delete
        }
        old = *a;
    }
    if (int rc = call_delete(h, old); rc != MPI_SUCCESS) {
        return raise(MPI_COMM_WORLD, rc, call, "the delete callback returned %d", rc);
    }
    std::lock_guard<std::mutex> g(s.lock);
    erase_attr(s, owner, kv);
    return MPI_SUCCESS;
}

}  // namespace

int mpc::mpi::create_type_keyval(MPI_Type_copy_attr_function* copy_fn, MPI_Type_delete_attr_function* delete_fn,
                                 int* keyval, void* extra, void (*release)(void*)) noexcept {
    return create_keyval(copy_fn, delete_fn, keyval, extra, release);
}

extern "C" {

int MPC_Type_null_copy_fn(MPI_Datatype, int, void*, void*, void*, int* flag) {
    *flag = 0;
    return MPI_SUCCESS;
}

int MPC_Type_dup_fn(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
    *static_cast<void**>(out) = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPC_Type_null_delete_fn(MPI_Datatype, int, void*, void*) { return MPI_SUCCESS; }

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* copy_fn, MPI_Type_delete_attr_function* delete_fn, int* keyval,
                            void* extra) {
    return create_keyval(copy_fn, delete_fn, keyval, extra);
}
int PMPI_Type_free_keyval(int* keyval) { return free_keyval(keyval); }
int PMPI_Type_set_attr(MPI_Datatype h, int kv, void* value) { return set_attr(h, kv, value); }
int PMPI_Type_get_attr(MPI_Datatype h, int kv, void* value, int* flag) { return get_attr(h, kv, value, flag); }
int PMPI_Type_delete_attr(MPI_Datatype h, int kv) { return delete_attr(h, kv); }

int MPI_Type_create_keyval(MPI_Type_copy_attr_function*, MPI_Type_delete_attr_function*, int*, void*)
    MPC_WEAK(MPI_Type_create_keyval);
int MPI_Type_free_keyval(int*) MPC_WEAK(MPI_Type_free_keyval);
int MPI_Type_set_attr(MPI_Datatype, int, void*) MPC_WEAK(MPI_Type_set_attr);
int MPI_Type_get_attr(MPI_Datatype, int, void*, int*) MPC_WEAK(MPI_Type_get_attr);
int MPI_Type_delete_attr(MPI_Datatype, int) MPC_WEAK(MPI_Type_delete_attr);
}

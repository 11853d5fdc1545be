/// \file
/// Attribute caching on communicators (MPI 3.1 section 6.7), with the MPI-1 names.
///
/// Keyvals live in a process-wide table (a keyval made by one rank is usable by all, which keeps
/// programs working whose keyval sits in a global shared by the ranks until globals are
/// privatized); their handles are never reused. Attributes are per member (comm_local::attrs):
/// each entry holds a shared_ptr to its keyval, so callbacks still run after
/// MPI_Comm_free_keyval. Callbacks run, and errors are raised, without any lock held: callbacks
/// and error handlers may call MPI.
///
/// Predefined attributes (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE,
/// MPI_APPNUM, MPI_LASTUSEDCODE) are answered on every communicator, as pointers to int.

#include "mpi_compat/attr.hpp"

#include <climits>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>

#include "mpi_compat/binding.hpp"
#include "mpi_compat/errhandler.hpp"
#include "mpi_compat/errors.hpp"
#include "mpi_compat/group.hpp"

namespace mpc::mpi {

struct keyval_info {
    MPI_Comm_copy_attr_function* copy_fn = nullptr;
    MPI_Comm_delete_attr_function* delete_fn = nullptr;
    void* extra_state = nullptr;
    keyval_release release;  ///< set by create_comm_keyval
};

namespace {

constexpr int keyval_base = 0x25000000;  // handles: keyval_base + n, n >= 1 (never reused)

struct keyval_table {
    std::mutex lock;
    std::unordered_map<int, std::shared_ptr<keyval_info>> live;
    int next = 1;
};

keyval_table& keyvals() {
    static keyval_table t;
    return t;
}

std::shared_ptr<keyval_info> find_keyval(int kv) {
    keyval_table& t = keyvals();
    std::lock_guard<std::mutex> g(t.lock);
    auto it = t.live.find(kv);
    return it != t.live.end() ? it->second : nullptr;
}

bool is_predefined(int kv) noexcept {
    switch (kv) {
        case MPI_TAG_UB: case MPI_HOST: case MPI_IO: case MPI_WTIME_IS_GLOBAL: case MPI_UNIVERSE_SIZE:
        case MPI_APPNUM: case MPI_LASTUSEDCODE: return true;
        default: return false;
    }
}

int g_tag_ub = INT_MAX;
int g_host = MPI_PROC_NULL;
int g_io = MPI_ANY_SOURCE;
int g_wtime_is_global = 1;  // every rank of a process reads the same clock
int g_appnum = 0;

int* predefined_value(task& self, int kv) noexcept {
    static int universe = world().size;
    switch (kv) {
        case MPI_TAG_UB: return &g_tag_ub;
        case MPI_HOST: return &g_host;
        case MPI_IO: return &g_io;
        case MPI_WTIME_IS_GLOBAL: return &g_wtime_is_global;
        case MPI_UNIVERSE_SIZE: return &universe;
        case MPI_APPNUM: return &g_appnum;
        default: return lastusedcode(self);
    }
}

int call_delete(MPI_Comm h, const cached_attr& a) noexcept {
    MPI_Comm_delete_attr_function* fn = a.key->delete_fn;
    return fn != nullptr ? fn(h, a.keyval, a.value, a.key->extra_state) : MPI_SUCCESS;
}

/// The caller's attribute `kv` on c, or null.
cached_attr* find_attr(comm_local& l, int kv) noexcept {
    for (cached_attr& a : l.attrs) {
        if (a.keyval == kv) {
            return &a;
        }
    }
    return nullptr;
}

void erase_attr(comm_local& l, int kv) noexcept {
    for (auto it = l.attrs.begin(); it != l.attrs.end(); ++it) {
        if (it->keyval == kv) {
            l.attrs.erase(it);
            return;
        }
    }
}

/// Deletes all of the caller's attributes on c, last set first; stops at a failing callback.
int delete_all(task& self, const comm& c) noexcept {
    comm_local& l = local_of(self, &c);
    while (!l.attrs.empty()) {
        cached_attr a = l.attrs.back();
        if (int rc = call_delete(c.handle, a); rc != MPI_SUCCESS) {
            return rc;
        }
        erase_attr(local_of(self, &c), a.keyval);
    }
    return MPI_SUCCESS;
}

}  // namespace

int on_comm_dup(task& self, const comm& from, MPI_Comm* newcomm) noexcept {
    comm* to = lookup_comm(*newcomm);
    local_of(self, to).topo = local_of(self, &from).topo;
    std::vector<cached_attr> src = local_of(self, &from).attrs;  // callbacks may change the list
    for (const cached_attr& a : src) {
        void* out = nullptr;
        int flag = 0;
        int rc = a.key->copy_fn != nullptr
                     ? a.key->copy_fn(from.handle, a.keyval, a.key->extra_state, a.value, &out, &flag)
                     : MPI_SUCCESS;
        if (rc != MPI_SUCCESS) {
            (void)delete_all(self, *to);  // best effort: the copy failure is what gets reported
            drop_local(self, to);
            release_comm(to);
            *newcomm = MPI_COMM_NULL;
            return rc;
        }
        if (flag != 0) {
            local_of(self, to).attrs.push_back(cached_attr{a.keyval, out, a.key});
        }
    }
    return MPI_SUCCESS;
}

int on_comm_free(task& self, const comm& c) noexcept { return delete_all(self, c); }

int on_finalize(task& self) noexcept {
    world_state& w = world();
    int rc = delete_all(self, w.self);
    int rc2 = delete_all(self, w.world);
    return rc != MPI_SUCCESS ? rc : rc2;
}

}  // namespace mpc::mpi

using namespace mpc::mpi;

namespace {

int create_keyval(const char* call, MPI_Comm_copy_attr_function* copy_fn, MPI_Comm_delete_attr_function* delete_fn,
                  int* keyval, void* extra, void (*release)(void*) = nullptr) noexcept {
    if (keyval == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "null keyval pointer");
    }
    // raise() only once the table is unlocked: an error handler may call MPI (keyvals included).
    keyval_table& t = keyvals();
    int h = MPI_KEYVAL_INVALID;
    try {
        auto k = std::make_shared<keyval_info>(copy_fn, delete_fn, extra);
        std::lock_guard<std::mutex> g(t.lock);
        if (t.next < 0xffffff) {
            k->release.set(extra, release);  // only once the keyval exists: on failure the caller keeps extra
            t.live.emplace(keyval_base + t.next, std::move(k));
            h = keyval_base + t.next++;
        }
    } catch (const std::bad_alloc&) {
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "out of memory");
    }
    if (h == MPI_KEYVAL_INVALID) {
        return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "no keyval left");
    }
    *keyval = h;
    return MPI_SUCCESS;
}

int free_keyval(const char* call, int* keyval) noexcept {
    if (keyval == nullptr) {
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "null keyval pointer");
    }
    keyval_table& t = keyvals();
    {
        std::lock_guard<std::mutex> g(t.lock);
        if (t.live.erase(*keyval) == 1) {
            *keyval = MPI_KEYVAL_INVALID;
            return MPI_SUCCESS;
        }
    }
    return raise(MPI_COMM_NULL, MPI_ERR_KEYVAL, call, "%s keyval %#x",
                 is_predefined(*keyval) ? "predefined" : "invalid", *keyval);
}

/// Resolves a user keyval for set/delete (predefined ones are refused).
int user_keyval(const char* call, MPI_Comm h, int kv, std::shared_ptr<keyval_info>& k) noexcept {
    k = is_predefined(kv) ? nullptr : find_keyval(kv);
    if (k == nullptr) {
        return raise(h, MPI_ERR_KEYVAL, call, "%s keyval %#x", is_predefined(kv) ? "predefined" : "invalid", kv);
    }
    return MPI_SUCCESS;
}

int set_attr(const char* call, MPI_Comm h, int kv, void* value) noexcept {
    comm_call c = enter_comm(call, h);
    if (c.err != MPI_SUCCESS) {
        return c.err;
    }
    std::shared_ptr<keyval_info> k;
    if (int e = user_keyval(call, h, kv, k); e != MPI_SUCCESS) {
        return e;
    }
    if (cached_attr* a = find_attr(local_of(*c.self, c.c), kv); a != nullptr) {
        cached_attr old = *a;
        if (int rc = call_delete(h, old); rc != MPI_SUCCESS) {
            return raise(h, rc, call, "the delete callback of the old value returned %d", rc);
        }
        if (cached_attr* again = find_attr(local_of(*c.self, c.c), kv); again != nullptr) {
            again->value = value;
            return MPI_SUCCESS;
        }
    }
    try {
        local_of(*c.self, c.c).attrs.push_back(cached_attr{kv, value, std::move(k)});
    } catch (const std::bad_alloc&) {
        return raise(h, MPI_ERR_NO_MEM, call, "out of memory");
    }
    return MPI_SUCCESS;
}

int get_attr(const char* call, MPI_Comm h, int kv, void* value, int* flag) noexcept {
    comm_call c = enter_comm(call, h);
    if (c.err != MPI_SUCCESS) {
        return c.err;
    }
    if (value == nullptr || flag == nullptr) {
        return raise(h, MPI_ERR_ARG, call, "null attribute_val or flag pointer");
    }
    if (is_predefined(kv)) {
        *static_cast<void**>(value) = predefined_value(*c.self, kv);
        *flag = 1;
        return MPI_SUCCESS;
    }
    // An attribute keeps its keyval alive after MPI_Comm_free_keyval (MPI 3.1 section 6.7.2):
    // the attribute is found by the handle's value as long as it is set.
    const cached_attr* a = find_attr(local_of(*c.self, c.c), kv);
    if (a == nullptr && find_keyval(kv) == nullptr) {
        return raise(h, MPI_ERR_KEYVAL, call, "invalid keyval %#x", kv);
    }
    *flag = a != nullptr ? 1 : 0;
    if (a != nullptr) {
        *static_cast<void**>(value) = a->value;
    }
    return MPI_SUCCESS;
}

int delete_attr(const char* call, MPI_Comm h, int kv) noexcept {
    comm_call c = enter_comm(call, h);
    if (c.err != MPI_SUCCESS) {
        return c.err;
    }
    const cached_attr* a = is_predefined(kv) ? nullptr : find_attr(local_of(*c.self, c.c), kv);
    if (a == nullptr) {  // a set attribute keeps its keyval alive after MPI_Comm_free_keyval
        std::shared_ptr<keyval_info> k;
        if (int e = user_keyval(call, h, kv, k); e != MPI_SUCCESS) {
            return e;
        }
        return MPI_SUCCESS;  // nothing to delete
    }
    cached_attr old = *a;
    if (int rc = call_delete(h, old); rc != MPI_SUCCESS) {
        return raise(h, rc, call, "the delete callback returned %d", rc);
    }
    erase_attr(local_of(*c.self, c.c), kv);
    return MPI_SUCCESS;
}

}  // namespace

int mpc::mpi::create_comm_keyval(const char* call, MPI_Comm_copy_attr_function* copy_fn,
                                  MPI_Comm_delete_attr_function* delete_fn, int* keyval, void* extra,
                                  void (*release)(void*)) noexcept {
    return create_keyval(call, copy_fn, delete_fn, keyval, extra, release);
}

extern "C" {

int MPC_Comm_null_copy_fn(MPI_Comm, int, void*, void*, void*, int* flag) {
    *flag = 0;
    return MPI_SUCCESS;
}

int MPC_Comm_dup_fn(MPI_Comm, int, void*, void* in, void* out, int* flag) {
    *static_cast<void**>(out) = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPC_Comm_null_delete_fn(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy_fn, MPI_Comm_delete_attr_function* delete_fn,
                            int* keyval, void* extra) {
    return create_keyval("MPI_Comm_create_keyval", copy_fn, delete_fn, keyval, extra);
}
int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval, void* extra) {
    return create_keyval("MPI_Keyval_create", copy_fn, delete_fn, keyval, extra);
}
int PMPI_Comm_free_keyval(int* keyval) { return free_keyval("MPI_Comm_free_keyval", keyval); }
int PMPI_Keyval_free(int* keyval) { return free_keyval("MPI_Keyval_free", keyval); }
int PMPI_Comm_set_attr(MPI_Comm h, int kv, void* value) { return set_attr("MPI_Comm_set_attr", h, kv, value); }
int PMPI_Attr_put(MPI_Comm h, int kv, void* value) { return set_attr("MPI_Attr_put", h, kv, value); }
int PMPI_Comm_get_attr(MPI_Comm h, int kv, void* value, int* flag) {
    return get_attr("MPI_Comm_get_attr", h, kv, value, flag);
}
int PMPI_Attr_get(MPI_Comm h, int kv, void* value, int* flag) { return get_attr("MPI_Attr_get", h, kv, value, flag); }
int PMPI_Comm_delete_attr(MPI_Comm h, int kv) { return delete_attr("MPI_Comm_delete_attr", h, kv); }
int PMPI_Attr_delete(MPI_Comm h, int kv) { return delete_attr("MPI_Attr_delete", h, kv); }

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function*, MPI_Comm_delete_attr_function*, int*, void*)
    MPC_WEAK(MPI_Comm_create_keyval);
int MPI_Keyval_create(MPI_Copy_function*, MPI_Delete_function*, int*, void*) MPC_WEAK(MPI_Keyval_create);
int MPI_Comm_free_keyval(int*) MPC_WEAK(MPI_Comm_free_keyval);
int MPI_Keyval_free(int*) MPC_WEAK(MPI_Keyval_free);
int MPI_Comm_set_attr(MPI_Comm, int, void*) MPC_WEAK(MPI_Comm_set_attr);
int MPI_Attr_put(MPI_Comm, int, void*) MPC_WEAK(MPI_Attr_put);
int MPI_Comm_get_attr(MPI_Comm, int, void*, int*) MPC_WEAK(MPI_Comm_get_attr);
int MPI_Attr_get(MPI_Comm, int, void*, int*) MPC_WEAK(MPI_Attr_get);
int MPI_Comm_delete_attr(MPI_Comm, int) MPC_WEAK(MPI_Comm_delete_attr);
int MPI_Attr_delete(MPI_Comm, int) MPC_WEAK(MPI_Attr_delete);
}

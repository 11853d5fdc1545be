/// \file
/// StarPU 1.3 C API: starpu_task_insert() and friends, and packed codelet arguments.
///
/// The packed format is StarPU's: an int (the number of values), then for each value its size
/// (size_t) and its bytes. starpu_codelet_unpack_args() copies them out in order.

#include <starpu.h>

#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "lib/log.hpp"
#include "taskgraph/small_list.hpp"
#include "taskgraph/starpu_glue.hpp"
#include "taskgraph/tg.hpp"

namespace mpc::tg::starpu {
namespace {

const char* cl_name(const starpu_codelet* cl) noexcept {
    return cl != nullptr && cl->name != nullptr ? cl->name : "(unnamed)";
}

/// Fills a new task from a starpu_task_insert() argument list. Returns 0 or -EINVAL (logged);
/// on error the task owns nothing that the caller must free beyond the task itself.
int build(starpu_codelet* cl, starpu_task* t, va_list ap) noexcept {
    detail::small_list<starpu_data_descr, STARPU_NMAXBUFS> bufs;
    starpu_codelet_pack_arg_data values;
    starpu_codelet_pack_arg_init(&values);
    bool cl_args = false;
    unsigned ndeps = 0;
    starpu_task** deps = nullptr;
    unsigned nend_deps = 0;
    starpu_task** end_deps = nullptr;
    for (;;) {
        int key = va_arg(ap, int);
        if (key == 0) {
            break;
        }
        if (cl == nullptr && ((key > 0 && key < STARPU_ACCESS_MODE_MAX) || key == STARPU_DATA_ARRAY ||
                              key == STARPU_DATA_MODE_ARRAY)) {
            // StarPU's rule: a task without a codelet (a synchronisation point) takes no data.
            MPC_LOG(error, tg, "starpu_task_insert: data given to a task without a codelet");
            std::free(values.arg_buffer);
            return -EINVAL;
        }
        if (key > 0 && key < STARPU_ACCESS_MODE_MAX) {  // an access mode; the core checks the combination
            auto* h = va_arg(ap, starpu_data_handle_t);
            if (!bufs.push_back({h, static_cast<starpu_data_access_mode>(key)})) {
                std::free(values.arg_buffer);
                return -ENOMEM;
            }
        } else if (key == STARPU_DATA_ARRAY) {
            auto* hs = va_arg(ap, starpu_data_handle_t*);
            int n = va_arg(ap, int);
            for (int i = 0; i < n; ++i) {
                // The codelet's mode for that position (StarPU's rule for STARPU_DATA_ARRAY).
                int pos = static_cast<int>(bufs.size());
                starpu_data_access_mode m = pos < STARPU_NMAXBUFS || cl->dyn_modes != nullptr
                                                ? STARPU_CODELET_GET_MODE(cl, pos)
                                                : STARPU_NONE;
                if (!bufs.push_back({hs[i], m})) {
                    std::free(values.arg_buffer);
                    return -ENOMEM;
                }
            }
        } else if (key == STARPU_DATA_MODE_ARRAY) {
            auto* ds = va_arg(ap, starpu_data_descr*);
            int n = va_arg(ap, int);
            for (int i = 0; i < n; ++i) {
                if (!bufs.push_back(ds[i])) {
                    std::free(values.arg_buffer);
                    return -ENOMEM;
                }
            }
        } else if (key == STARPU_VALUE) {
            void* p = va_arg(ap, void*);
            size_t sz = va_arg(ap, size_t);
            starpu_codelet_pack_arg(&values, p, sz);
        } else if (key == STARPU_CL_ARGS || key == STARPU_CL_ARGS_NFREE) {
            t->cl_arg = va_arg(ap, void*);
            t->cl_arg_size = va_arg(ap, size_t);
            t->cl_arg_free = key == STARPU_CL_ARGS;
            cl_args = true;
        } else if (key == STARPU_CALLBACK) {
            t->callback_func = va_arg(ap, void (*)(void*));
        } else if (key == STARPU_CALLBACK_WITH_ARG || key == STARPU_CALLBACK_WITH_ARG_NFREE) {
            // StarPU 1.3.10 frees the argument of STARPU_CALLBACK_WITH_ARG / _ARG with the task.
            t->callback_func = va_arg(ap, void (*)(void*));
            t->callback_arg = va_arg(ap, void*);
            t->callback_arg_free = key == STARPU_CALLBACK_WITH_ARG;
        } else if (key == STARPU_CALLBACK_ARG || key == STARPU_CALLBACK_ARG_NFREE) {
            t->callback_arg = va_arg(ap, void*);
            t->callback_arg_free = key == STARPU_CALLBACK_ARG;
        } else if (key == STARPU_TAG) {
            t->tag_id = va_arg(ap, starpu_tag_t);
            t->use_tag = 1;
        } else if (key == STARPU_TAG_ONLY) {
            t->tag_id = va_arg(ap, starpu_tag_t);
        } else if (key == STARPU_TASK_DEPS_ARRAY) {
            if (deps != nullptr) {
                MPC_LOG(error, tg, "starpu_task_insert(%s): STARPU_TASK_DEPS_ARRAY given twice", cl_name(cl));
                std::free(values.arg_buffer);
                return -EINVAL;
            }
            ndeps = va_arg(ap, unsigned);
            deps = va_arg(ap, starpu_task**);
        } else if (key == STARPU_FLOPS) {
            t->flops = va_arg(ap, double);
        } else if (key == STARPU_TASK_COLOR) {
            t->color = static_cast<unsigned>(va_arg(ap, int));
        } else if (key == STARPU_SEQUENTIAL_CONSISTENCY) {
            t->sequential_consistency = va_arg(ap, unsigned) != 0;
        } else if (key == STARPU_TASK_SCHED_DATA) {
            t->sched_data = va_arg(ap, void*);
        } else if (key == STARPU_PROLOGUE_CALLBACK) {
            t->prologue_callback_func = va_arg(ap, void (*)(void*));
        } else if (key == STARPU_PROLOGUE_CALLBACK_ARG || key == STARPU_PROLOGUE_CALLBACK_ARG_NFREE) {
            t->prologue_callback_arg = va_arg(ap, void*);
            t->prologue_callback_arg_free = key == STARPU_PROLOGUE_CALLBACK_ARG;
        } else if (key == STARPU_PROLOGUE_CALLBACK_POP) {
            t->prologue_callback_pop_func = va_arg(ap, void (*)(void*));
        } else if (key == STARPU_PROLOGUE_CALLBACK_POP_ARG || key == STARPU_PROLOGUE_CALLBACK_POP_ARG_NFREE) {
            t->prologue_callback_pop_arg = va_arg(ap, void*);
            t->prologue_callback_pop_arg_free = key == STARPU_PROLOGUE_CALLBACK_POP_ARG;
        } else if (key == STARPU_EXECUTE_WHERE) {
            t->where = static_cast<int32_t>(va_arg(ap, unsigned long long));
        } else if (key == STARPU_HANDLES_SEQUENTIAL_CONSISTENCY) {
            t->handles_sequential_consistency = va_arg(ap, unsigned char*);
        } else if (key == STARPU_TASK_END_DEP) {
            starpu_task_end_dep_add(t, va_arg(ap, int));
        } else if (key == STARPU_TASK_END_DEPS_ARRAY) {
            if (end_deps != nullptr) {
                MPC_LOG(error, tg, "starpu_task_insert(%s): STARPU_TASK_END_DEPS_ARRAY given twice", cl_name(cl));
                std::free(values.arg_buffer);
                return -EINVAL;
            }
            nend_deps = va_arg(ap, unsigned);
            end_deps = va_arg(ap, starpu_task**);
        } else if (key == STARPU_TASK_WORKERIDS) {
            t->workerids_len = va_arg(ap, unsigned);
            t->workerids = va_arg(ap, uint32_t*);
        } else if (key == STARPU_EXECUTE_ON_NODE || key == STARPU_NODE_SELECTION_POLICY) {
            (void)va_arg(ap, int);  // StarPU-MPI's; StarPU's own starpu_task_insert ignores them
        } else if (key == STARPU_EXECUTE_ON_DATA) {
            (void)va_arg(ap, starpu_data_handle_t);
        } else if (key == STARPU_TASK_NO_SUBMITORDER) {
            (void)va_arg(ap, unsigned);  // tasks carry no submission number here
        } else if (key == STARPU_EXECUTE_ON_WORKER) {
            int w = va_arg(ap, int);
            if (w >= 0) {  // -1: any worker (StarPU's meaning)
                t->execute_on_a_specific_worker = 1;
                t->workerid = static_cast<unsigned>(w);
            }
        } else if (key == STARPU_PRIORITY) {
            t->priority = va_arg(ap, int);
        } else if (key == STARPU_NAME) {
            t->name = va_arg(ap, const char*);
        } else if (key == STARPU_TASK_SYNCHRONOUS) {
            t->synchronous = va_arg(ap, int) != 0;
        } else if (key == STARPU_SCHED_CTX) {
            t->sched_ctx = va_arg(ap, unsigned);
        } else if (key == STARPU_HYPERVISOR_TAG) {
            t->hypervisor_tag = va_arg(ap, int);
        } else if (key == STARPU_POSSIBLY_PARALLEL) {
            t->possibly_parallel = va_arg(ap, unsigned);
        } else {
            MPC_LOG(error, tg, "starpu_task_insert(%s): unrecognized argument %d (not supported, or the list does not "
                               "end with 0)", cl_name(cl), key);
            std::free(values.arg_buffer);
            return -EINVAL;
        }
    }
    if (values.nargs > 0) {
        if (cl_args) {
            MPC_LOG(error, tg, "starpu_task_insert(%s): both STARPU_VALUE and STARPU_CL_ARGS", cl_name(cl));
            std::free(values.arg_buffer);
            return -EINVAL;
        }
        starpu_codelet_pack_arg_fini(&values, &t->cl_arg, &t->cl_arg_size);
        t->cl_arg_free = 1;
    } else {
        std::free(values.arg_buffer);
    }
    const int n = static_cast<int>(bufs.size());
    if (cl == nullptr) {  // an empty task: callbacks, tags, dependencies, no data
        t->cl = nullptr;
        t->nbuffers = 0;
        if (deps != nullptr && ndeps > 0) {
            starpu_task_declare_deps_array(t, ndeps, deps);
        }
        if (end_deps != nullptr && nend_deps > 0) {
            starpu_task_declare_end_deps_array(t, nend_deps, end_deps);
        }
        return 0;
    }
    if (cl->nbuffers != STARPU_VARIABLE_NBUFFERS && n != cl->nbuffers) {
        MPC_LOG(error, tg, "starpu_task_insert: codelet %s takes %d buffers, %d were given", cl_name(cl),
                cl->nbuffers, n);
        return -EINVAL;
    }
    t->cl = cl;
    t->nbuffers = n;
    if (deps != nullptr && ndeps > 0) {
        starpu_task_declare_deps_array(t, ndeps, deps);
    }
    if (end_deps != nullptr && nend_deps > 0) {
        starpu_task_declare_end_deps_array(t, nend_deps, end_deps);
    }
    if (n > STARPU_NMAXBUFS) {
        t->dyn_handles = static_cast<starpu_data_handle_t*>(std::malloc(sizeof(starpu_data_handle_t) * n));
        t->dyn_modes = static_cast<starpu_data_access_mode*>(std::malloc(sizeof(starpu_data_access_mode) * n));
        if (t->dyn_handles == nullptr || t->dyn_modes == nullptr) {
            return -ENOMEM;
        }
    }
    for (int i = 0; i < n; ++i) {
        STARPU_TASK_SET_HANDLE(t, bufs[i].handle, i);
        if (cl->nbuffers == STARPU_VARIABLE_NBUFFERS || t->dyn_modes != nullptr) {
            (t->dyn_modes != nullptr ? t->dyn_modes : t->modes)[i] = bufs[i].mode;
        } else if (STARPU_CODELET_GET_MODE(cl, i) == STARPU_NONE) {
            STARPU_CODELET_SET_MODE(cl, bufs[i].mode, i);  // StarPU fills the codelet's unset modes
        } else if (STARPU_CODELET_GET_MODE(cl, i) != bufs[i].mode) {
            MPC_LOG(error, tg, "starpu_task_insert: codelet %s defines mode %d for buffer %d, the call gives %d",
                    cl_name(cl), STARPU_CODELET_GET_MODE(cl, i), i, bufs[i].mode);
            return -EINVAL;
        }
    }
    return 0;
}

/// Frees a task built here that was never submitted.
void discard(starpu_task* t) noexcept {
    t->destroy = 0;  // not submitted: starpu_task_destroy's auto-destroy check does not apply
    starpu_task_destroy(t);
}

int insert(starpu_codelet* cl, va_list ap) noexcept {
    starpu_task* t = starpu_task_create();
    if (t == nullptr) {
        return -ENOMEM;
    }
    if (int rc = build(cl, t, ap); rc != 0) {
        discard(t);
        return rc;
    }
    int rc = submit(t);
    if (rc != 0) {
        auto* core = static_cast<task*>(t->starpu_private);
        if (core == nullptr || !task_submitted(core)) {
            discard(t);  // refused: never started, still ours
        }
    }
    return rc;
}

}  // namespace
}  // namespace mpc::tg::starpu

using namespace mpc::tg;

extern "C" {

int starpu_task_insert(struct starpu_codelet* cl, ...) {
    va_list ap;
    va_start(ap, cl);
    int rc = starpu::insert(cl, ap);
    va_end(ap);
    return rc;
}

int starpu_insert_task(struct starpu_codelet* cl, ...) {
    va_list ap;
    va_start(ap, cl);
    int rc = starpu::insert(cl, ap);
    va_end(ap);
    return rc;
}

struct starpu_task* starpu_task_build(struct starpu_codelet* cl, ...) {
    starpu_task* t = starpu_task_create();
    if (t == nullptr) {
        return nullptr;
    }
    va_list ap;
    va_start(ap, cl);
    int rc = starpu::build(cl, t, ap);
    va_end(ap);
    if (rc != 0) {
        starpu::discard(t);
        return nullptr;
    }
    return t;
}

int starpu_task_set(struct starpu_task* task, struct starpu_codelet* cl, ...) {
    if (task == nullptr) {
        MPC_LOG(error, tg, "starpu_task_set: NULL task");
        return -EINVAL;
    }
    va_list ap;
    va_start(ap, cl);
    int rc = starpu::build(cl, task, ap);
    va_end(ap);
    return rc;
}

}  // extern "C"

namespace mpc::tg::starpu {
namespace {

/// Whether the modes of cl's buffers are kept by each task (a variable count, or more than the
/// codelet's fixed array holds without dyn_modes of its own), not by the codelet.
bool modes_in_task(const starpu_codelet* cl) noexcept {
    return cl->nbuffers == STARPU_VARIABLE_NBUFFERS || (cl->nbuffers > STARPU_NMAXBUFS && cl->dyn_modes == nullptr);
}

/// Grows a task's array of n elements of T to cap, moving the first `keep` of `fixed` into it
/// when it does not exist yet; stops the program when there is no memory.
template <class T>
void grow(T** dyn, const T* fixed, int keep, int cap) noexcept {
    const bool fresh = *dyn == nullptr;
    auto* p = static_cast<T*>(std::realloc(*dyn, sizeof(T) * static_cast<std::size_t>(cap)));
    if (p == nullptr) {
        fatal("starpu_task_insert_data_make_room", "out of memory for the task's buffers");
    }
    if (fresh) {
        std::memcpy(p, fixed, sizeof(T) * static_cast<std::size_t>(keep));
    }
    *dyn = p;
}

/// Stores handle h with mode m as buffer *cur of t (room made), checking m against cl's.
void store(starpu_codelet* cl, starpu_task* t, int* allocated, int* cur, starpu_data_access_mode m,
           starpu_data_handle_t h) noexcept {
    if (cl == nullptr) {
        fatal("starpu_task_insert_data_process_arg", "data given to a task without a codelet");
    }
    if (cl->nbuffers != STARPU_VARIABLE_NBUFFERS && *cur >= cl->nbuffers) {
        fatal("starpu_task_insert_data_process_arg", "more data than the codelet's nbuffers");
    }
    starpu_task_insert_data_make_room(cl, t, allocated, *cur, 1);
    const int i = *cur;
    STARPU_TASK_SET_HANDLE(t, h, i);
    if (modes_in_task(cl)) {
        (t->dyn_modes != nullptr ? t->dyn_modes : t->modes)[i] = m;
    } else if (STARPU_CODELET_GET_MODE(cl, i) == STARPU_NONE) {
        STARPU_CODELET_SET_MODE(cl, m, i);  // as starpu_task_insert fills the codelet's unset modes
    } else if (STARPU_CODELET_GET_MODE(cl, i) != m) {
        MPC_LOG(fatal, tg, "starpu_task_insert_data_process_arg: codelet %s defines mode %d for buffer %d, the call "
                           "gives %d", cl_name(cl), STARPU_CODELET_GET_MODE(cl, i), i, m);
        std::abort();
    }
    *cur = i + 1;
    t->nbuffers = *cur;
}

}  // namespace
}  // namespace mpc::tg::starpu

extern "C" {

void starpu_task_insert_data_make_room(struct starpu_codelet* cl, struct starpu_task* task, int* allocated_buffers,
                                       int current_buffer, int room) {
    const int need = current_buffer + room;
    if (*allocated_buffers == 0 ? need <= STARPU_NMAXBUFS : need <= *allocated_buffers) {
        return;  // the fixed arrays, or the dynamic ones made so far, hold them
    }
    const int cap = need * 2;
    const int keep = *allocated_buffers == 0 ? current_buffer : 0;  // moved out of the fixed arrays
    starpu::grow(&task->dyn_handles, task->handles, keep, cap);
    if (cl != nullptr && starpu::modes_in_task(cl)) {
        starpu::grow(&task->dyn_modes, task->modes, keep, cap);
    }
    *allocated_buffers = cap;
}

void starpu_task_insert_data_process_arg(struct starpu_codelet* cl, struct starpu_task* task, int* allocated_buffers,
                                         int* current_buffer, int arg_type, starpu_data_handle_t handle) {
    const auto m = static_cast<starpu_data_access_mode>(arg_type & ~STARPU_SSEND);
    starpu::store(cl, task, allocated_buffers, current_buffer, m, handle);
}

void starpu_task_insert_data_process_array_arg(struct starpu_codelet* cl, struct starpu_task* task,
                                               int* allocated_buffers, int* current_buffer, int nb_handles,
                                               starpu_data_handle_t* handles) {
    for (int i = 0; i < nb_handles; ++i) {
        // The codelet's mode for that position (STARPU_DATA_ARRAY's rule).
        const int pos = *current_buffer;
        const starpu_data_access_mode m =
            cl != nullptr && (pos < STARPU_NMAXBUFS || cl->dyn_modes != nullptr) ? STARPU_CODELET_GET_MODE(cl, pos) : STARPU_NONE;
        starpu::store(cl, task, allocated_buffers, current_buffer, m, handles[i]);
    }
}

void starpu_task_insert_data_process_mode_array_arg(struct starpu_codelet* cl, struct starpu_task* task,
                                                    int* allocated_buffers, int* current_buffer, int nb_descrs,
                                                    struct starpu_data_descr* descrs) {
    for (int i = 0; i < nb_descrs; ++i) {
        starpu::store(cl, task, allocated_buffers, current_buffer, descrs[i].mode, descrs[i].handle);
    }
}

void starpu_codelet_pack_arg_init(struct starpu_codelet_pack_arg_data* state) {
    state->arg_buffer = nullptr;
    state->arg_buffer_size = 0;
    state->current_offset = sizeof(int);
    state->nargs = 0;
}

void starpu_codelet_pack_arg(struct starpu_codelet_pack_arg_data* state, const void* ptr, size_t ptr_size) {
    size_t need = state->current_offset + sizeof(size_t) + ptr_size;
    if (need > state->arg_buffer_size) {
        size_t cap = state->arg_buffer_size == 0 ? 128 : state->arg_buffer_size;
        while (cap < need) {
            cap *= 2;
        }
        auto* nb = static_cast<char*>(std::realloc(state->arg_buffer, cap));
        if (nb == nullptr) {
            starpu::fatal("starpu_codelet_pack_arg", "no memory for the packed arguments");
        }
        state->arg_buffer = nb;
        state->arg_buffer_size = cap;
    }
    std::memcpy(state->arg_buffer + state->current_offset, &ptr_size, sizeof ptr_size);
    state->current_offset += sizeof ptr_size;
    std::memcpy(state->arg_buffer + state->current_offset, ptr, ptr_size);
    state->current_offset += ptr_size;
    ++state->nargs;
}

void starpu_codelet_pack_arg_fini(struct starpu_codelet_pack_arg_data* state, void** cl_arg, size_t* cl_arg_size) {
    if (state->arg_buffer == nullptr) {  // no value: still a valid buffer saying so
        state->arg_buffer = static_cast<char*>(std::malloc(sizeof(int)));
        if (state->arg_buffer == nullptr) {
            starpu::fatal("starpu_codelet_pack_arg_fini", "no memory for the packed arguments");
        }
    }
    std::memcpy(state->arg_buffer, &state->nargs, sizeof(int));
    *cl_arg = state->arg_buffer;
    *cl_arg_size = state->current_offset;
}

void starpu_codelet_pack_args(void** arg_buffer, size_t* arg_buffer_size, ...) {
    starpu_codelet_pack_arg_data st;
    starpu_codelet_pack_arg_init(&st);
    va_list ap;
    va_start(ap, arg_buffer_size);
    for (int key = va_arg(ap, int); key != 0; key = va_arg(ap, int)) {
        if (key != STARPU_VALUE) {
            va_end(ap);
            starpu::fatal("starpu_codelet_pack_args", "only STARPU_VALUE arguments (ended by 0) can be packed");
        }
        void* p = va_arg(ap, void*);
        size_t sz = va_arg(ap, size_t);
        starpu_codelet_pack_arg(&st, p, sz);
    }
    va_end(ap);
    starpu_codelet_pack_arg_fini(&st, arg_buffer, arg_buffer_size);
}

namespace {
/// Copies the packed values into the pointers of ap until one is NULL or all are read; returns
/// the values read and sets *off to the offset of the first unread one.
int unpack(const char* buf, int nargs, va_list ap, size_t* off) noexcept {
    *off = sizeof(int);
    for (int i = 0; i < nargs; ++i) {
        void* dst = va_arg(ap, void*);
        if (dst == nullptr) {
            return i;
        }
        size_t sz = 0;
        std::memcpy(&sz, buf + *off, sizeof sz);
        *off += sizeof sz;
        std::memcpy(dst, buf + *off, sz);
        *off += sz;
    }
    return nargs;
}

/// Both unpack calls: the values into the pointers of ap, and with a buffer (copyleft), the
/// values left after a NULL pointer copied there in the packed format.
void unpack_values(void* cl_arg, void* buffer, size_t buffer_size, va_list ap) noexcept {
    if (cl_arg == nullptr) {
        return;
    }
    auto* buf = static_cast<char*>(cl_arg);
    int nargs = 0;
    std::memcpy(&nargs, buf, sizeof nargs);
    size_t off = 0;
    const int read = unpack(buf, nargs, ap, &off);
    if (read == nargs || buffer_size == 0) {
        return;  // nothing left over, or a plain unpack
    }
    // The rest: its count, then each value as packed (size, bytes).
    size_t end = off;
    for (int i = read; i < nargs; ++i) {
        size_t sz = 0;
        std::memcpy(&sz, buf + end, sizeof sz);
        end += sizeof sz + sz;
    }
    const size_t need = sizeof(int) + (end - off);
    if (buffer == nullptr || buffer_size < need) {
        mpc::tg::starpu::fatal("starpu_codelet_unpack_args_and_copyleft",
                               "the buffer is too small for the values left (give at least sizeof(int) + "
                               "sizeof(size_t) + size of each)");
    }
    const int left = nargs - read;
    std::memcpy(buffer, &left, sizeof left);
    std::memcpy(static_cast<char*>(buffer) + sizeof(int), buf + off, end - off);
}
}  // namespace

void starpu_codelet_unpack_args(void* cl_arg, ...) {
    va_list ap;
    va_start(ap, cl_arg);
    unpack_values(cl_arg, nullptr, 0, ap);
    va_end(ap);
}

void starpu_codelet_unpack_args_and_copyleft(void* cl_arg, void* buffer, size_t buffer_size, ...) {
    va_list ap;
    va_start(ap, buffer_size);
    unpack_values(cl_arg, buffer, buffer_size, ap);
    va_end(ap);
}

}  // extern "C"

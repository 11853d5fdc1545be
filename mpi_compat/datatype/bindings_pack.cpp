/// \file
/// C bindings of packing (native and external32), element counts and addresses.
/// Pack/Unpack need a committed type (MPI_ERR_TYPE otherwise); an output that is too small or an
/// input that is too short is MPI_ERR_TRUNCATE, with nothing written. The communicator argument of
/// MPI_Pack/MPI_Unpack/MPI_Pack_size is not looked at (any rank packs alike in one process).
#include <climits>
#include <cstring>

#include "mpi_compat/datatype/bindings_common.hpp"
#include "mpi_compat/datatype/copy.hpp"

using namespace mpc::mpi;

namespace {

const datatype* committed(MPI_Datatype h) noexcept {
    const ::mpc::mpi::datatype* t = datatype_from_handle(h);
    return t && t->is_committed() ? t : nullptr;
}

bool is_external32(const char* datarep) noexcept { return datarep && std::strcmp(datarep, "external32") == 0; }

// The class of a failed pack/unpack status: a short buffer is a truncation.
int pack_class(const mpc::status& st) noexcept {
    if (st.code() == mpc::errc::invalid_argument) {
        return std::strcmp(st.reason(), external32_conversion_reason) == 0 ? MPI_ERR_CONVERSION : MPI_ERR_TRUNCATE;
    }
    return dtb::class_of(st);
}

// Runs an engine call that may allocate (plans compiled on first use).
template <class F>
int guarded(F&& f) noexcept {
    try {
        return f();
    } catch (const std::bad_alloc&) {
        return MPI_ERR_NO_MEM;
    }
}

int get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
    const ::mpc::mpi::datatype* t = datatype_from_handle(datatype);
    if (t == nullptr) {
        return MPI_ERR_TYPE;
    }
    if (status == nullptr || count == nullptr) {
        return MPI_ERR_ARG;
    }
    return guarded([&] {
        const count_t n = get_elements(*t, dtb::status_bytes(*status));
        *count = n < 0 ? MPI_UNDEFINED : n;
        return MPI_SUCCESS;
    });
}

int status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
    const ::mpc::mpi::datatype* t = datatype_from_handle(datatype);
    if (t == nullptr) {
        return MPI_ERR_TYPE;
    }
    if (count < 0) {
        return MPI_ERR_COUNT;
    }
    if (status == nullptr) {
        return MPI_ERR_ARG;
    }
    // `count` basic elements of t: whole elements of t plus the bytes of the first basic elements.
    return guarded([&] {
        const count_t per = t->typed_layout().basic_count;
        count_t bytes = 0;
        if (per > 0) {
            bytes = count / per * t->size();
            count_t rest = count % per;
            cursor c;
            c.reset(t->typed_layout(), 1);
            while (rest > 0) {
                const count_t unit = basic(int(c.kind())).size;
                const count_t take = std::min(rest, c.avail() / unit);
                bytes += take * unit;
                rest -= take;
                c.advance(take * unit);
            }
        }
        dtb::set_status_bytes(*status, bytes);
        return MPI_SUCCESS;
    });
}

}  // namespace

extern "C" {

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
              MPI_Comm) {
    return dtb::report("MPI_Pack", [&]() -> int {
        const ::mpc::mpi::datatype* t = committed(datatype);
        if (t == nullptr) {
            return MPI_ERR_TYPE;
        }
        if (incount < 0) {
            return MPI_ERR_COUNT;
        }
        if (position == nullptr || outsize < 0) {
            return MPI_ERR_ARG;
        }
        return guarded([&] {
            count_t pos = *position;
            if (mpc::status st = pack(inbuf, incount, *t, outbuf, outsize, &pos); !st) {
                return pack_class(st);
            }
            *position = int(pos);
            return MPI_SUCCESS;
        });
    }());
}

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
                MPI_Comm) {
    return dtb::report("MPI_Unpack", [&]() -> int {
        const ::mpc::mpi::datatype* t = committed(datatype);
        if (t == nullptr) {
            return MPI_ERR_TYPE;
        }
        if (outcount < 0) {
            return MPI_ERR_COUNT;
        }
        if (position == nullptr || insize < 0) {
            return MPI_ERR_ARG;
        }
        return guarded([&] {
            count_t pos = *position;
            if (mpc::status st = unpack(inbuf, insize, &pos, outbuf, outcount, *t); !st) {
                return pack_class(st);
            }
            *position = int(pos);
            return MPI_SUCCESS;
        });
    }());
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm, int* size) {
    return dtb::report("MPI_Pack_size", [&]() -> int {
        const ::mpc::mpi::datatype* t = datatype_from_handle(datatype);
        if (t == nullptr) {
            return MPI_ERR_TYPE;
        }
        if (incount < 0) {
            return MPI_ERR_COUNT;
        }
        if (size == nullptr) {
            return MPI_ERR_ARG;
        }
        const count_t n = packed_size(incount, *t);
        if (n > INT_MAX) {
            return MPI_ERR_ARG;  // use MPI_Pack_external_size or the _x calls for such sizes
        }
        *size = int(n);
        return MPI_SUCCESS;
    }());
}

int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                       MPI_Aint outsize, MPI_Aint* position) {
    return dtb::report("MPI_Pack_external", [&]() -> int {
        const ::mpc::mpi::datatype* t = committed(datatype);
        if (t == nullptr) {
            return MPI_ERR_TYPE;
        }
        if (incount < 0) {
            return MPI_ERR_COUNT;
        }
        if (!is_external32(datarep) || position == nullptr || outsize < 0) {
            return MPI_ERR_ARG;
        }
        return guarded([&] {
            count_t pos = *position;
            if (mpc::status st = pack_external32(inbuf, incount, *t, outbuf, outsize, &pos); !st) {
                return pack_class(st);
            }
            *position = pos;
            return MPI_SUCCESS;
        });
    }());
}

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                         int outcount, MPI_Datatype datatype) {
    return dtb::report("MPI_Unpack_external", [&]() -> int {
        const ::mpc::mpi::datatype* t = committed(datatype);
        if (t == nullptr) {
            return MPI_ERR_TYPE;
        }
        if (outcount < 0) {
            return MPI_ERR_COUNT;
        }
        if (!is_external32(datarep) || position == nullptr || insize < 0) {
            return MPI_ERR_ARG;
        }
        return guarded([&] {
            count_t pos = *position;
            if (mpc::status st = unpack_external32(inbuf, insize, &pos, outbuf, outcount, *t); !st) {
                return pack_class(st);
            }
            *position = pos;
            return MPI_SUCCESS;
        });
    }());
}

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size) {
    return dtb::report("MPI_Pack_external_size", [&]() -> int {
        const ::mpc::mpi::datatype* t = datatype_from_handle(datatype);
        if (t == nullptr) {
            return MPI_ERR_TYPE;
        }
        if (incount < 0) {
            return MPI_ERR_COUNT;
        }
        if (!is_external32(datarep) || size == nullptr) {
            return MPI_ERR_ARG;
        }
        return guarded([&] {
            const count_t n = external32_size(incount, *t);
            if (n < 0) {
                return MPI_ERR_UNSUPPORTED_OPERATION;
            }
            *size = n;
            return MPI_SUCCESS;
        });
    }());
}

// ---- element counts ------------------------------------------------------------------------------

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
    return dtb::report("MPI_Get_elements_x", [&]() -> int { return get_elements_x(status, datatype, count); }());
}

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
    return dtb::report("MPI_Get_elements", [&]() -> int {
        if (count == nullptr) {
            return MPI_ERR_ARG;
        }
        MPI_Count n = 0;
        const int rc = get_elements_x(status, datatype, &n);
        if (rc == MPI_SUCCESS) {
            *count = n > INT_MAX ? MPI_UNDEFINED : int(n);
        }
        return rc;
    }());
}

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
    return dtb::report("MPI_Status_set_elements_x",
                       [&]() -> int { return status_set_elements_x(status, datatype, count); }());
}

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
    return dtb::report("MPI_Status_set_elements",
                       [&]() -> int { return status_set_elements_x(status, datatype, count); }());
}

// ---- addresses -----------------------------------------------------------------------------------

int PMPI_Get_address(const void* location, MPI_Aint* address) {
    return dtb::report("MPI_Get_address", [&]() -> int {
        if (address == nullptr) {
            return MPI_ERR_ARG;
        }
        *address = reinterpret_cast<MPI_Aint>(location);
        return MPI_SUCCESS;
    }());
}

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
    return MPI_Aint(static_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(disp));
}

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
    return MPI_Aint(static_cast<std::uintptr_t>(addr1) - static_cast<std::uintptr_t>(addr2));
}

int MPI_Pack(const void*, int, MPI_Datatype, void*, int, int*, MPI_Comm) MPC_DT_WEAK(MPI_Pack);
int MPI_Unpack(const void*, int, int*, void*, int, MPI_Datatype, MPI_Comm) MPC_DT_WEAK(MPI_Unpack);
int MPI_Pack_size(int, MPI_Datatype, MPI_Comm, int*) MPC_DT_WEAK(MPI_Pack_size);
int MPI_Pack_external(const char[], const void*, int, MPI_Datatype, void*, MPI_Aint, MPI_Aint*)
    MPC_DT_WEAK(MPI_Pack_external);
int MPI_Unpack_external(const char[], const void*, MPI_Aint, MPI_Aint*, void*, int, MPI_Datatype)
    MPC_DT_WEAK(MPI_Unpack_external);
int MPI_Pack_external_size(const char[], int, MPI_Datatype, MPI_Aint*) MPC_DT_WEAK(MPI_Pack_external_size);
int MPI_Get_elements(const MPI_Status*, MPI_Datatype, int*) MPC_DT_WEAK(MPI_Get_elements);
int MPI_Get_elements_x(const MPI_Status*, MPI_Datatype, MPI_Count*) MPC_DT_WEAK(MPI_Get_elements_x);
int MPI_Status_set_elements(MPI_Status*, MPI_Datatype, int) MPC_DT_WEAK(MPI_Status_set_elements);
int MPI_Status_set_elements_x(MPI_Status*, MPI_Datatype, MPI_Count) MPC_DT_WEAK(MPI_Status_set_elements_x);
int MPI_Get_address(const void*, MPI_Aint*) MPC_DT_WEAK(MPI_Get_address);
MPI_Aint MPI_Aint_add(MPI_Aint, MPI_Aint) MPC_DT_WEAK(MPI_Aint_add);
MPI_Aint MPI_Aint_diff(MPI_Aint, MPI_Aint) MPC_DT_WEAK(MPI_Aint_diff);

}  // extern "C"

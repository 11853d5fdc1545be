/// \file
/// C bindings of the datatype constructors, life cycle, queries, envelope/contents and names.
/// Each validates its handles (MPI_ERR_TYPE), counts (MPI_ERR_COUNT) and pointers (MPI_ERR_ARG),
/// calls the engine, and passes the error class to dtb::report(). MPI_Type_dup and
/// MPI_Type_free run the attribute callbacks, and names are read and written through
/// type_attr.hpp (predefined types have one per rank).
#include <climits>
#include <cstring>
#include <vector>

#include "mpi_compat/datatype/bindings_common.hpp"
#include "mpi_compat/type_attr.hpp"

using namespace mpc::mpi;
using mpc::mpi::dtb::out_handle;

namespace {

// Looks up an old type: MPI_ERR_TYPE if the handle is invalid.
#define MPC_DT_OLD(var, handle)                                     \
    const ::mpc::mpi::datatype* var = datatype_from_handle(handle); \
    if (var == nullptr) {                                           \
        return MPI_ERR_TYPE;                                        \
    }

int check_new(int count, const MPI_Datatype* newtype) noexcept {
    if (count < 0) {
        return MPI_ERR_COUNT;
    }
    return newtype ? MPI_SUCCESS : MPI_ERR_ARG;
}

}  // namespace

extern "C" {

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_contiguous", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (int e = check_new(count, newtype)) {
            return e;
        }
        return out_handle(type_contiguous(count, old), newtype);
    }());
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_vector", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (int e = check_new(count, newtype)) {
            return e;
        }
        return out_handle(type_vector(count, blocklength, stride, old), newtype);
    }());
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_hvector", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (int e = check_new(count, newtype)) {
            return e;
        }
        return out_handle(type_hvector(count, blocklength, stride, old), newtype);
    }());
}

int PMPI_Type_indexed(int count, const int blocklengths[], const int displs[], MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_indexed", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (int e = check_new(count, newtype)) {
            return e;
        }
        return out_handle(type_indexed(count, blocklengths, displs, old), newtype);
    }());
}

int PMPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displs[], MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_hindexed", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (int e = check_new(count, newtype)) {
            return e;
        }
        return out_handle(type_hindexed(count, blocklengths, reinterpret_cast<const aint*>(displs), old), newtype);
    }());
}

int PMPI_Type_create_indexed_block(int count, int blocklength, const int displs[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_indexed_block", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (int e = check_new(count, newtype)) {
            return e;
        }
        return out_handle(type_indexed_block(count, blocklength, displs, old), newtype);
    }());
}

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displs[], MPI_Datatype oldtype,
                                    MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_hindexed_block", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (int e = check_new(count, newtype)) {
            return e;
        }
        return out_handle(type_hindexed_block(count, blocklength, reinterpret_cast<const aint*>(displs), old), newtype);
    }());
}

int PMPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displs[], const MPI_Datatype types[],
                            MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_struct", [&]() -> int {
        if (int e = check_new(count, newtype)) {
            return e;
        }
        if (count > 0 && types == nullptr) {
            return MPI_ERR_ARG;
        }
        std::vector<const datatype*> ts;
        try {
            ts.resize(std::size_t(count));
        } catch (const std::bad_alloc&) {
            return MPI_ERR_NO_MEM;
        }
        for (int i = 0; i < count; ++i) {
            ts[std::size_t(i)] = datatype_from_handle(types[i]);
            if (ts[std::size_t(i)] == nullptr) {
                return MPI_ERR_TYPE;
            }
        }
        return out_handle(type_struct(count, blocklengths, reinterpret_cast<const aint*>(displs), ts.data()), newtype);
    }());
}

int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_subarray", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (newtype == nullptr) {
            return MPI_ERR_ARG;
        }
        return out_handle(type_subarray(ndims, sizes, subsizes, starts, order, old), newtype);
    }());
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[],
                            const int psizes[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_darray", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (newtype == nullptr) {
            return MPI_ERR_ARG;
        }
        return out_handle(type_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old), newtype);
    }());
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_create_resized", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (newtype == nullptr) {
            return MPI_ERR_ARG;
        }
        return out_handle(type_resized(old, lb, extent), newtype);
    }());
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
    return dtb::report("MPI_Type_dup", [&]() -> int {
        MPC_DT_OLD(old, oldtype);
        if (newtype == nullptr) {
            return MPI_ERR_ARG;
        }
        MPI_Datatype dup = MPI_DATATYPE_NULL;
        if (int e = out_handle(type_dup(old), &dup)) {
            return e;
        }
        // The attributes that their copy callbacks keep (MPI 3.1 section 6.7.4).
        if (int rc = on_type_dup(oldtype, dup); rc != MPI_SUCCESS) {
            (void)datatype_handle_free(dup);
            *newtype = MPI_DATATYPE_NULL;
            return rc;
        }
        *newtype = dup;
        return MPI_SUCCESS;
    }());
}

// ---- life cycle --------------------------------------------------------------------------------

int PMPI_Type_commit(MPI_Datatype* datatype) {
    return dtb::report("MPI_Type_commit", [&]() -> int {
        if (datatype == nullptr) {
            return MPI_ERR_ARG;
        }
        MPC_DT_OLD(t, *datatype);
        return dtb::class_of(t->commit());
    }());
}

int PMPI_Type_free(MPI_Datatype* datatype) {
    return dtb::report("MPI_Type_free", [&]() -> int {
        if (datatype == nullptr) {
            return MPI_ERR_ARG;
        }
        const ::mpc::mpi::datatype* t = datatype_from_handle(*datatype);
        if (t == nullptr || t->is_predefined()) {
            return MPI_ERR_TYPE;  // predefined, f90, null, freed or foreign handle
        }
        if (int rc = on_type_free(*datatype); rc != MPI_SUCCESS) {
            return rc;  // a delete callback failed: the type stays
        }
        if (!datatype_handle_free(*datatype).ok()) {
            return MPI_ERR_TYPE;  // freed meanwhile by another thread
        }
        *datatype = MPI_DATATYPE_NULL;
        return MPI_SUCCESS;
    }());
}

// ---- queries -------------------------------------------------------------------------------------

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
    return dtb::report("MPI_Type_get_extent", [&]() -> int {
        MPC_DT_OLD(t, datatype);
        if (lb == nullptr || extent == nullptr) {
            return MPI_ERR_ARG;
        }
        *lb = t->lb();
        *extent = t->extent();
        return MPI_SUCCESS;
    }());
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
    return dtb::report("MPI_Type_get_extent_x", [&]() -> int {
        MPC_DT_OLD(t, datatype);
        if (lb == nullptr || extent == nullptr) {
            return MPI_ERR_ARG;
        }
        *lb = t->lb();
        *extent = t->extent();
        return MPI_SUCCESS;
    }());
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
    return dtb::report("MPI_Type_get_true_extent", [&]() -> int {
        MPC_DT_OLD(t, datatype);
        if (true_lb == nullptr || true_extent == nullptr) {
            return MPI_ERR_ARG;
        }
        *true_lb = t->true_lb();
        *true_extent = t->true_extent();
        return MPI_SUCCESS;
    }());
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
    return dtb::report("MPI_Type_get_true_extent_x", [&]() -> int {
        MPC_DT_OLD(t, datatype);
        if (true_lb == nullptr || true_extent == nullptr) {
            return MPI_ERR_ARG;
        }
        *true_lb = t->true_lb();
        *true_extent = t->true_extent();
        return MPI_SUCCESS;
    }());
}

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
    return dtb::report("MPI_Type_size", [&]() -> int {
        MPC_DT_OLD(t, datatype);
        if (size == nullptr) {
            return MPI_ERR_ARG;
        }
        *size = t->size() > INT_MAX ? MPI_UNDEFINED : int(t->size());
        return MPI_SUCCESS;
    }());
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
    return dtb::report("MPI_Type_size_x", [&]() -> int {
        MPC_DT_OLD(t, datatype);
        if (size == nullptr) {
            return MPI_ERR_ARG;
        }
        *size = t->size();
        return MPI_SUCCESS;
    }());
}

// ---- envelope and contents ---------------------------------------------------------------------

int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes,
                           int* comb) {
    return dtb::report("MPI_Type_get_envelope", [&]() -> int {
        MPC_DT_OLD(t, datatype);
        if (!num_integers || !num_addresses || !num_datatypes || !comb) {
            return MPI_ERR_ARG;
        }
        *num_integers = int(t->ints().size());
        *num_addresses = int(t->aints().size());
        *num_datatypes = int(t->types().size());
        *comb = int(t->kind());
        return MPI_SUCCESS;
    }());
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int integers[], MPI_Aint addresses[], MPI_Datatype types[]) {
    return dtb::report("MPI_Type_get_contents", [&]() -> int {
        MPC_DT_OLD(t, datatype);
        const std::size_t ni = t->ints().size(), na = t->aints().size(), nt = t->types().size();
        if (t->kind() == combiner::named || max_integers < 0 || max_addresses < 0 || max_datatypes < 0 ||
            std::size_t(max_integers) < ni || std::size_t(max_addresses) < na || std::size_t(max_datatypes) < nt ||
            (ni && !integers) || (na && !addresses) || (nt && !types)) {
            return MPI_ERR_ARG;
        }
        // Derived parts come back as new handles the caller frees (MPI 3.1 section 4.1.13);
        // predefined ones, and f90 ones, as the predefined handle.
        for (std::size_t i = 0; i < nt; ++i) {
            const ::mpc::mpi::datatype* c = t->types()[i];
            if (c->is_predefined()) {
                types[i] = MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, c->predefined_index());
                continue;
            }
            c->retain();
            auto h = datatype_handle_add(c);
            if (!h) {
                ::mpc::mpi::datatype::release(c);
                for (std::size_t k = 0; k < i; ++k) {
                    (void)datatype_handle_free(types[k]);
                }
                return MPI_ERR_NO_MEM;
            }
            types[i] = *h;
        }
        std::copy(t->ints().begin(), t->ints().end(), integers);
        std::copy(t->aints().begin(), t->aints().end(), addresses);
        return MPI_SUCCESS;
    }());
}

// ---- names -------------------------------------------------------------------------------------

int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
    return dtb::report("MPI_Type_set_name", [&]() -> int {
        MPC_DT_OLD(t, datatype);
        if (type_name == nullptr) {
            return MPI_ERR_ARG;
        }
        return set_type_name(datatype, *t, type_name);  // per rank for predefined types
    }());
}

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
    return dtb::report("MPI_Type_get_name", [&]() -> int {
        MPC_DT_OLD(t, datatype);
        if (type_name == nullptr || resultlen == nullptr) {
            return MPI_ERR_ARG;
        }
        *resultlen = get_type_name(datatype, *t, type_name);
        return MPI_SUCCESS;
    }());
}

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
    return dtb::report("MPI_Type_match_size", [&]() -> int {
        if (datatype == nullptr) {
            return MPI_ERR_ARG;
        }
        static const MPI_Datatype candidates[] = {
            MPI_FLOAT,   MPI_DOUBLE,  MPI_LONG_DOUBLE,     MPI_INT8_T,           MPI_INT16_T,
            MPI_INT32_T, MPI_INT64_T, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX};
        for (MPI_Datatype c : candidates) {
            const basic_info& b = basic(c & 0xffffff);
            if (b.typeclass == typeclass && b.size == size) {
                *datatype = c;
                return MPI_SUCCESS;
            }
        }
        return MPI_ERR_ARG;
    }());
}

// ---- MPI_ names: weak aliases of the PMPI_ ones --------------------------------------------------

int MPI_Type_contiguous(int, MPI_Datatype, MPI_Datatype*) MPC_DT_WEAK(MPI_Type_contiguous);
int MPI_Type_vector(int, int, int, MPI_Datatype, MPI_Datatype*) MPC_DT_WEAK(MPI_Type_vector);
int MPI_Type_create_hvector(int, int, MPI_Aint, MPI_Datatype, MPI_Datatype*) MPC_DT_WEAK(MPI_Type_create_hvector);
int MPI_Type_indexed(int, const int[], const int[], MPI_Datatype, MPI_Datatype*) MPC_DT_WEAK(MPI_Type_indexed);
int MPI_Type_create_hindexed(int, const int[], const MPI_Aint[], MPI_Datatype, MPI_Datatype*)
    MPC_DT_WEAK(MPI_Type_create_hindexed);
int MPI_Type_create_indexed_block(int, int, const int[], MPI_Datatype, MPI_Datatype*)
    MPC_DT_WEAK(MPI_Type_create_indexed_block);
int MPI_Type_create_hindexed_block(int, int, const MPI_Aint[], MPI_Datatype, MPI_Datatype*)
    MPC_DT_WEAK(MPI_Type_create_hindexed_block);
int MPI_Type_create_struct(int, const int[], const MPI_Aint[], const MPI_Datatype[], MPI_Datatype*)
    MPC_DT_WEAK(MPI_Type_create_struct);
int MPI_Type_create_subarray(int, const int[], const int[], const int[], int, MPI_Datatype, MPI_Datatype*)
    MPC_DT_WEAK(MPI_Type_create_subarray);
int MPI_Type_create_darray(int, int, int, const int[], const int[], const int[], const int[], int, MPI_Datatype,
                           MPI_Datatype*) MPC_DT_WEAK(MPI_Type_create_darray);
int MPI_Type_create_resized(MPI_Datatype, MPI_Aint, MPI_Aint, MPI_Datatype*) MPC_DT_WEAK(MPI_Type_create_resized);
int MPI_Type_dup(MPI_Datatype, MPI_Datatype*) MPC_DT_WEAK(MPI_Type_dup);
int MPI_Type_commit(MPI_Datatype*) MPC_DT_WEAK(MPI_Type_commit);
int MPI_Type_free(MPI_Datatype*) MPC_DT_WEAK(MPI_Type_free);
int MPI_Type_get_extent(MPI_Datatype, MPI_Aint*, MPI_Aint*) MPC_DT_WEAK(MPI_Type_get_extent);
int MPI_Type_get_extent_x(MPI_Datatype, MPI_Count*, MPI_Count*) MPC_DT_WEAK(MPI_Type_get_extent_x);
int MPI_Type_get_true_extent(MPI_Datatype, MPI_Aint*, MPI_Aint*) MPC_DT_WEAK(MPI_Type_get_true_extent);
int MPI_Type_get_true_extent_x(MPI_Datatype, MPI_Count*, MPI_Count*) MPC_DT_WEAK(MPI_Type_get_true_extent_x);
int MPI_Type_size(MPI_Datatype, int*) MPC_DT_WEAK(MPI_Type_size);
int MPI_Type_size_x(MPI_Datatype, MPI_Count*) MPC_DT_WEAK(MPI_Type_size_x);
int MPI_Type_get_envelope(MPI_Datatype, int*, int*, int*, int*) MPC_DT_WEAK(MPI_Type_get_envelope);
int MPI_Type_get_contents(MPI_Datatype, int, int, int, int[], MPI_Aint[], MPI_Datatype[])
    MPC_DT_WEAK(MPI_Type_get_contents);
int MPI_Type_set_name(MPI_Datatype, const char*) MPC_DT_WEAK(MPI_Type_set_name);
int MPI_Type_get_name(MPI_Datatype, char*, int*) MPC_DT_WEAK(MPI_Type_get_name);
int MPI_Type_match_size(int, int, MPI_Datatype*) MPC_DT_WEAK(MPI_Type_match_size);

}  // extern "C"

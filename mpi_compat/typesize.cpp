/// \file
/// Element sizes for the basic collectives, which copy raw bytes (coll_basic.cpp).

#include "mpi_compat/binding.hpp"
#include "mpi_compat/datatype/handles.hpp"

namespace mpc::mpi {

std::size_t type_size(MPI_Datatype t) noexcept {
    const datatype* d = datatype_for_comm(t);
    if (d == nullptr) {
        return 0;
    }
    // Predefined types (the MINLOC/MAXLOC pairs included) are copied whole, padding and all.
    if (d->is_predefined()) {
        return static_cast<std::size_t>(d->extent());
    }
    // Derived types only when count elements are one block starting at the buffer.
    return d->is_contiguous() && d->true_lb() == 0 ? static_cast<std::size_t>(d->size()) : 0;
}

}  // namespace mpc::mpi

/// \file
/// Internal: the table row of a predefined datatype (the plan compiler reads the components).
#pragma once

#include "mpi_compat/datatype/datatype.hpp"

namespace mpc::mpi {

struct predefined_entry {
    basic_info info;
    int align;   ///< alignof the C type
    int extent;  ///< sizeof the C type (padding of pair structs included)
    int ncomp;   ///< data components: 1 for a basic type, 2 for a pair type, 0 for MPI_LB/MPI_UB
    struct {
        int offset;  ///< offsetof the component
        int kind;    ///< predefined index of its basic type
    } comp[2];
};

/// The row of predefined index `index` (0 .. MPC_DATATYPE_PREDEFINED_COUNT-1).
const predefined_entry& predefined_entry_of(int index) noexcept;

}  // namespace mpc::mpi

/// \file
/// The slot helpers of shm.cpp that the non-blocking small calls (shm_nb.cpp) share.
#pragma once

#include "mpi_compat/coll/shm.hpp"

namespace mpc::mpi::coll::shm::detail {

/// Wakes every ULT parked on the slot.
void wake(slot& s) noexcept;
/// Whether the slot serves call x now.
bool serves(const slot& s, std::uint64_t x) noexcept;
/// The call's slot, once the call seq - n_slots has left it (may yield).
slot& take_slot(const args& a, const char* what) noexcept;
/// Packs (buf, count, t) into dst; unpacks `bytes` packed bytes from src into (buf, count, t).
void pack_into(void* dst, const void* buf, count_t count, const datatype& t) noexcept;
void unpack_from(const void* src, std::size_t bytes, void* buf, count_t count, const datatype& t) noexcept;
/// Whether a member's reduction input fits its cell (a dense image of the view).
bool view_fits_cell(const red_view& v) noexcept;
/// acc = x0 op (x1 op ... op x(size-1)) over the members' cells (every element).
void reduce_cells(const slot& s, const red_view& v, int size, void* acc_base) noexcept;

}  // namespace mpc::mpi::coll::shm::detail

// mpi_f08's non-contiguous buffers (mpi_compat/fortran/f08/buffers.cpp) on C descriptors made
// here: for sections of rank 1 to 3 with positive and negative strides, every count from 1 to
// the section's size, the (address, count, datatype) that mpc_f08_buffer gives must select the
// section's first `count` elements in array element order (checked by MPI_Pack against a
// gather done here), and a copy must go back into the section and nowhere else. No MPI_Init
// needed: only datatype calls are made. buffers.cpp is compiled into this test (its entry
// points are internal to libmpc), with a stand-in for the request hook it does not use here.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "mpi_compat/datatype/handles.hpp"
#include "mpi_compat/fortran/f08/buffers.h"

extern "C" int mpc_request_on_release(MPI_Request, void (*)(void*), void*) { return MPI_ERR_REQUEST; }

namespace {

// A Fortran array double a(6, 5, 4) holding 0, 1, 2, ... in array element order.
constexpr int d0 = 6, d1 = 5, d2 = 4;

struct section {
    int rank;
    int first[3];   // 0-based start index per dimension
    int extent[3];  // elements per dimension
    int step[3];    // index step per dimension (may be negative)
};

class F08Buffers : public ::testing::Test {
protected:
    void SetUp() override {
        a_.resize(d0 * d1 * d2);
        for (std::size_t i = 0; i < a_.size(); ++i) {
            a_[i] = double(i);
        }
        live_ = mpc::mpi::datatype_handles_live();
    }
    void TearDown() override {
        EXPECT_EQ(mpc::mpi::datatype_handles_live(), live_) << "leaked datatype handles";
        EXPECT_EQ(mpc_f08_buffers_held(), 0);
    }

    // The descriptor of section s of a (element length elem_len: 16 views pairs of doubles).
    CFI_cdesc_t* describe(const section& s, std::size_t elem_len = 8) {
        auto* d = reinterpret_cast<CFI_cdesc_t*>(&desc_);
        const CFI_index_t mult[3] = {1, d0, d0 * d1};
        std::ptrdiff_t off = 0;
        for (int i = 0; i < s.rank; ++i) {
            off += s.first[i] * mult[i];
            d->dim[i].lower_bound = 1;
            d->dim[i].extent = s.extent[i];
            d->dim[i].sm = CFI_index_t(s.step[i] * mult[i] * 8);
        }
        d->base_addr = a_.data() + off;
        d->elem_len = elem_len;
        d->version = CFI_VERSION;
        d->rank = CFI_rank_t(s.rank);
        d->attribute = CFI_attribute_other;
        d->type = CFI_type_other;
        return d;
    }

    // The section's elements in array element order (elem_len bytes each).
    std::vector<char> gather(const CFI_cdesc_t* d) {
        std::vector<char> out;
        CFI_index_t idx[3] = {0, 0, 0};
        CFI_index_t n = 1;
        for (int i = 0; i < d->rank; ++i) {
            n *= d->dim[i].extent;
        }
        for (CFI_index_t k = 0; k < n; ++k) {
            const char* p = static_cast<const char*>(d->base_addr);
            for (int i = 0; i < d->rank; ++i) {
                p += idx[i] * d->dim[i].sm;
            }
            out.insert(out.end(), p, p + d->elem_len);
            for (int i = 0; i < d->rank && ++idx[i] == d->dim[i].extent; ++i) {
                idx[i] = 0;
            }
        }
        return out;
    }

    std::vector<double> a_;
    CFI_CDESC_T(3) desc_;
    std::size_t live_ = 0;
};

const section shapes[] = {
    {1, {0, 0, 0}, {3, 1, 1}, {2, 1, 1}},     // a(1:5:2, 1, 1)
    {1, {5, 0, 0}, {6, 1, 1}, {-1, 1, 1}},    // a(6:1:-1, 1, 1)
    {1, {2, 0, 0}, {5, 1, 1}, {0, 0, 0}},     // a(3, 1:5, 1) as a rank-1 section (step below)
    {2, {0, 1, 0}, {3, 4, 1}, {2, 1, 1}},     // a(1:5:2, 2:5, 1)
    {2, {4, 0, 0}, {2, 3, 1}, {-3, 2, 1}},    // a(5:2:-3, 1:5:2, 1)
    {3, {1, 0, 0}, {2, 2, 4}, {3, 3, 1}},     // a(2:5:3, 1:4:3, :)
    {3, {0, 4, 3}, {6, 2, 2}, {1, -2, -3}},   // a(:, 5:3:-2, 4:1:-3): contiguous rows
    {3, {0, 0, 1}, {6, 5, 1}, {1, 1, 1}},     // a(:, :, 2): contiguous
};

section fixed(section s) {
    if (s.rank == 1 && s.step[0] == 0) {  // a(3, 1:5, 1): stride d0 over the first dimension
        s.first[1] = 0;
        s.step[0] = d0;
    }
    return s;
}

// Every count of the whole section d as a point-to-point buffer of MPI_DOUBLEs: the type must
// select the first `count` doubles of the section without a copy.
void check_whole(const CFI_cdesc_t* d, const std::vector<char>& want, const char* what) {
    for (int count = 1; count <= int(want.size() / 8); ++count) {
        SCOPED_TRACE(testing::Message() << what << ", count " << count);
        mpc_f08_call c;
        mpc_f08_begin(&c, "test", MPI_COMM_WORLD);
        void* p = nullptr;
        MPI_Fint cnt = count, type = MPI_DOUBLE;
        mpc_f08_buffer(&c, d, &p, &cnt, &type, MPC_F08_WHOLE | MPC_F08_OWN_TYPE);
        ASSERT_EQ(c.err, MPI_SUCCESS);
        EXPECT_EQ(p, d->base_addr) << "no copy";
        if (mpc_f08_contiguous(d)) {
            EXPECT_EQ(c.n, 0);
        } else {
            EXPECT_EQ(cnt, 1);
            EXPECT_NE(type, MPI_DOUBLE);
        }
        std::vector<char> packed(want.size());
        int pos = 0;
        ASSERT_EQ(MPI_Pack(p, cnt, type, packed.data(), int(packed.size()), &pos, MPI_COMM_WORLD), MPI_SUCCESS);
        ASSERT_EQ(pos, count * 8);
        EXPECT_EQ(std::memcmp(packed.data(), want.data(), std::size_t(pos)), 0);
        MPI_Fint ierror = MPI_SUCCESS;
        mpc_f08_end(&c, &ierror, nullptr);
        EXPECT_EQ(ierror, MPI_SUCCESS);
    }
}

TEST_F(F08Buffers, WholeBuffersSelectTheFirstCountElements) {
    int i = 0;
    for (const section& raw : shapes) {
        const CFI_cdesc_t* d = describe(fixed(raw));
        check_whole(d, gather(d), (std::string("shape ") + std::to_string(i++)).c_str());
    }
}

TEST_F(F08Buffers, TwoDatatypesPerElement) {
    // a(1:12:4, 1:3:2, 1) viewed as pairs of doubles (elem_len 16, like COMPLEX(8)): odd
    // counts end half-way into an element
    const section s = {2, {0, 0, 0}, {3, 2, 1}, {4, 2, 1}};
    const CFI_cdesc_t* d = describe(s, 16);
    check_whole(d, gather(d), "pairs");
}

TEST_F(F08Buffers, ResizedTypeForPerRankBuffers) {
    // one-dimensional once merged: the datatype resized to the stride, count unchanged
    const section s = {1, {1, 0, 0}, {3, 1, 1}, {2, 1, 1}};
    const CFI_cdesc_t* d = describe(s);
    mpc_f08_call c;
    mpc_f08_begin(&c, "test", MPI_COMM_WORLD);
    void* p = nullptr;
    MPI_Fint cnt = 3, type = MPI_DOUBLE;
    mpc_f08_buffer(&c, d, &p, &cnt, &type, MPC_F08_OWN_TYPE | MPC_F08_OUT);
    ASSERT_EQ(c.err, MPI_SUCCESS);
    EXPECT_EQ(cnt, 3);
    MPI_Aint lb = -1, ext = 0;
    MPI_Type_get_extent(type, &lb, &ext);
    EXPECT_EQ(lb, 0);
    EXPECT_EQ(ext, 16);
    MPI_Fint ierror = MPI_SUCCESS;
    mpc_f08_end(&c, &ierror, nullptr);
}

TEST_F(F08Buffers, CopiesGoBackIntoTheSectionOnly) {
    // no datatype of its own (a reduction's buffer): a contiguous copy, copied back after
    const section s = {2, {1, 1, 0}, {2, 3, 1}, {3, 2, 1}};
    const CFI_cdesc_t* d = describe(s);
    const std::vector<double> before = a_;
    mpc_f08_call c;
    mpc_f08_begin(&c, "test", MPI_COMM_WORLD);
    void* p = nullptr;
    MPI_Fint cnt = 6, type = MPI_DOUBLE;
    mpc_f08_buffer(&c, d, &p, &cnt, &type, MPC_F08_OUT);
    ASSERT_EQ(c.err, MPI_SUCCESS);
    EXPECT_NE(p, d->base_addr);
    EXPECT_EQ(mpc_f08_buffers_held(), 1);
    const std::vector<char> in = gather(d);
    EXPECT_EQ(std::memcmp(p, in.data(), in.size()), 0);
    auto* tmp = static_cast<double*>(p);
    for (int i = 0; i < 6; ++i) {
        tmp[i] = -1.0 - i;
    }
    MPI_Fint ierror = MPI_SUCCESS;
    mpc_f08_end(&c, &ierror, nullptr);
    const std::vector<char> out = gather(d);
    for (int i = 0; i < 6; ++i) {
        double v = 0;
        std::memcpy(&v, out.data() + 8 * i, 8);
        EXPECT_EQ(v, -1.0 - i);
    }
    int changed = 0;
    for (std::size_t i = 0; i < a_.size(); ++i) {
        changed += a_[i] != before[i];
    }
    EXPECT_EQ(changed, 6) << "only the section's elements change";
}

}  // namespace

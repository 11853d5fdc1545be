// The datatype C bindings: handles (life cycle, invalid and freed handles, concurrent use),
// error classes, queries, envelope/contents, names, packing and element counts. No MPI_Init is
// needed: the datatype calls do not use the runtime.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <climits>
#include <cstring>
#include <thread>
#include <vector>

#include "mpi_compat/datatype/handles.hpp"

namespace {

// Fails the test if a test leaks derived handles.
class DatatypeBindings : public ::testing::Test {
protected:
    void SetUp() override { live_ = mpc::mpi::datatype_handles_live(); }
    void TearDown() override { EXPECT_EQ(mpc::mpi::datatype_handles_live(), live_) << "leaked datatype handles"; }

private:
    std::size_t live_ = 0;
};

TEST_F(DatatypeBindings, LifeCycleAndInvalidHandles) {
    MPI_Datatype v = MPI_DATATYPE_NULL;
    ASSERT_EQ(MPI_Type_vector(3, 2, 4, MPI_INT, &v), MPI_SUCCESS);
    EXPECT_EQ(v >> 24, MPC_HANDLE_KIND_DATATYPE);
    EXPECT_GE(v & 0xffffff, MPC_DATATYPE_PREDEFINED_COUNT);
    ASSERT_EQ(MPI_Type_commit(&v), MPI_SUCCESS);
    int size = 0;
    EXPECT_EQ(MPI_Type_size(v, &size), MPI_SUCCESS);
    EXPECT_EQ(size, 24);
    const MPI_Datatype old = v;
    ASSERT_EQ(MPI_Type_free(&v), MPI_SUCCESS);
    EXPECT_EQ(v, MPI_DATATYPE_NULL);
    // A freed handle is invalid.
    EXPECT_EQ(MPI_Type_size(old, &size), MPI_ERR_TYPE);
    MPI_Datatype again = old;
    EXPECT_EQ(MPI_Type_free(&again), MPI_ERR_TYPE);
    // Predefined, null and foreign handles.
    MPI_Datatype pre = MPI_INT;
    EXPECT_EQ(MPI_Type_free(&pre), MPI_ERR_TYPE);
    EXPECT_EQ(MPI_Type_size(MPI_DATATYPE_NULL, &size), MPI_ERR_TYPE);
    EXPECT_EQ(MPI_Type_size(MPI_COMM_WORLD, &size), MPI_ERR_TYPE);
    EXPECT_EQ(MPI_Type_size(MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 0xfffff0), &size), MPI_ERR_TYPE);
    MPI_Datatype n = MPI_DATATYPE_NULL;
    EXPECT_EQ(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &n), MPI_ERR_TYPE);
    EXPECT_EQ(mpc::mpi::datatype_for_comm(MPI_LB), nullptr);
    EXPECT_NE(mpc::mpi::datatype_for_comm(MPI_DOUBLE), nullptr);
}

TEST_F(DatatypeBindings, ErrorClasses) {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    EXPECT_EQ(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT_EQ(MPI_Type_vector(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT_EQ(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT_EQ(MPI_Type_contiguous(2, MPI_INT, nullptr), MPI_ERR_ARG);
    const int bl[] = {1, 1};
    const MPI_Aint d[] = {0, 8};
    const MPI_Datatype types[] = {MPI_INT, MPI_DATATYPE_NULL};
    EXPECT_EQ(MPI_Type_create_struct(2, bl, d, types, &t), MPI_ERR_TYPE);
    const int sz[] = {4}, sub[] = {5}, st[] = {0};
    EXPECT_EQ(MPI_Type_create_subarray(1, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    const int g[] = {8}, dist[] = {MPI_DISTRIBUTE_BLOCK}, darg[] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[] = {3};
    EXPECT_EQ(MPI_Type_create_darray(2, 0, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT_EQ(t, MPI_DATATYPE_NULL);  // outputs are set only on success
    EXPECT_EQ(MPI_Type_commit(nullptr), MPI_ERR_ARG);
}

TEST_F(DatatypeBindings, StructFromAddresses) {
    struct particle {
        char tag;
        double pos[3];
        int id;
    } p[2] = {};
    MPI_Aint base, a_tag, a_pos, a_id;
    MPI_Get_address(&p[0], &base);
    MPI_Get_address(&p[0].tag, &a_tag);
    MPI_Get_address(&p[0].pos, &a_pos);
    MPI_Get_address(&p[0].id, &a_id);
    const int bl[] = {1, 3, 1};
    const MPI_Aint d[] = {MPI_Aint_diff(a_tag, base), MPI_Aint_diff(a_pos, base), MPI_Aint_diff(a_id, base)};
    const MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_Datatype t;
    ASSERT_EQ(MPI_Type_create_struct(3, bl, d, types, &t), MPI_SUCCESS);
    MPI_Aint lb, extent, tlb, text;
    MPI_Type_get_extent(t, &lb, &extent);
    MPI_Type_get_true_extent(t, &tlb, &text);
    EXPECT_EQ(lb, 0);
    EXPECT_EQ(extent, MPI_Aint(sizeof(particle)));
    EXPECT_EQ(tlb, 0);
    EXPECT_EQ(text, MPI_Aint(offsetof(particle, id) + sizeof(int)));
    MPI_Count size_x, lb_x, ext_x;
    MPI_Type_size_x(t, &size_x);
    MPI_Type_get_extent_x(t, &lb_x, &ext_x);
    EXPECT_EQ(size_x, 1 + 24 + 4);
    EXPECT_EQ(ext_x, MPI_Count(sizeof(particle)));
    // Absolute addresses from MPI_BOTTOM.
    const MPI_Aint abs[] = {a_tag, a_pos, a_id};
    MPI_Datatype ta;
    ASSERT_EQ(MPI_Type_create_struct(3, bl, abs, types, &ta), MPI_SUCCESS);
    ASSERT_EQ(MPI_Type_commit(&ta), MPI_SUCCESS);
    p[0] = {'x', {1, 2, 3}, 42};
    char buf[64];
    int pos = 0;
    ASSERT_EQ(MPI_Pack(MPI_BOTTOM, 1, ta, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(pos, 29);
    EXPECT_EQ(buf[0], 'x');
    int id;
    std::memcpy(&id, buf + 25, 4);
    EXPECT_EQ(id, 42);
    MPI_Type_free(&t);
    MPI_Type_free(&ta);
}

TEST_F(DatatypeBindings, EnvelopeAndContents) {
    int ni, na, nd, comb;
    ASSERT_EQ(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &comb), MPI_SUCCESS);
    EXPECT_EQ(comb, MPI_COMBINER_NAMED);
    EXPECT_EQ(ni + na + nd, 0);
    int ints[8];
    MPI_Aint aints[8];
    MPI_Datatype types[8];
    EXPECT_EQ(MPI_Type_get_contents(MPI_DOUBLE, 8, 8, 8, ints, aints, types), MPI_ERR_ARG);

    MPI_Datatype v, h, s;
    MPI_Type_vector(2, 3, 5, MPI_INT, &v);
    MPI_Type_create_hvector(4, 1, 100, v, &h);
    const int bl[] = {1, 2};
    const MPI_Aint d[] = {0, 16};
    const MPI_Datatype ts[] = {MPI_FLOAT, h};
    MPI_Type_create_struct(2, bl, d, ts, &s);
    ASSERT_EQ(MPI_Type_get_envelope(h, &ni, &na, &nd, &comb), MPI_SUCCESS);
    EXPECT_EQ(comb, MPI_COMBINER_HVECTOR);
    EXPECT_EQ(ni, 2);
    EXPECT_EQ(na, 1);
    EXPECT_EQ(nd, 1);
    ASSERT_EQ(MPI_Type_get_contents(h, ni, na, nd, ints, aints, types), MPI_SUCCESS);
    EXPECT_EQ(ints[0], 4);
    EXPECT_EQ(ints[1], 1);
    EXPECT_EQ(aints[0], 100);
    // The vector comes back as a new handle to an equivalent type, which the caller frees.
    int size;
    MPI_Type_size(types[0], &size);
    EXPECT_EQ(size, 24);
    MPI_Type_get_envelope(types[0], &ni, &na, &nd, &comb);
    EXPECT_EQ(comb, MPI_COMBINER_VECTOR);
    MPI_Type_free(&types[0]);
    ASSERT_EQ(MPI_Type_get_envelope(s, &ni, &na, &nd, &comb), MPI_SUCCESS);
    EXPECT_EQ(comb, MPI_COMBINER_STRUCT);
    EXPECT_EQ(MPI_Type_get_contents(s, ni - 1, na, nd, ints, aints, types), MPI_ERR_ARG);
    ASSERT_EQ(MPI_Type_get_contents(s, ni, na, nd, ints, aints, types), MPI_SUCCESS);
    EXPECT_EQ(types[0], MPI_FLOAT);  // predefined parts keep their handles
    MPI_Type_free(&types[1]);
    // Freeing the parts' handles keeps the struct usable.
    MPI_Type_free(&v);
    MPI_Type_free(&h);
    EXPECT_EQ(MPI_Type_commit(&s), MPI_SUCCESS);
    MPI_Type_size(s, &size);
    EXPECT_EQ(size, 4 + 2 * 4 * 24);
    MPI_Type_free(&s);
}

TEST_F(DatatypeBindings, Names) {
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    ASSERT_EQ(MPI_Type_get_name(MPI_LONG_DOUBLE_INT, name, &len), MPI_SUCCESS);
    EXPECT_STREQ(name, "MPI_LONG_DOUBLE_INT");
    EXPECT_EQ(len, 19);
    MPI_Datatype c;
    MPI_Type_contiguous(3, MPI_INT, &c);
    MPI_Type_get_name(c, name, &len);
    EXPECT_EQ(len, 0);
    MPI_Type_set_name(c, "triple");
    MPI_Type_get_name(c, name, &len);
    EXPECT_STREQ(name, "triple");
    MPI_Type_free(&c);
    MPI_Datatype m;
    EXPECT_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m), MPI_SUCCESS);
    EXPECT_EQ(m, MPI_DOUBLE);
    EXPECT_EQ(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &m), MPI_SUCCESS);
    EXPECT_EQ(m, MPI_INT16_T);
    EXPECT_EQ(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 3, &m), MPI_ERR_ARG);
}

TEST_F(DatatypeBindings, PackUnpack) {
    MPI_Datatype col;
    MPI_Type_vector(3, 1, 4, MPI_DOUBLE, &col);
    double m[3][4];
    for (int i = 0; i < 12; ++i) {
        m[i / 4][i % 4] = i;
    }
    char buf[64];
    int pos = 0;
    EXPECT_EQ(MPI_Pack(m, 1, col, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);  // not committed
    MPI_Type_commit(&col);
    int psize = 0;
    MPI_Pack_size(2, col, MPI_COMM_WORLD, &psize);
    EXPECT_EQ(psize, 48);
    ASSERT_EQ(MPI_Pack(&m[0][1], 1, col, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(pos, 24);
    EXPECT_EQ(MPI_Pack(m, 2, col, buf, 40, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    EXPECT_EQ(pos, 24);
    EXPECT_EQ(MPI_Pack(m, -1, col, buf, 40, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
    double out[3] = {};
    pos = 0;
    ASSERT_EQ(MPI_Unpack(buf, 24, &pos, out, 3, MPI_DOUBLE, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(out[0], 1);
    EXPECT_EQ(out[1], 5);
    EXPECT_EQ(out[2], 9);
    pos = 8;
    EXPECT_EQ(MPI_Unpack(buf, 24, &pos, out, 3, MPI_DOUBLE, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    MPI_Type_free(&col);
}

TEST_F(DatatypeBindings, External32) {
    MPI_Aint size = 0;
    ASSERT_EQ(MPI_Pack_external_size("external32", 3, MPI_LONG, &size), MPI_SUCCESS);
    EXPECT_EQ(size, 12);
    EXPECT_EQ(MPI_Pack_external_size("native", 3, MPI_LONG, &size), MPI_ERR_ARG);
    const int v[] = {1, -1};
    unsigned char buf[16];
    MPI_Aint pos = 0;
    ASSERT_EQ(MPI_Pack_external("external32", v, 2, MPI_INT, buf, sizeof buf, &pos), MPI_SUCCESS);
    EXPECT_EQ(pos, 8);
    EXPECT_EQ(buf[3], 1);
    EXPECT_EQ(buf[4], 0xff);
    int back[2];
    pos = 0;
    ASSERT_EQ(MPI_Unpack_external("external32", buf, 8, &pos, back, 2, MPI_INT), MPI_SUCCESS);
    EXPECT_EQ(back[1], -1);
    const long big = 1L << 40;
    pos = 0;
    EXPECT_EQ(MPI_Pack_external("external32", &big, 1, MPI_LONG, buf, sizeof buf, &pos), MPI_ERR_CONVERSION);
    EXPECT_EQ(MPI_Pack_external("external32", v, 2, MPI_INT, buf, 7, &pos), MPI_ERR_TRUNCATE);
}

TEST_F(DatatypeBindings, ElementsAndStatus) {
    MPI_Status st;
    std::memset(&st, 0, sizeof st);
    ASSERT_EQ(MPI_Status_set_elements(&st, MPI_DOUBLE_INT, 3), MPI_SUCCESS);  // a pair and a double
    int n = 0;
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
    EXPECT_EQ(n, 3);
    MPI_Count nx = 0;
    MPI_Get_elements_x(&st, MPI_DOUBLE, &nx);
    EXPECT_EQ(nx, MPI_UNDEFINED);  // 20 bytes are not whole doubles
    MPI_Get_elements_x(&st, MPI_INT, &nx);
    EXPECT_EQ(nx, 5);
    EXPECT_EQ(MPI_Get_elements(nullptr, MPI_INT, &n), MPI_ERR_ARG);
    EXPECT_EQ(MPI_Get_elements(&st, MPI_DATATYPE_NULL, &n), MPI_ERR_TYPE);
    // A large byte count survives the status encoding.
    ASSERT_EQ(MPI_Status_set_elements_x(&st, MPI_DOUBLE, 3LL << 32), MPI_SUCCESS);
    MPI_Get_elements_x(&st, MPI_DOUBLE, &nx);
    EXPECT_EQ(nx, 3LL << 32);
    MPI_Get_elements(&st, MPI_DOUBLE, &n);
    EXPECT_EQ(n, MPI_UNDEFINED);
}

TEST_F(DatatypeBindings, ConcurrentCreateAndFree) {
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int k = 0; k < 4; ++k) {
        threads.emplace_back([k, &failures] {
            std::vector<MPI_Datatype> mine;
            for (int i = 0; i < 2000; ++i) {
                MPI_Datatype t;
                if (MPI_Type_contiguous(k * 10000 + i + 1, MPI_CHAR, &t) != MPI_SUCCESS) {
                    ++failures;
                    continue;
                }
                mine.push_back(t);
                if (i % 3 == 0) {
                    MPI_Type_free(&mine.front());
                    mine.erase(mine.begin());
                }
            }
            for (MPI_Datatype& t : mine) {
                int size = 0;
                MPI_Type_size(t, &size);
                if (size < k * 10000 || size > k * 10000 + 2000) {
                    ++failures;
                }
                MPI_Type_free(&t);
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_EQ(failures.load(), 0);
}

TEST_F(DatatypeBindings, ProfilingNames) {
    int a = 0, b = 0;
    EXPECT_EQ(MPI_Type_size(MPI_C_DOUBLE_COMPLEX, &a), PMPI_Type_size(MPI_C_DOUBLE_COMPLEX, &b));
    EXPECT_EQ(a, 16);
    EXPECT_EQ(a, b);
    EXPECT_EQ(MPI_Aint_add(100, -4), 96);
}

// MPI_Type_create_f90_*: one cached handle per (p, r), laid out as the predefined type it stands
// for, never freed (and not counted as a live derived handle), with an F90 envelope.
TEST_F(DatatypeBindings, F90Types) {
    MPI_Datatype r = MPI_DATATYPE_NULL, again = MPI_DATATYPE_NULL;
    ASSERT_EQ(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &r), MPI_SUCCESS);
    ASSERT_EQ(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &again), MPI_SUCCESS);
    EXPECT_EQ(r, again);
    EXPECT_GE(r & 0xffffff, MPC_DATATYPE_PREDEFINED_COUNT);
    int size = 0;
    MPI_Aint lb = -1, extent = 0, packed = 0;
    EXPECT_EQ(MPI_Type_size(r, &size), MPI_SUCCESS);
    EXPECT_EQ(size, 8);
    EXPECT_EQ(MPI_Type_get_extent(r, &lb, &extent), MPI_SUCCESS);
    EXPECT_EQ(lb, 0);
    EXPECT_EQ(extent, 8);
    EXPECT_EQ(MPI_Pack_external_size("external32", 3, r, &packed), MPI_SUCCESS);
    EXPECT_EQ(packed, 24);
    int ni = -1, na = -1, nd = -1, comb = 0, ints[2] = {};
    EXPECT_EQ(MPI_Type_get_envelope(r, &ni, &na, &nd, &comb), MPI_SUCCESS);
    EXPECT_EQ(comb, MPI_COMBINER_F90_REAL);
    EXPECT_EQ(ni, 2);
    EXPECT_EQ(na + nd, 0);
    EXPECT_EQ(MPI_Type_get_contents(r, 2, 0, 0, ints, nullptr, nullptr), MPI_SUCCESS);
    EXPECT_EQ(ints[0], 10);
    EXPECT_EQ(ints[1], MPI_UNDEFINED);
    again = r;
    EXPECT_EQ(MPI_Type_free(&again), MPI_ERR_TYPE);
    EXPECT_EQ(again, r);
    EXPECT_NE(mpc::mpi::datatype_for_comm(r), nullptr);  // committed

    MPI_Datatype i = MPI_DATATYPE_NULL;
    ASSERT_EQ(MPI_Type_create_f90_integer(3, &i), MPI_SUCCESS);
    EXPECT_EQ(MPI_Type_size(i, &size), MPI_SUCCESS);
    EXPECT_EQ(size, 2);
    EXPECT_EQ(MPI_Type_create_f90_integer(40, &i), MPI_ERR_ARG);
    EXPECT_EQ(MPI_Type_create_f90_complex(MPI_UNDEFINED, MPI_UNDEFINED, &i), MPI_ERR_ARG);
}

// Datatype attributes from plain threads (no rank), each on its own types, all at once.
TEST_F(DatatypeBindings, ConcurrentAttributes) {
    int kv = MPI_KEYVAL_INVALID;
    auto count = +[](MPI_Datatype, int, void* value, void*) -> int {
        ++*static_cast<int*>(value);
        return MPI_SUCCESS;
    };
    ASSERT_EQ(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count, &kv, nullptr), MPI_SUCCESS);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k) {
        threads.emplace_back([&] {
            int deletes = 0;
            for (int n = 0; n < 500; ++n) {
                MPI_Datatype t = MPI_DATATYPE_NULL, d = MPI_DATATYPE_NULL;
                void* got = nullptr;
                int flag = 0;
                MPI_Type_contiguous(3, MPI_INT, &t);
                MPI_Type_set_attr(t, kv, &deletes);
                MPI_Type_dup(t, &d);
                MPI_Type_get_attr(d, kv, &got, &flag);
                if (flag != 1 || got != &deletes) {
                    ++failures;
                }
                MPI_Type_free(&t);
                MPI_Type_free(&d);
            }
            if (deletes != 1000) {
                ++failures;
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(MPI_Type_free_keyval(&kv), MPI_SUCCESS);
}

}  // namespace

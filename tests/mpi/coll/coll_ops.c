/* Reduction operations (issue 6), against a serial reference:
 *
 *   coll_ops values   every predefined operation on every predefined type the standard defines
 *                     it on (MPI 3.1 section 5.9.2: C integer, Fortran integer, floating point,
 *                     logical, complex, byte and multi-language groups, f90 types, and
 *                     MINLOC/MAXLOC on the pair types, ties going to the lower index) through
 *                     MPI_Allreduce, MPI_Reduce, MPI_Scan, MPI_Allreduce in place and
 *                     MPI_Reduce_local; user operations, commutative and not (a string
 *                     concatenation that must come out in rank order through Reduce at every
 *                     root, Allreduce, Scan, Exscan, Reduce_scatter_block, Reduce_local);
 *                     MPI_Op_commutative and MPI_Op_free; floating-point sums that must give the
 *                     same bits on every repetition and on every rank.
 *   coll_ops errors   every predefined operation on every predefined type it is not defined on
 *                     (MPI_WCHAR is in no group; MPI_REPLACE and MPI_NO_OP are for
 *                     one-sided accumulates only, MPI 3.1 section 11.3.4) gives MPI_ERR_OP in
 *                     MPI_Allreduce, MPI_Reduce, MPI_Scan, MPI_Reduce_scatter_block and
 *                     MPI_Reduce_local, as do MPI_OP_NULL and a freed user operation;
 *                     MPI_Op_free on a predefined operation fails; the job goes on correctly.
 *
 * The table is the standard's, with the extensions that Open MPI 4.1 and MPICH 4.0 both make
 * (measured with both, docs/collectives.md): MPI_CHAR and MPI_CHARACTER count as C integers,
 * and the logical operations take the multi-language integers. The extensions only one of them
 * makes stay errors here (MPICH: LAND/LOR/LXOR on floating point and on MPI_INTEGER; Open MPI:
 * arithmetic on MPI_BYTE); to accept one on purpose, add the group to the operation's row of
 * ops[].
 *
 * Values are chosen so that no result overflows and every floating-point result is exact in
 * any order (small integers), except in the determinism check. Exit status 0 on success. */
#include <complex.h>
#include <stddef.h>

#include "coll_common.h"

enum { G_CINT = 1, G_FINT = 2, G_FLOAT = 4, G_LOGICAL = 8, G_COMPLEX = 16, G_BYTE = 32, G_MULTI = 64, G_PAIR = 128 };
enum { K_SINT, K_UINT, K_REAL, K_CPLX, K_LOGIC, K_PAIR };

typedef struct {
    MPI_Datatype t;
    const char *name;
    int grp;
    int kind;
    int w;        /* width of a scalar (complex: of a component; pair: of the value) */
    int preal;    /* pair: the value is real (else a signed integer) */
    int iw;       /* pair: width of the index */
    int ireal;    /* pair: the index is real (MPI_2REAL, MPI_2DOUBLE_PRECISION) */
    size_t ioff;  /* pair: offset of the index */
    size_t ext;   /* size of the C type, = the datatype's extent */
} tdesc;

struct p_fi { float v; int i; };
struct p_di { double v; int i; };
struct p_li { long v; int i; };
struct p_ii { int v; int i; };
struct p_si { short v; int i; };
struct p_ldi { long double v; int i; };
struct p_ff { float v, i; };
struct p_dd { double v, i; };

#define SINT(t, g, c) {t, #t, g, K_SINT, (int)sizeof(c), 0, 0, 0, 0, sizeof(c)}
#define UINT(t, g, c) {t, #t, g, K_UINT, (int)sizeof(c), 0, 0, 0, 0, sizeof(c)}
#define REAL(t, c) {t, #t, G_FLOAT, K_REAL, (int)sizeof(c), 0, 0, 0, 0, sizeof(c)}
#define CPLX(t, c) {t, #t, G_COMPLEX, K_CPLX, (int)sizeof(c), 0, 0, 0, 0, 2 * sizeof(c)}
#define PAIR(t, s, preal, ireal) \
    {t, #t, G_PAIR, K_PAIR, (int)sizeof(((struct s *)0)->v), preal, (int)sizeof(((struct s *)0)->i), ireal, offsetof(struct s, i), sizeof(struct s)}

static const tdesc types[] = {
    /* C integer */
    SINT(MPI_INT, G_CINT, int), SINT(MPI_LONG, G_CINT, long), SINT(MPI_SHORT, G_CINT, short),
    UINT(MPI_UNSIGNED_SHORT, G_CINT, unsigned short), UINT(MPI_UNSIGNED, G_CINT, unsigned),
    UINT(MPI_UNSIGNED_LONG, G_CINT, unsigned long), SINT(MPI_LONG_LONG_INT, G_CINT, long long),
    UINT(MPI_UNSIGNED_LONG_LONG, G_CINT, unsigned long long), SINT(MPI_SIGNED_CHAR, G_CINT, signed char),
    UINT(MPI_UNSIGNED_CHAR, G_CINT, unsigned char), SINT(MPI_INT8_T, G_CINT, int8_t),
    SINT(MPI_INT16_T, G_CINT, int16_t), SINT(MPI_INT32_T, G_CINT, int32_t), SINT(MPI_INT64_T, G_CINT, int64_t),
    UINT(MPI_UINT8_T, G_CINT, uint8_t), UINT(MPI_UINT16_T, G_CINT, uint16_t), UINT(MPI_UINT32_T, G_CINT, uint32_t),
    UINT(MPI_UINT64_T, G_CINT, uint64_t),
    /* taken as C integers, as Open MPI and MPICH take them (the standard puts them in no group) */
    SINT(MPI_CHAR, G_CINT, char), SINT(MPI_CHARACTER, G_CINT, char),
    /* Fortran integer */
    SINT(MPI_INTEGER, G_FINT, int),
    /* floating point */
    REAL(MPI_FLOAT, float), REAL(MPI_DOUBLE, double), REAL(MPI_LONG_DOUBLE, long double), REAL(MPI_REAL, float),
    REAL(MPI_DOUBLE_PRECISION, double),
    /* logical */
    {MPI_C_BOOL, "MPI_C_BOOL", G_LOGICAL, K_LOGIC, 1, 0, 0, 0, 0, 1},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", G_LOGICAL, K_LOGIC, 1, 0, 0, 0, 0, 1},
    {MPI_LOGICAL, "MPI_LOGICAL", G_LOGICAL, K_LOGIC, (int)sizeof(int), 0, 0, 0, 0, sizeof(int)},
    /* complex */
    CPLX(MPI_C_COMPLEX, float), CPLX(MPI_C_FLOAT_COMPLEX, float), CPLX(MPI_C_DOUBLE_COMPLEX, double),
    CPLX(MPI_C_LONG_DOUBLE_COMPLEX, long double), CPLX(MPI_CXX_FLOAT_COMPLEX, float),
    CPLX(MPI_CXX_DOUBLE_COMPLEX, double), CPLX(MPI_CXX_LONG_DOUBLE_COMPLEX, long double), CPLX(MPI_COMPLEX, float),
    CPLX(MPI_DOUBLE_COMPLEX, double),
    /* byte */
    UINT(MPI_BYTE, G_BYTE, unsigned char),
    /* multi-language */
    SINT(MPI_AINT, G_MULTI, MPI_Aint), SINT(MPI_OFFSET, G_MULTI, MPI_Offset), SINT(MPI_COUNT, G_MULTI, MPI_Count),
    /* pairs (MINLOC / MAXLOC) */
    PAIR(MPI_FLOAT_INT, p_fi, 1, 0), PAIR(MPI_DOUBLE_INT, p_di, 1, 0), PAIR(MPI_LONG_INT, p_li, 0, 0),
    PAIR(MPI_2INT, p_ii, 0, 0), PAIR(MPI_SHORT_INT, p_si, 0, 0), PAIR(MPI_LONG_DOUBLE_INT, p_ldi, 1, 0),
    PAIR(MPI_2REAL, p_ff, 1, 1), PAIR(MPI_2DOUBLE_PRECISION, p_dd, 1, 1), PAIR(MPI_2INTEGER, p_ii, 0, 0),
    /* in no group: no predefined operation is defined on them */
    {MPI_WCHAR, "MPI_WCHAR", 0, K_SINT, (int)sizeof(int32_t), 0, 0, 0, 0, sizeof(int32_t)},
};
#define NTYPES ((int)(sizeof(types) / sizeof(types[0])))

typedef struct {
    MPI_Op op;
    const char *name;
    int grps; /* the groups it is defined on */
} odesc;

static const odesc ops[] = {
    {MPI_MAX, "MPI_MAX", G_CINT | G_FINT | G_FLOAT | G_MULTI},
    {MPI_MIN, "MPI_MIN", G_CINT | G_FINT | G_FLOAT | G_MULTI},
    {MPI_SUM, "MPI_SUM", G_CINT | G_FINT | G_FLOAT | G_COMPLEX | G_MULTI},
    {MPI_PROD, "MPI_PROD", G_CINT | G_FINT | G_FLOAT | G_COMPLEX | G_MULTI},
    {MPI_LAND, "MPI_LAND", G_CINT | G_LOGICAL | G_MULTI},
    {MPI_LOR, "MPI_LOR", G_CINT | G_LOGICAL | G_MULTI},
    {MPI_LXOR, "MPI_LXOR", G_CINT | G_LOGICAL | G_MULTI},
    {MPI_BAND, "MPI_BAND", G_CINT | G_FINT | G_BYTE | G_MULTI},
    {MPI_BOR, "MPI_BOR", G_CINT | G_FINT | G_BYTE | G_MULTI},
    {MPI_BXOR, "MPI_BXOR", G_CINT | G_FINT | G_BYTE | G_MULTI},
    {MPI_MINLOC, "MPI_MINLOC", G_PAIR},
    {MPI_MAXLOC, "MPI_MAXLOC", G_PAIR},
    {MPI_REPLACE, "MPI_REPLACE", 0},
    {MPI_NO_OP, "MPI_NO_OP", 0},
};
#define NOPS ((int)(sizeof(ops) / sizeof(ops[0])))
enum { O_MAX, O_MIN, O_SUM, O_PROD, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_MINLOC, O_MAXLOC };

/* ---- scalar access ------------------------------------------------------------------------ */

static long double rload(const void *p, int w) {
    if (w == 4) { float x; memcpy(&x, p, sizeof x); return x; }
    if (w == 8) { double x; memcpy(&x, p, sizeof x); return x; }
    long double x;
    memcpy(&x, p, sizeof x);
    return x;
}

static void rstore(void *p, int w, long double v) {
    if (w == 4) { float x = (float)v; memcpy(p, &x, sizeof x); }
    else if (w == 8) { double x = (double)v; memcpy(p, &x, sizeof x); }
    else { long double x = v; memcpy(p, &x, sizeof x); }
}

/* The integer of width w at p, sign- or zero-extended. */
static int64_t iload(const void *p, int w, int sgn) {
    switch (w) {
        case 1: { uint8_t x; memcpy(&x, p, 1); return sgn ? (int64_t)(int8_t)x : (int64_t)x; }
        case 2: { uint16_t x; memcpy(&x, p, 2); return sgn ? (int64_t)(int16_t)x : (int64_t)x; }
        case 4: { uint32_t x; memcpy(&x, p, 4); return sgn ? (int64_t)(int32_t)x : (int64_t)x; }
        default: { int64_t x; memcpy(&x, p, 8); return x; }
    }
}

static void istore(void *p, int w, int64_t v) {
    switch (w) {
        case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
        case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
        case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
        default: memcpy(p, &v, 8); break;
    }
}

/* v truncated to the type's width (wrap-around), extended back. */
static int64_t itrunc(int64_t v, int w, int sgn) {
    char b[8];
    istore(b, w, v);
    return iload(b, w, sgn);
}

/* ---- data ---------------------------------------------------------------------------------- */

/* Input element i of `rank` for operation o on type d, written at p. */
static void gen(const tdesc *d, int o, int rank, int i, int salt, void *p) {
    uint32_t h = coll_hash(coll_key((uint32_t)rank, (uint32_t)(salt * 131 + o)), (uint32_t)i);
    uint32_t h2 = coll_hash(h, 7);
    int sgn = d->kind == K_SINT;
    switch (d->kind) {
        case K_SINT:
        case K_UINT: {
            int64_t v;
            if (o == O_SUM) {
                int64_t m = d->w == 1 ? 1 : d->w == 2 ? 200 : 10000; /* |sum| <= 64 m fits */
                v = sgn ? (int64_t)(h % (uint32_t)(2 * m + 1)) - m : (int64_t)(h % (uint32_t)(2 * m + 1));
                if (!sgn && d->w == 1) v = h % 3;
            } else if (o == O_PROD) {
                /* 1, -1 or (on at most 6 ranks) 2: |product| <= 64 */
                v = (h % 16 == 0 && rank < 6) ? 2 : (sgn && h % 16 < 4) ? -1 : 1;
            } else if (o == O_LAND || o == O_LOR || o == O_LXOR) {
                /* element i % 3 == 0: true everywhere, == 1: false everywhere, else mixed; any
                 * non-zero value is true */
                v = i % 3 == 0 ? 1 + (int64_t)(h % 3) : i % 3 == 1 ? 0 : (h % 2 ? (int64_t)(h % 5) + 1 : 0);
            } else if (o == O_BAND) {
                v = ~(int64_t)(((uint64_t)1 << (h % (8u * (uint32_t)d->w))) | ((uint64_t)1 << (h2 % (8u * (uint32_t)d->w))));
            } else if (o == O_BOR) {
                v = (int64_t)(((uint64_t)1 << (h % (8u * (uint32_t)d->w))) | ((uint64_t)1 << (h2 % (8u * (uint32_t)d->w))));
            } else {
                v = (int64_t)(((uint64_t)h << 32) | h2); /* MAX, MIN, BXOR: any bits */
            }
            istore(p, d->w, itrunc(v, d->w, sgn));
            break;
        }
        case K_LOGIC: {
            int64_t v = i % 3 == 0 ? 1 : i % 3 == 1 ? 0 : (int64_t)(h % 2);
            istore(p, d->w, v);
            break;
        }
        case K_REAL: {
            long double v;
            if (o == O_PROD) v = (h % 16 == 0 && rank < 6) ? 2 : h % 16 < 4 ? -1 : 1;
            else if (o == O_SUM) v = (long double)(h % 2001) - 1000;
            else v = ((long double)(h % 200001) - 100000) / 4; /* MAX, MIN: quarters are exact */
            rstore(p, d->w, v);
            break;
        }
        case K_CPLX: {
            long double re, im;
            if (o == O_PROD) {
                /* 1, i, -1, -i, or (on at most 6 ranks) 1 + i: products stay small Gaussian integers */
                int k = (int)(h % 4);
                re = k == 0 ? 1 : k == 2 ? -1 : 0;
                im = k == 1 ? 1 : k == 3 ? -1 : 0;
                if (h % 16 == 5 && rank < 6) re = im = 1;
            } else {
                re = (long double)(h % 201) - 100;
                im = (long double)(h2 % 201) - 100;
            }
            rstore(p, d->w, re);
            rstore((char *)p + d->w, d->w, im);
            break;
        }
        case K_PAIR: {
            /* few distinct values (ties), indices decreasing with the rank: a tie must go to the
             * lower index, which is not the lower rank */
            long double v = (long double)(h % 5) - 2;
            long double idx = 1000 - 3 * rank + i;
            if (d->preal) rstore(p, d->w, v);
            else istore(p, d->w, (int64_t)v);
            if (d->ireal) rstore((char *)p + d->ioff, d->iw, idx);
            else istore((char *)p + d->ioff, d->iw, (int64_t)idx);
            break;
        }
    }
}

/* acc = acc OP v, for element values of type d (acc holds the lower ranks' reduction). */
static void combine(const tdesc *d, int o, void *acc, const void *v) {
    switch (d->kind) {
        case K_SINT:
        case K_UINT:
        case K_LOGIC: {
            int sgn = d->kind == K_SINT;
            int64_t a = iload(acc, d->w, sgn), b = iload(v, d->w, sgn), r = 0;
            uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
            switch (o) {
                case O_MAX: r = sgn ? (a > b ? a : b) : (int64_t)(ua > ub ? ua : ub); break;
                case O_MIN: r = sgn ? (a < b ? a : b) : (int64_t)(ua < ub ? ua : ub); break;
                case O_SUM: r = (int64_t)(ua + ub); break;
                case O_PROD: r = (int64_t)(ua * ub); break;
                case O_LAND: r = (a != 0) && (b != 0); break;
                case O_LOR: r = (a != 0) || (b != 0); break;
                case O_LXOR: r = (a != 0) != (b != 0); break;
                case O_BAND: r = a & b; break;
                case O_BOR: r = a | b; break;
                case O_BXOR: r = a ^ b; break;
            }
            istore(acc, d->w, r);
            break;
        }
        case K_REAL: {
            long double a = rload(acc, d->w), b = rload(v, d->w), r = 0;
            switch (o) {
                case O_MAX: r = a > b ? a : b; break;
                case O_MIN: r = a < b ? a : b; break;
                case O_SUM: r = a + b; break;
                case O_PROD: r = a * b; break;
            }
            rstore(acc, d->w, r);
            break;
        }
        case K_CPLX: {
            long double ar = rload(acc, d->w), ai = rload((char *)acc + d->w, d->w);
            long double br = rload(v, d->w), bi = rload((const char *)v + d->w, d->w);
            long double rr, ri;
            if (o == O_SUM) {
                rr = ar + br;
                ri = ai + bi;
            } else {
                rr = ar * br - ai * bi;
                ri = ar * bi + ai * br;
            }
            rstore(acc, d->w, rr);
            rstore((char *)acc + d->w, d->w, ri);
            break;
        }
        case K_PAIR: {
            long double a = d->preal ? rload(acc, d->w) : (long double)iload(acc, d->w, 1);
            long double b = d->preal ? rload(v, d->w) : (long double)iload(v, d->w, 1);
            const char *ia = (const char *)acc + d->ioff, *ib = (const char *)v + d->ioff;
            long double xa = d->ireal ? rload(ia, d->iw) : (long double)iload(ia, d->iw, 1);
            long double xb = d->ireal ? rload(ib, d->iw) : (long double)iload(ib, d->iw, 1);
            int take = o == O_MINLOC ? b < a : b > a;
            if (take || (a == b && xb < xa)) memcpy(acc, v, d->ext);
            break;
        }
    }
}

/* Element e of got equals element e of want (by value: padding bytes do not count). */
static int same_elem(const tdesc *d, const void *got, const void *want) {
    switch (d->kind) {
        case K_SINT:
        case K_UINT:
        case K_LOGIC: return iload(got, d->w, 0) == iload(want, d->w, 0);
        case K_REAL: return rload(got, d->w) == rload(want, d->w);
        case K_CPLX:
            return rload(got, d->w) == rload(want, d->w) &&
                   rload((const char *)got + d->w, d->w) == rload((const char *)want + d->w, d->w);
        default: {
            long double a = d->preal ? rload(got, d->w) : (long double)iload(got, d->w, 1);
            long double b = d->preal ? rload(want, d->w) : (long double)iload(want, d->w, 1);
            const char *ia = (const char *)got + d->ioff, *ib = (const char *)want + d->ioff;
            long double xa = d->ireal ? rload(ia, d->iw) : (long double)iload(ia, d->iw, 1);
            long double xb = d->ireal ? rload(ib, d->iw) : (long double)iload(ib, d->iw, 1);
            return a == b && xa == xb;
        }
    }
}

static void describe(const tdesc *d, const void *p, char *out, size_t n) {
    switch (d->kind) {
        case K_SINT: case K_LOGIC: snprintf(out, n, "%lld", (long long)iload(p, d->w, 1)); break;
        case K_UINT: snprintf(out, n, "%llu", (unsigned long long)iload(p, d->w, 0)); break;
        case K_REAL: snprintf(out, n, "%Lg", rload(p, d->w)); break;
        case K_CPLX: snprintf(out, n, "(%Lg, %Lg)", rload(p, d->w), rload((const char *)p + d->w, d->w)); break;
        default: {
            long double v = d->preal ? rload(p, d->w) : (long double)iload(p, d->w, 1);
            const char *ip = (const char *)p + d->ioff;
            long double x = d->ireal ? rload(ip, d->iw) : (long double)iload(ip, d->iw, 1);
            snprintf(out, n, "(value %Lg, index %Lg)", v, x);
        }
    }
}

static int check_elems(tctx *t, const tdesc *d, const char *what, const char *got, const char *want, int n) {
    for (int e = 0; e < n; ++e) {
        if (!same_elem(d, got + (size_t)e * d->ext, want + (size_t)e * d->ext)) {
            char g[96], w[96];
            describe(d, got + (size_t)e * d->ext, g, sizeof g);
            describe(d, want + (size_t)e * d->ext, w, sizeof w);
            FAIL(t, "%s: element %d: expected %s, got %s", what, e, w, g);
            return 0;
        }
    }
    return 1;
}

static char *zalloc(size_t n) {
    char *p = calloc(n > 0 ? n : 1, 1);
    if (p == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

/* The reduction of ranks 0..hi's inputs, n elements. */
static void reference(const tdesc *d, int o, int hi, int n, int salt, char *out) {
    char *v = zalloc(d->ext);
    for (int e = 0; e < n; ++e) {
        char *a = out + (size_t)e * d->ext;
        memset(a, 0, d->ext);
        gen(d, o, 0, e, salt, a);
        for (int r = 1; r <= hi; ++r) {
            memset(v, 0, d->ext);
            gen(d, o, r, e, salt, v);
            combine(d, o, a, v);
        }
    }
    free(v);
}

/* One (type, predefined operation) pair the standard defines: Allreduce, Reduce at the last
 * rank, Scan, Allreduce in place, Reduce_local. */
static void value_pair(tctx *t, const tdesc *d, int o, int n) {
    int rank = t->rank, size = t->size, salt = n;
    MPI_Op op = ops[o].op;
    size_t bytes = (size_t)n * d->ext;
    char *in = zalloc(bytes), *out = zalloc(bytes), *want = zalloc(bytes);
    for (int e = 0; e < n; ++e) gen(d, o, rank, e, salt, in + (size_t)e * d->ext);

    coll_where(t, "%s on %s, count %d", ops[o].name, d->name, n);
    reference(d, o, size - 1, n, salt, want);
    CALL(t, MPI_Allreduce(in, out, n, d->t, op, MPI_COMM_WORLD));
    check_elems(t, d, "MPI_Allreduce", out, want, n);

    memset(out, 0, bytes);
    CALL(t, MPI_Reduce(in, rank == size - 1 ? out : NULL, n, d->t, op, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1) check_elems(t, d, "MPI_Reduce", out, want, n);

    memcpy(out, in, bytes);
    CALL(t, MPI_Allreduce(MPI_IN_PLACE, out, n, d->t, op, MPI_COMM_WORLD));
    check_elems(t, d, "MPI_Allreduce in place", out, want, n);

    reference(d, o, rank, n, salt, want);
    memset(out, 0, bytes);
    CALL(t, MPI_Scan(in, out, n, d->t, op, MPI_COMM_WORLD));
    check_elems(t, d, "MPI_Scan", out, want, n);

    /* Reduce_local: inout = in OP inout, with in = rank 0's data, inout = rank 1's */
    char *a = zalloc(bytes);
    for (int e = 0; e < n; ++e) {
        gen(d, o, 0, e, salt, a + (size_t)e * d->ext);
        gen(d, o, 1, e, salt, out + (size_t)e * d->ext);
    }
    reference(d, o, 1, n, salt, want);
    CALL(t, MPI_Reduce_local(a, out, n, d->t, op));
    check_elems(t, d, "MPI_Reduce_local", out, want, n);
    free(a);
    free(in);
    free(out);
    free(want);
}

static int defined_on(const tdesc *d, int o) { return (ops[o].grps & d->grp) != 0; }

static void check_extent(tctx *t, const tdesc *d) {
    MPI_Aint lb = -1, ext = -1;
    CALL(t, MPI_Type_get_extent(d->t, &lb, &ext));
    if (lb != 0 || (size_t)ext != d->ext)
        FAIL(t, "%s: lb %ld extent %ld, expected 0 and %zu (the C type's size)", d->name, (long)lb, (long)ext, d->ext);
}

/* The f90 types (MPI_Type_create_f90_*) belong to the Fortran integer, floating point and
 * complex groups. */
static int f90_types(tctx *t, tdesc *out) {
    int n = 0;
    MPI_Datatype x;
    int sz = 0;
    if (MPI_Type_create_f90_integer(9, &x) == MPI_SUCCESS) {
        MPI_Type_size(x, &sz);
        tdesc d = {x, "f90 integer(r=9)", G_FINT, K_SINT, sz, 0, 0, 0, 0, (size_t)sz};
        out[n++] = d;
    } else {
        FAIL(t, "MPI_Type_create_f90_integer(9) failed");
    }
    if (MPI_Type_create_f90_real(15, MPI_UNDEFINED, &x) == MPI_SUCCESS) {
        MPI_Type_size(x, &sz);
        tdesc d = {x, "f90 real(p=15)", G_FLOAT, K_REAL, sz, 0, 0, 0, 0, (size_t)sz};
        out[n++] = d;
    } else {
        FAIL(t, "MPI_Type_create_f90_real(15) failed");
    }
    if (MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &x) == MPI_SUCCESS) {
        MPI_Type_size(x, &sz);
        tdesc d = {x, "f90 complex(p=6)", G_COMPLEX, K_CPLX, sz / 2, 0, 0, 0, 0, (size_t)sz};
        out[n++] = d;
    } else {
        FAIL(t, "MPI_Type_create_f90_complex(6) failed");
    }
    return n;
}

static void values_table(tctx *t) {
    tdesc f90[3];
    int nf = f90_types(t, f90);
    for (int k = 0; k < NTYPES + nf; ++k) {
        const tdesc *d = k < NTYPES ? &types[k] : &f90[k - NTYPES];
        coll_where(t, "%s", d->name);
        check_extent(t, d);
        for (int o = 0; o < NOPS; ++o) {
            if (!defined_on(d, o)) continue;
            value_pair(t, d, o, 7);
            value_pair(t, d, o, 129);
        }
    }
}

/* ---- user operations ---------------------------------------------------------------------- */

/* A string of up to 64 symbols: concatenation is associative, not commutative. */
#define STR_MAX 64
typedef struct {
    int len;
    char s[STR_MAX];
} str_t;

static void concat_op(void *in, void *inout, int *len, MPI_Datatype *type) {
    int sz = 0;
    MPI_Type_size(*type, &sz);
    if (sz != (int)sizeof(str_t)) {
        fprintf(stderr, "concat_op: called with a datatype of size %d, not %d\n", sz, (int)sizeof(str_t));
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    str_t *a = in, *b = inout;
    for (int i = 0; i < *len; ++i) {
        str_t r;
        memset(&r, 0, sizeof r);
        r.len = a[i].len + b[i].len;
        if (r.len > STR_MAX) {
            fprintf(stderr, "concat_op: result too long (%d)\n", r.len);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        memcpy(r.s, a[i].s, (size_t)a[i].len);
        memcpy(r.s + a[i].len, b[i].s, (size_t)b[i].len);
        b[i] = r;
    }
}

static const char sym[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/";

/* Element e of rank r: one symbol, or none (every third rank in element 2). */
static str_t str_of(int r, int e) {
    str_t x;
    memset(&x, 0, sizeof x);
    if (!(e == 2 && r % 3 == 0)) {
        x.len = 1;
        x.s[0] = sym[(r + 7 * e) % 64];
    }
    return x;
}

static str_t str_ref(int lo, int hi, int e) {
    str_t x;
    memset(&x, 0, sizeof x);
    for (int r = lo; r <= hi; ++r) {
        str_t y = str_of(r, e);
        memcpy(x.s + x.len, y.s, (size_t)y.len);
        x.len += y.len;
    }
    return x;
}

static void check_strs(tctx *t, const char *what, const str_t *got, int lo, int hi, int n, int e0) {
    for (int e = 0; e < n; ++e) {
        str_t w = str_ref(lo, hi, e0 + e);
        if (got[e].len != w.len || memcmp(got[e].s, w.s, (size_t)w.len) != 0) {
            FAIL(t, "%s: element %d: expected \"%.*s\", got \"%.*s\" (length %d)", what, e, w.len, w.s,
                 got[e].len >= 0 && got[e].len <= STR_MAX ? got[e].len : 0, got[e].s, got[e].len);
            return;
        }
    }
}

enum { NSTR = 3 };

static void user_noncommutative(tctx *t) {
    int rank = t->rank, size = t->size;
    MPI_Datatype st;
    CALL(t, MPI_Type_contiguous((int)sizeof(str_t), MPI_BYTE, &st));
    CALL(t, MPI_Type_commit(&st));
    MPI_Op cat;
    CALL(t, MPI_Op_create(concat_op, 0, &cat));
    int c = 1;
    CALL(t, MPI_Op_commutative(cat, &c));
    if (c != 0) FAIL(t, "MPI_Op_commutative of a non-commutative operation: %d", c);
    str_t in[NSTR], out[NSTR];
    for (int e = 0; e < NSTR; ++e) in[e] = str_of(rank, e);

    int roots[3] = {0, size / 2, size - 1};
    for (int k = 0; k < 3; ++k) {
        coll_where(t, "concatenation: MPI_Reduce root %d", roots[k]);
        memset(out, 0, sizeof out);
        CALL(t, MPI_Reduce(in, rank == roots[k] ? out : NULL, NSTR, st, cat, roots[k], MPI_COMM_WORLD));
        if (rank == roots[k]) check_strs(t, "result", out, 0, size - 1, NSTR, 0);
        coll_where(t, "concatenation: MPI_Reduce in place, root %d", roots[k]);
        memcpy(out, in, sizeof out);
        CALL(t, MPI_Reduce(rank == roots[k] ? MPI_IN_PLACE : (void *)in, rank == roots[k] ? out : NULL, NSTR, st, cat,
                           roots[k], MPI_COMM_WORLD));
        if (rank == roots[k]) check_strs(t, "result", out, 0, size - 1, NSTR, 0);
    }
    coll_where(t, "concatenation: MPI_Allreduce");
    memset(out, 0, sizeof out);
    CALL(t, MPI_Allreduce(in, out, NSTR, st, cat, MPI_COMM_WORLD));
    check_strs(t, "result", out, 0, size - 1, NSTR, 0);
    coll_where(t, "concatenation: MPI_Scan");
    CALL(t, MPI_Scan(in, out, NSTR, st, cat, MPI_COMM_WORLD));
    check_strs(t, "result", out, 0, rank, NSTR, 0);
    coll_where(t, "concatenation: MPI_Exscan");
    memset(out, 0, sizeof out);
    CALL(t, MPI_Exscan(in, out, NSTR, st, cat, MPI_COMM_WORLD));
    if (rank > 0) check_strs(t, "result", out, 0, rank - 1, NSTR, 0);

    /* Reduce_scatter_block: one element per rank, element e of everyone's vector */
    coll_where(t, "concatenation: MPI_Reduce_scatter_block");
    str_t *vin = calloc((size_t)size, sizeof(str_t)), mine;
    for (int e = 0; e < size; ++e) vin[e] = str_of(rank, e);
    memset(&mine, 0, sizeof mine);
    CALL(t, MPI_Reduce_scatter_block(vin, &mine, 1, st, cat, MPI_COMM_WORLD));
    check_strs(t, "result", &mine, 0, size - 1, 1, rank);
    free(vin);

    /* Reduce_local: inout = in o inout */
    coll_where(t, "concatenation: MPI_Reduce_local");
    str_t a = str_of(1, 0), b = str_of(2, 0);
    CALL(t, MPI_Reduce_local(&a, &b, 1, st, cat));
    check_strs(t, "result", &b, 1, 2, 1, 0);

    CALL(t, MPI_Op_free(&cat));
    if (cat != MPI_OP_NULL) FAIL(t, "MPI_Op_free did not set the handle to MPI_OP_NULL");
    CALL(t, MPI_Type_free(&st));
}

/* A commutative user operation must give what the predefined one gives. */
static void usum_int(void *in, void *inout, int *len, MPI_Datatype *type) {
    if (*type != MPI_INT) {
        fprintf(stderr, "usum_int: called with another datatype than MPI_INT\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; ++i) b[i] += a[i];
}

static void user_commutative(tctx *t) {
    MPI_Op op;
    coll_where(t, "commutative user operation");
    CALL(t, MPI_Op_create(usum_int, 1, &op));
    int c = 0;
    CALL(t, MPI_Op_commutative(op, &c));
    if (c != 1) FAIL(t, "MPI_Op_commutative of a commutative operation: %d", c);
    enum { N = 1000 };
    int *in = malloc(N * sizeof(int)), *got = malloc(N * sizeof(int)), *want = malloc(N * sizeof(int));
    for (int i = 0; i < N; ++i) in[i] = (int)(coll_hash((uint32_t)t->rank, (uint32_t)i) % 2001) - 1000;
    CALL(t, MPI_Allreduce(in, want, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CALL(t, MPI_Allreduce(in, got, N, MPI_INT, op, MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i)
        if (got[i] != want[i]) {
            FAIL(t, "Allreduce element %d: MPI_SUM gives %d, the user sum %d", i, want[i], got[i]);
            break;
        }
    int root = t->size / 2;
    CALL(t, MPI_Reduce(in, got, N, MPI_INT, op, root, MPI_COMM_WORLD));
    if (t->rank == root)
        for (int i = 0; i < N; ++i)
            if (got[i] != want[i]) {
                FAIL(t, "Reduce element %d: MPI_SUM gives %d, the user sum %d", i, want[i], got[i]);
                break;
            }
    CALL(t, MPI_Op_free(&op));
    if (op != MPI_OP_NULL) FAIL(t, "MPI_Op_free did not set the handle to MPI_OP_NULL");
    /* many operations created and freed */
    MPI_Op many[100];
    for (int i = 0; i < 100; ++i) CALL(t, MPI_Op_create(usum_int, i % 2, &many[i]));
    for (int i = 0; i < 100; ++i) {
        CALL(t, MPI_Op_commutative(many[i], &c));
        if (c != i % 2) FAIL(t, "MPI_Op_commutative of operation %d: %d", i, c);
    }
    for (int i = 0; i < 100; ++i) CALL(t, MPI_Op_free(&many[i]));
    free(in);
    free(got);
    free(want);
}

static void predefined_commutative(tctx *t) {
    coll_where(t, "MPI_Op_commutative");
    for (int o = 0; o <= O_MAXLOC; ++o) {
        int c = 0;
        CALL(t, MPI_Op_commutative(ops[o].op, &c));
        if (c != 1) FAIL(t, "MPI_Op_commutative(%s) = %d, predefined operations commute", ops[o].name, c);
    }
}

/* Predefined operations on derived types made of one basic type (as in the collectives):
 * MPI_Reduce_local with a contiguous type, a vector with holes (the holes must not change) and
 * a resized type, against element-wise sums. */
static void reduce_local_derived(tctx *t) {
    coll_where(t, "MPI_Reduce_local on derived types");
    MPI_Datatype cont, vec, res;
    CALL(t, MPI_Type_contiguous(3, MPI_INT, &cont));
    CALL(t, MPI_Type_vector(2, 2, 3, MPI_INT, &vec)); /* ints 0 1 _ 3 4 */
    CALL(t, MPI_Type_create_resized(MPI_DOUBLE, 0, 2 * (MPI_Aint)sizeof(double), &res));
    CALL(t, MPI_Type_commit(&cont));
    CALL(t, MPI_Type_commit(&vec));
    CALL(t, MPI_Type_commit(&res));
    int a[10], b[10];
    for (int i = 0; i < 10; ++i) a[i] = i + 1, b[i] = 100 * (i + 1);
    CALL(t, MPI_Reduce_local(a, b, 2, cont, MPI_SUM));
    for (int i = 0; i < 10; ++i) {
        int e = i < 6 ? 101 * (i + 1) : 100 * (i + 1);
        if (b[i] != e) FAIL(t, "MPI_Reduce_local(contiguous of 3 MPI_INT, count 2): element %d: expected %d, got %d", i, e, b[i]);
    }
    for (int i = 0; i < 10; ++i) b[i] = 100 * (i + 1);
    CALL(t, MPI_Reduce_local(a, b, 1, vec, MPI_MAX));
    for (int i = 0; i < 10; ++i) {
        int e = 100 * (i + 1); /* MAX of i + 1 and 100 (i + 1): b where the vector has data, b elsewhere */
        if (b[i] != e) FAIL(t, "MPI_Reduce_local(vector with holes, MPI_MAX): element %d: expected %d, got %d", i, e, b[i]);
    }
    for (int i = 0; i < 10; ++i) b[i] = 100 * (i + 1);
    CALL(t, MPI_Reduce_local(b, a, 1, vec, MPI_SUM));
    for (int i = 0; i < 10; ++i) {
        int in_vec = i == 0 || i == 1 || i == 3 || i == 4;
        int e = in_vec ? 101 * (i + 1) : i + 1;
        if (a[i] != e) FAIL(t, "MPI_Reduce_local(vector with holes, MPI_SUM): element %d: expected %d, got %d", i, e, a[i]);
    }
    double x[6] = {1, -1, 2, -2, 3, -3}, y[6] = {10, 0.5, 20, 0.5, 30, 0.5};
    CALL(t, MPI_Reduce_local(x, y, 3, res, MPI_PROD));
    for (int i = 0; i < 6; ++i) {
        double e = i % 2 ? 0.5 : x[i] * (10.0 * (i / 2 + 1));
        if (y[i] != e) FAIL(t, "MPI_Reduce_local(resized MPI_DOUBLE, MPI_PROD): element %d: expected %g, got %g", i, e, y[i]);
    }
    CALL(t, MPI_Type_free(&cont));
    CALL(t, MPI_Type_free(&vec));
    CALL(t, MPI_Type_free(&res));
}

/* ---- determinism -------------------------------------------------------------------------- */

/* A value of magnitude 10^-12 .. 10^11, from h. */
static double wide_val(uint32_t h) {
    double v = (double)(h % 2000001) - 1000000.0;
    int e = (int)(h >> 24) % 24 - 12;
    for (; e > 0; --e) v *= 10.0;
    for (; e < 0; ++e) v /= 10.0;
    return v;
}

/* Sums of doubles of very different magnitudes (the order matters): the same bits on every
 * repetition, and on every rank for Allreduce. */
static void determinism(tctx *t) {
    enum { N = 4099, REP = 4 };
    int rank = t->rank, size = t->size;
    double *in = malloc(N * sizeof(double)), *first = malloc(N * sizeof(double)), *got = malloc(N * sizeof(double));
    double *r0 = malloc(N * sizeof(double));
    for (int i = 0; i < N; ++i) {
        in[i] = wide_val(coll_hash((uint32_t)rank * 977u, (uint32_t)i));
    }
    const char *names[4] = {"MPI_Allreduce", "MPI_Reduce", "MPI_Reduce_scatter_block", "MPI_Scan"};
    for (int which = 0; which < 4; ++which) {
        coll_where(t, "determinism: %s of %d doubles", names[which], N);
        int cnt = which == 2 ? N / size : N;
        int root = size / 2;
        for (int rep = 0; rep < REP; ++rep) {
            memset(got, 0, N * sizeof(double));
            switch (which) {
                case 0: CALL(t, MPI_Allreduce(in, got, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)); break;
                case 1: CALL(t, MPI_Reduce(in, got, N, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD)); break;
                case 2: CALL(t, MPI_Reduce_scatter_block(in, got, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)); break;
                default: CALL(t, MPI_Scan(in, got, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)); break;
            }
            if (rep == 0) {
                memcpy(first, got, N * sizeof(double));
            } else if (memcmp(first, got, (size_t)cnt * sizeof(double)) != 0 && (which != 1 || rank == root)) {
                for (int i = 0; i < cnt; ++i)
                    if (memcmp(&first[i], &got[i], sizeof(double)) != 0) {
                        FAIL(t, "repetition %d: element %d is %.17g, was %.17g", rep, i, got[i], first[i]);
                        break;
                    }
            }
        }
        if (which == 0) {
            /* every rank the same bits */
            memcpy(r0, first, N * sizeof(double));
            CALL(t, MPI_Bcast(r0, N * (int)sizeof(double), MPI_BYTE, 0, MPI_COMM_WORLD));
            for (int i = 0; i < N; ++i)
                if (memcmp(&r0[i], &first[i], sizeof(double)) != 0) {
                    FAIL(t, "element %d is %.17g here, %.17g on rank 0", i, first[i], r0[i]);
                    break;
                }
            /* and close to the exact sum */
            for (int i = 0; i < N; ++i) {
                long double s = 0, mag = 0;
                for (int r = 0; r < size; ++r) {
                    double v = wide_val(coll_hash((uint32_t)r * 977u, (uint32_t)i));
                    s += v;
                    mag += v < 0 ? -v : v;
                }
                long double err = (long double)first[i] - s;
                if (err < 0) err = -err;
                if (err > mag * 1e-13L) {
                    FAIL(t, "element %d: sum %.17g, exact %.17Lg", i, first[i], s);
                    break;
                }
            }
        }
    }
    free(in);
    free(first);
    free(got);
    free(r0);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void errors_table(tctx *t) {
    int rank = t->rank;
    char in[64], out[64], out2[64 * 64];
    memset(in, 0, sizeof in);
    for (int k = 0; k < NTYPES; ++k) {
        const tdesc *d = &types[k];
        for (int o = 0; o < NOPS; ++o) {
            if (defined_on(d, o)) continue;
            coll_where(t, "%s on %s (not defined)", ops[o].name, d->name);
            EXPECT_CLASS(t, MPI_Allreduce(in, out, 1, d->t, ops[o].op, MPI_COMM_WORLD), MPI_ERR_OP);
            EXPECT_CLASS(t, MPI_Reduce(in, out, 1, d->t, ops[o].op, 0, MPI_COMM_WORLD), MPI_ERR_OP);
            EXPECT_CLASS(t, MPI_Scan(in, out, 1, d->t, ops[o].op, MPI_COMM_WORLD), MPI_ERR_OP);
            EXPECT_CLASS(t, MPI_Reduce_local(in, out, 1, d->t, ops[o].op), MPI_ERR_OP);
            if (o % 3 == 0)
                EXPECT_CLASS(t, MPI_Reduce_scatter_block(out2, out, 1, d->t, ops[o].op, MPI_COMM_WORLD), MPI_ERR_OP);
        }
    }
    int v = rank, r = -1;
    coll_where(t, "MPI_OP_NULL");
    EXPECT_CLASS(t, MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(t, MPI_Reduce(&v, &r, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(t, MPI_Reduce_local(&v, &r, 1, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    coll_where(t, "a freed user operation");
    MPI_Op op, copy;
    CALL(t, MPI_Op_create(usum_int, 1, &op));
    copy = op;
    CALL(t, MPI_Op_free(&op));
    EXPECT_CLASS(t, MPI_Allreduce(&v, &r, 1, MPI_INT, copy, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_CLASS(t, MPI_Reduce_local(&v, &r, 1, MPI_INT, copy), MPI_ERR_OP);
    EXPECT_CLASS(t, MPI_Op_free(&copy), MPI_ERR_OP);
    coll_where(t, "MPI_Op_free of a predefined operation");
    MPI_Op sum = MPI_SUM;
    EXPECT_CLASS(t, MPI_Op_free(&sum), MPI_ERR_OP);
    if (sum != MPI_SUM) FAIL(t, "a failed MPI_Op_free changed the handle");
    coll_where(t, "MPI_Op_commutative(MPI_OP_NULL)");
    int c = 0;
    EXPECT_CLASS(t, MPI_Op_commutative(MPI_OP_NULL, &c), MPI_ERR_OP);
    /* still working */
    coll_where(t, "after the errors");
    long long s = rank, total = -1;
    CALL(t, MPI_Allreduce(&s, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (total != (long long)t->size * (t->size - 1) / 2) FAIL(t, "MPI_Allreduce after errors: %lld", total);
}

int main(int argc, char **argv) {
    tctx t;
    coll_init(&t, "coll_ops", &argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "values";
    if (strcmp(mode, "values") == 0) {
        t.prog = "coll_ops values";
        predefined_commutative(&t);
        values_table(&t);
        user_commutative(&t);
        user_noncommutative(&t);
        reduce_local_derived(&t);
        determinism(&t);
    } else if (strcmp(mode, "errors") == 0) {
        t.prog = "coll_ops errors";
        errors_table(&t);
    } else {
        if (t.rank == 0) fprintf(stderr, "usage: coll_ops [values|errors]\n");
        MPI_Finalize();
        return 2;
    }
    return coll_finish(&t);
}

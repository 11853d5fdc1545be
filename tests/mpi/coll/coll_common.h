/* Shared helpers of the collective test programs (tests/mpi/coll/): failure reporting, buffer
 * layouts of predefined and derived datatypes, deterministic per-rank data and the two user
 * reduction operations the programs check against a serial reference.
 *
 * Reporting. Every failed check prints one line "PROG: rank R: line L: what: expected X, got Y"
 * to stderr and counts; the program goes on (other checks still run, the ranks stay in step) and
 * exits non-zero at the end (coll_finish). A call that returns an error where none is expected
 * prints the error string and class and ends the job with MPI_Abort (the ranks are no longer in
 * step). After 20 failed checks a rank aborts too. The programs set MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD and MPI_COMM_SELF. With COLL_TRACE set in the environment, every checked call
 * is printed before it is made (to find the call that crashes or hangs).
 *
 * Layouts. A layout describes one element of a datatype: its lb, extent and "slots" (the basic
 * elements of its typemap, in typemap order, with their byte offsets and C types). Data is
 * generated per basic element (the j-th basic element of a message), so a message sent as one
 * layout can be checked when received as another with the same type signature. Receive buffers
 * start filled with a sentinel byte and are compared as whole byte images: bytes outside the
 * typemap (holes, gaps between blocks) must keep the sentinel.
 *
 * No mutable globals: the ranks are threads of one process. */
#ifndef COLL_COMMON_H
#define COLL_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- reporting --------------------------------------------------------------------------- */

#ifndef COLL_MAX_FAILS
#define COLL_MAX_FAILS 20 /* failed checks before a rank gives up (MPI_Abort) */
#endif

typedef struct {
    const char *prog;
    int rank, size; /* in MPI_COMM_WORLD */
    int fails;
    int trace;       /* COLL_TRACE set: print each checked call before making it */
    char where[160]; /* the case being run, printed with each failure */
} tctx;

static inline void coll_init(tctx *t, const char *prog, int *argc, char ***argv) {
    MPI_Init(argc, argv);
    memset(t, 0, sizeof(*t));
    t->prog = prog;
    MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t->size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const char *tr = getenv("COLL_TRACE");
    t->trace = tr != NULL && tr[0] != 0 && strcmp(tr, "0") != 0;
}

static inline void coll_trace_(tctx *t, int line, const char *call) {
    if (t->trace) {
        fprintf(stderr, "%s: rank %d: line %d: %s: %s\n", t->prog, t->rank, line, t->where, call);
        fflush(stderr);
    }
}

static inline void coll_where(tctx *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->where, sizeof(t->where), fmt, ap);
    va_end(ap);
}

static inline void coll_fail_(tctx *t, int line, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: rank %d: line %d: %s%s%s\n", t->prog, t->rank, line, t->where, t->where[0] ? ": " : "",
            msg);
    fflush(stderr);
    if (++t->fails >= COLL_MAX_FAILS) {
        fprintf(stderr, "%s: rank %d: too many failures, aborting\n", t->prog, t->rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
#define FAIL(t, ...) coll_fail_((t), __LINE__, __VA_ARGS__)
#define CHECK(t, cond)                                       \
    do {                                                     \
        if (!(cond)) FAIL((t), "check failed: %s", #cond);   \
    } while (0)

static inline const char *coll_class_name(int cls) {
    switch (cls) {
        case MPI_SUCCESS: return "MPI_SUCCESS";
        case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER";
        case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
        case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
        case MPI_ERR_TAG: return "MPI_ERR_TAG";
        case MPI_ERR_COMM: return "MPI_ERR_COMM";
        case MPI_ERR_RANK: return "MPI_ERR_RANK";
        case MPI_ERR_ROOT: return "MPI_ERR_ROOT";
        case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
        case MPI_ERR_GROUP: return "MPI_ERR_GROUP";
        case MPI_ERR_OP: return "MPI_ERR_OP";
        case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST";
        case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY";
        case MPI_ERR_ARG: return "MPI_ERR_ARG";
        case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
        case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN";
        case MPI_ERR_INTERN: return "MPI_ERR_INTERN";
        case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS";
        case MPI_ERR_PENDING: return "MPI_ERR_PENDING";
        case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM";
        case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION";
        default: return "(other class)";
    }
}

/* A call that must succeed: on an error, print it and end the job. */
static inline void coll_call_failed_(tctx *t, int line, const char *call, int err) {
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = -1;
    MPI_Error_string(err, s, &len);
    MPI_Error_class(err, &cls);
    fprintf(stderr, "%s: rank %d: line %d: %s%s%s returned %d (%s): %s\n", t->prog, t->rank, line, t->where,
            t->where[0] ? ": " : "", call, err, coll_class_name(cls), s);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define CALL(t, call)                                                      \
    do {                                                                   \
        coll_trace_((t), __LINE__, #call);                                 \
        int e_ = (call);                                                   \
        if (e_ != MPI_SUCCESS) coll_call_failed_((t), __LINE__, #call, e_); \
    } while (0)

/* `call` must fail with error class `cls` (under MPI_ERRORS_RETURN). */
#define EXPECT_CLASS(t, call, cls)                                                                       \
    do {                                                                                                 \
        coll_trace_((t), __LINE__, #call);                                                               \
        int e_ = (call), c_ = -1;                                                                        \
        MPI_Error_class(e_, &c_);                                                                        \
        if (c_ != (cls))                                                                                 \
            FAIL((t), "%s: expected %s, got %s (%d)", #call, coll_class_name(cls), coll_class_name(c_), e_); \
    } while (0)

/* Sums the failures over MPI_COMM_WORLD, prints the verdict, finalizes; the exit status of main. */
static inline int coll_finish(tctx *t) {
    int total = 0;
    t->where[0] = 0;
    CALL(t, MPI_Allreduce(&t->fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (t->rank == 0) {
        if (total == 0) {
            printf("%s: %d ranks OK\n", t->prog, t->size);
        } else {
            printf("%s: %d ranks: %d check(s) FAILED\n", t->prog, t->size, total);
        }
        fflush(stdout);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

/* ---- counts and displacements of the v-variants ------------------------------------------ */

/* Uneven counts: zero for every fourth member, c + 0..2 otherwise. */
static inline int coll_vcount(int i, int c) { return c == 0 ? 0 : (i % 4 == 1 ? 0 : c + i % 3); }

/* Alltoallv counts from s to d: asymmetric, or symmetric (in place needs that). */
static inline int coll_acount(int s, int d, int c, int sym) {
    if (c == 0) return 0;
    if (sym) return (s + d) % 5 == 1 ? 0 : c + (s * d) % 3;
    return (s + 2 * d) % 5 == 1 ? 0 : c + (s + 3 * d) % 3;
}

/* Displacements in reverse member order with a one-element gap after each block; returns the
 * number of elements the buffer spans. */
static inline long coll_rev_displs(int n, const int *counts, int *displs) {
    long at = 0;
    for (int i = n - 1; i >= 0; --i) {
        displs[i] = (int)at;
        at += counts[i] + 1;
    }
    return at;
}

/* ---- layouts ------------------------------------------------------------------------------ */

typedef struct {
    int off;   /* byte offset from the element's origin */
    char kind; /* 'i' int, 'd' double, 's' short */
} slot_t;

typedef struct {
    const char *name; /* the datatype's name (MPI_Type_set_name on derived types) */
    MPI_Aint lb, extent;
    int nslots;
    slot_t slot[6];
} layout_t;

/* Predefined types. */
static const layout_t L_INT = {"MPI_INT", 0, 4, 1, {{0, 'i'}}};
static const layout_t L_DOUBLE = {"MPI_DOUBLE", 0, 8, 1, {{0, 'd'}}};
static const layout_t L_2INT = {"MPI_2INT", 0, 8, 2, {{0, 'i'}, {4, 'i'}}};
/* Derived types with holes (see coll_make_type). */
static const layout_t L_VECTOR = {"coll_vector", 0, 32, 6, {{0, 'i'}, {4, 'i'}, {12, 'i'}, {16, 'i'}, {24, 'i'}, {28, 'i'}}};
static const layout_t L_INDEXED = {"coll_indexed", 0, 24, 4, {{20, 'i'}, {0, 'i'}, {4, 'i'}, {8, 'i'}}};
static const layout_t L_STRUCT = {"coll_struct", 0, 32, 4, {{0, 'i'}, {8, 'd'}, {20, 's'}, {22, 's'}}};
static const layout_t L_RESIZED = {"coll_resized", -4, 16, 2, {{0, 'i'}, {4, 'i'}}};

static const layout_t *const coll_derived_layouts[] = {&L_VECTOR, &L_INDEXED, &L_STRUCT, &L_RESIZED};
#define COLL_NDERIVED 4

static inline int layout_all_int(const layout_t *l) {
    for (int s = 0; s < l->nslots; ++s)
        if (l->slot[s].kind != 'i') return 0;
    return 1;
}

/* The datatype of a layout: the predefined handle, or a new committed, named derived type. */
static inline MPI_Datatype coll_make_type(tctx *t, const layout_t *l) {
    MPI_Datatype d = MPI_DATATYPE_NULL, tmp = MPI_DATATYPE_NULL;
    if (l == &L_INT) return MPI_INT;
    if (l == &L_DOUBLE) return MPI_DOUBLE;
    if (l == &L_2INT) return MPI_2INT;
    if (l == &L_VECTOR) {
        /* 3 blocks of 2 ints, stride 3 ints: ints at 0 4 | 12 16 | 24 28, holes 8 and 20 */
        CALL(t, MPI_Type_vector(3, 2, 3, MPI_INT, &d));
    } else if (l == &L_INDEXED) {
        /* typemap order differs from memory order: int at 20, then ints at 0 4 8; hole 12..20 */
        int bl[2] = {1, 3}, dis[2] = {5, 0};
        CALL(t, MPI_Type_indexed(2, bl, dis, MPI_INT, &d));
    } else if (l == &L_STRUCT) {
        /* int at 0, double at 8, 2 shorts at 20; resized to extent 32 (holes 4..8, 16..20, 24..32) */
        int bl[3] = {1, 1, 2};
        MPI_Aint dis[3] = {0, 8, 20};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
        CALL(t, MPI_Type_create_struct(3, bl, dis, ty, &tmp));
        CALL(t, MPI_Type_create_resized(tmp, 0, 32, &d));
        CALL(t, MPI_Type_free(&tmp));
    } else if (l == &L_RESIZED) {
        /* 2 contiguous ints, lb -4, extent 16: holes -4..0 and 8..12 around each element */
        CALL(t, MPI_Type_contiguous(2, MPI_INT, &tmp));
        CALL(t, MPI_Type_create_resized(tmp, -4, 16, &d));
        CALL(t, MPI_Type_free(&tmp));
    } else {
        FAIL(t, "no datatype for layout %s", l->name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    CALL(t, MPI_Type_commit(&d));
    CALL(t, MPI_Type_set_name(d, l->name));
    /* the layout must describe the type */
    MPI_Aint lb = 0, ext = 0;
    int sz = 0, want = 0;
    CALL(t, MPI_Type_get_extent(d, &lb, &ext));
    CALL(t, MPI_Type_size(d, &sz));
    for (int s = 0; s < l->nslots; ++s) want += l->slot[s].kind == 'i' ? 4 : l->slot[s].kind == 'd' ? 8 : 2;
    if (lb != l->lb || ext != l->extent || sz != want)
        FAIL(t, "datatype %s: lb %ld extent %ld size %d, layout says %ld %ld %d", l->name, (long)lb, (long)ext, sz,
             (long)l->lb, (long)l->extent, want);
    return d;
}

static inline void coll_free_type(tctx *t, const layout_t *l, MPI_Datatype *d) {
    if (l != &L_INT && l != &L_DOUBLE && l != &L_2INT) CALL(t, MPI_Type_free(d));
}

/* The layout of a datatype a user operation is called with (by name for derived types); NULL
 * if unknown. */
static inline const layout_t *coll_layout_of(MPI_Datatype d) {
    if (d == MPI_INT) return &L_INT;
    if (d == MPI_DOUBLE) return &L_DOUBLE;
    if (d == MPI_2INT) return &L_2INT;
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    if (MPI_Type_get_name(d, name, &len) != MPI_SUCCESS) return NULL;
    for (int i = 0; i < COLL_NDERIVED; ++i)
        if (strcmp(name, coll_derived_layouts[i]->name) == 0) return coll_derived_layouts[i];
    return NULL;
}

/* ---- buffers ------------------------------------------------------------------------------ */

#define COLL_SENTINEL 0x5a /* receive buffers start with it: holes must keep it */
#define COLL_SEND_HOLE 0xee /* holes of send buffers: must never arrive anywhere */

typedef struct {
    const layout_t *l;
    long nelems;     /* elements of l the buffer holds */
    size_t bytes;    /* allocation size */
    char *mem;       /* allocation */
    char *base;      /* the buffer address to pass to MPI (mem - lb) */
} buf_t;

static inline buf_t buf_new(const layout_t *l, long nelems, int fill) {
    buf_t b;
    b.l = l;
    b.nelems = nelems;
    b.bytes = (size_t)(nelems > 0 ? nelems : 0) * (size_t)l->extent + 16;
    b.mem = malloc(b.bytes);
    if (b.mem == NULL) {
        fprintf(stderr, "out of memory (%zu bytes)\n", b.bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(b.mem, fill, b.bytes);
    b.base = b.mem - l->lb;
    return b;
}

static inline void buf_free(buf_t *b) {
    free(b->mem);
    b->mem = b->base = NULL;
}

static inline buf_t buf_copy(const buf_t *src) {
    buf_t b = buf_new(src->l, src->nelems, 0);
    memcpy(b.mem, src->mem, src->bytes);
    return b;
}

static inline char *buf_slot(const buf_t *b, long elem, int s) {
    return b->base + elem * b->l->extent + b->l->slot[s].off;
}

/* Stores v in basic element j counted from element `first` (j-th of the typemap sequence). */
static inline void buf_put(buf_t *b, long first, long j, long long v) {
    long e = first + j / b->l->nslots;
    int s = (int)(j % b->l->nslots);
    char *p = buf_slot(b, e, s);
    switch (b->l->slot[s].kind) {
        case 'i': { int x = (int)v; memcpy(p, &x, sizeof x); break; }
        case 'd': { double x = (double)v; memcpy(p, &x, sizeof x); break; }
        default: { short x = (short)v; memcpy(p, &x, sizeof x); break; }
    }
}

static inline long long buf_get(const buf_t *b, long first, long j) {
    long e = first + j / b->l->nslots;
    int s = (int)(j % b->l->nslots);
    const char *p = buf_slot(b, e, s);
    switch (b->l->slot[s].kind) {
        case 'i': { int x; memcpy(&x, p, sizeof x); return x; }
        case 'd': { double x; memcpy(&x, p, sizeof x); return (long long)x; }
        default: { short x; memcpy(&x, p, sizeof x); return x; }
    }
}

/* Basic element j as text (doubles with all their digits). */
static inline void buf_show(const buf_t *b, long j, char *out, size_t n) {
    int s = (int)(j % b->l->nslots);
    if (b->l->slot[s].kind == 'd') {
        double x;
        memcpy(&x, buf_slot(b, j / b->l->nslots, s), sizeof x);
        snprintf(out, n, "%.17g", x);
    } else {
        snprintf(out, n, "%lld", buf_get(b, 0, j));
    }
}

/* ---- data -------------------------------------------------------------------------------- */

static inline uint32_t coll_hash(uint32_t a, uint32_t b) {
    uint32_t h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u) * 0x85ebca77u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}

/* Data kinds: plain values in [-500, 500] (sums over 64 ranks fit a short), or affine maps
 * x -> a x + b mod COLL_P stored as pairs of slots (a in [1, P-1] at even j, b in [0, P-1]). */
enum { GEN_PLAIN = 0, GEN_AFFINE = 1 };
#define COLL_P 1009

static inline long long coll_val(int gen, uint32_t key, long j) {
    uint32_t h = coll_hash(key, (uint32_t)j);
    if (gen == GEN_AFFINE) return (j % 2 == 0) ? 1 + (long long)(h % (COLL_P - 1)) : (long long)(h % COLL_P);
    return (long long)(h % 1001) - 500;
}

/* Fills n basic elements starting at element `first` with the data of `key`. */
static inline void buf_fill(buf_t *b, long first, long n, int gen, uint32_t key) {
    for (long j = 0; j < n; ++j) buf_put(b, first, j, coll_val(gen, key, j));
}

/* Keys: what identifies a block of data (a rank, a pair of ranks, a case). */
static inline uint32_t coll_key(uint32_t a, uint32_t b) { return coll_hash(a + 0x1234u, b * 3u + 1u); }

/* Compares the whole byte image of got with expect (same layout and size); reports the first
 * difference (element, slot or hole). Returns 1 when they are equal. */
static inline int buf_check_range(tctx *t, const char *what, const buf_t *got, const buf_t *expect, size_t from,
                                  size_t to) {
    if (to > got->bytes) to = got->bytes;
    for (size_t i = from; i < to; ++i) {
        if (got->mem[i] != expect->mem[i]) {
            long off = (long)i + (long)got->l->lb; /* relative to base */
            long e = (long)((off - got->l->lb) / got->l->extent);
            long in = off - e * got->l->extent;
            int s = -1;
            for (int k = 0; k < got->l->nslots; ++k) {
                int w = got->l->slot[k].kind == 'i' ? 4 : got->l->slot[k].kind == 'd' ? 8 : 2;
                if (in >= got->l->slot[k].off && in < got->l->slot[k].off + w) s = k;
            }
            if (s >= 0) {
                long j = (e * got->l->nslots) + s;
                char w[48], g[48];
                buf_show(expect, j, w, sizeof w);
                buf_show(got, j, g, sizeof g);
                FAIL(t, "%s (%s): element %ld slot %d (basic element %ld): expected %s, got %s", what, got->l->name, e,
                     s, j, w, g);
            } else {
                FAIL(t, "%s (%s): byte %ld (element %ld, outside the typemap) changed: expected 0x%02x, got 0x%02x",
                     what, got->l->name, off, e, (unsigned char)expect->mem[i], (unsigned char)got->mem[i]);
            }
            return 0;
        }
    }
    return 1;
}

static inline int buf_check(tctx *t, const char *what, const buf_t *got, const buf_t *expect) {
    return buf_check_range(t, what, got, expect, 0, got->bytes);
}

/* Only elements [first, first + n) (their typemap bytes and holes). */
static inline int buf_check_elems(tctx *t, const char *what, const buf_t *got, const buf_t *expect, long first,
                                  long n) {
    if (n <= 0) return 1;
    return buf_check_range(t, what, got, expect, (size_t)(first * got->l->extent),
                           (size_t)((first + n) * got->l->extent));
}

/* ---- reductions: the user operations and the serial reference ---------------------------- */

/* Slot-wise sum over any layout (commutative). */
static inline void coll_usum(void *in, void *inout, int *len, MPI_Datatype *type) {
    const layout_t *l = coll_layout_of(*type);
    if (l == NULL) {
        fprintf(stderr, "coll_usum: called with a datatype it does not know\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
        return;
    }
    buf_t a = {l, *len, 0, NULL, (char *)in}, b = {l, *len, 0, NULL, (char *)inout};
    long n = (long)*len * l->nslots;
    for (long j = 0; j < n; ++j) buf_put(&b, 0, j, buf_get(&a, 0, j) + buf_get(&b, 0, j));
}

/* Composition of affine maps mod P, slots taken in pairs (a, b): inout = in o inout, i.e.
 * x -> a_in (a_io x + b_io) + b_in. Associative, not commutative. */
static inline void coll_affine_apply(long long a1, long long b1, long long *a2, long long *b2) {
    long long a = (a1 * *a2) % COLL_P, b = (a1 * *b2 + b1) % COLL_P;
    *a2 = a;
    *b2 = b;
}

static inline void coll_uaffine(void *in, void *inout, int *len, MPI_Datatype *type) {
    const layout_t *l = coll_layout_of(*type);
    if (l == NULL || l->nslots % 2 != 0) {
        fprintf(stderr, "coll_uaffine: called with a datatype it does not know\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
        return;
    }
    buf_t a = {l, *len, 0, NULL, (char *)in}, b = {l, *len, 0, NULL, (char *)inout};
    long n = (long)*len * l->nslots;
    for (long j = 0; j + 1 < n; j += 2) {
        long long a2 = buf_get(&b, 0, j), b2 = buf_get(&b, 0, j + 1);
        coll_affine_apply(buf_get(&a, 0, j), buf_get(&a, 0, j + 1), &a2, &b2);
        buf_put(&b, 0, j, a2);
        buf_put(&b, 0, j + 1, b2);
    }
}

/* acc = acc OP v (acc holds the reduction of lower ranks): sum, or affine composition. */
static inline void coll_ref_step(int gen, long long *acc, const long long *v, long n) {
    if (gen == GEN_PLAIN) {
        for (long j = 0; j < n; ++j) acc[j] += v[j];
    } else {
        /* acc o v: acc = (a1, b1) applied after v = (a2, b2) */
        for (long j = 0; j + 1 < n; j += 2) {
            long long a2 = v[j], b2 = v[j + 1];
            coll_affine_apply(acc[j], acc[j + 1], &a2, &b2);
            acc[j] = a2;
            acc[j + 1] = b2;
        }
    }
}

/* The reduction, in rank order, of the data of ranks lo..hi (keys coll_key(rank, salt)), basic
 * elements [j0, j0 + n); malloc'ed. */
static inline long long *coll_ref_reduce(int gen, uint32_t salt, int lo, int hi, long j0, long n) {
    long long *acc = malloc(sizeof(long long) * (size_t)(n > 0 ? n : 1));
    if (acc == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    if (gen == GEN_PLAIN) {
        for (long j = 0; j < n; ++j) {
            long long s = 0;
            for (int r = lo; r <= hi; ++r) s += coll_val(gen, coll_key((uint32_t)r, salt), j0 + j);
            acc[j] = s;
        }
    } else {
        for (long j = 0; j + 1 < n; j += 2) {
            long long a = coll_val(gen, coll_key((uint32_t)lo, salt), j0 + j);
            long long b = coll_val(gen, coll_key((uint32_t)lo, salt), j0 + j + 1);
            for (int r = lo + 1; r <= hi; ++r) {
                long long a2 = coll_val(gen, coll_key((uint32_t)r, salt), j0 + j);
                long long b2 = coll_val(gen, coll_key((uint32_t)r, salt), j0 + j + 1);
                coll_affine_apply(a, b, &a2, &b2);
                a = a2;
                b = b2;
            }
            acc[j] = a;
            acc[j + 1] = b;
        }
    }
    return acc;
}

#endif /* COLL_COMMON_H */

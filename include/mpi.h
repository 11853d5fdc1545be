/**
 * \file mpi.h
 * MPC's MPI interface (MPI 3.1), plain C99, usable from C and C++.
 *
 * Handles are ints (as in MPICH), encoded as (kind << 24) | index; index 0 is the kind's null
 * handle and predefined objects have small fixed indices, so every predefined handle is an
 * integer constant expression (usable in static initializers and switch statements) and the
 * Fortran conversions (MPI_Comm_c2f ...) are the identity.
 *
 * Every MPI_ function also exists as PMPI_ (the MPI_ name is a weak alias of it) for profiling
 * tools.
 */
#ifndef MPC_MPI_H_INCLUDED
#define MPC_MPI_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define MPC_MPI 1

/* ---- handle types ------------------------------------------------------------------------ */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Message;
typedef int MPI_Win;
typedef int MPI_File;
typedef int MPI_Fint;
typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;

#define MPC_HANDLE_KIND_COMM 0x44
#define MPC_HANDLE_KIND_GROUP 0x48
#define MPC_HANDLE_KIND_DATATYPE 0x4c
#define MPC_HANDLE_KIND_OP 0x58
#define MPC_HANDLE_KIND_ERRHANDLER 0x54
#define MPC_HANDLE_KIND_REQUEST 0x2c
#define MPC_HANDLE_KIND_INFO 0x1c
#define MPC_HANDLE_KIND_MESSAGE 0x30
#define MPC_HANDLE_KIND_WIN 0x20
#define MPC_HANDLE_KIND_FILE 0x24
#define MPC_HANDLE(kind, index) ((int)(((kind) << 24) | (index)))

/* ---- status ------------------------------------------------------------------------------ */
typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int mpc_count_lo;          /* received bytes, low 32 bits */
    int mpc_count_hi_and_cancelled; /* high 31 bits << 1 | cancelled */
} MPI_Status;

#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_STATUS_SIZE 5

/* ---- communicators, groups, ... ---------------------------------------------------------- */
#define MPI_COMM_NULL MPC_HANDLE(MPC_HANDLE_KIND_COMM, 0)
#define MPI_COMM_WORLD MPC_HANDLE(MPC_HANDLE_KIND_COMM, 1)
#define MPI_COMM_SELF MPC_HANDLE(MPC_HANDLE_KIND_COMM, 2)
#define MPI_GROUP_NULL MPC_HANDLE(MPC_HANDLE_KIND_GROUP, 0)
#define MPI_GROUP_EMPTY MPC_HANDLE(MPC_HANDLE_KIND_GROUP, 1)
#define MPI_REQUEST_NULL MPC_HANDLE(MPC_HANDLE_KIND_REQUEST, 0)
#define MPI_MESSAGE_NULL MPC_HANDLE(MPC_HANDLE_KIND_MESSAGE, 0)
#define MPI_MESSAGE_NO_PROC MPC_HANDLE(MPC_HANDLE_KIND_MESSAGE, 1)
#define MPI_INFO_NULL MPC_HANDLE(MPC_HANDLE_KIND_INFO, 0)
#define MPI_INFO_ENV MPC_HANDLE(MPC_HANDLE_KIND_INFO, 1)
#define MPI_ERRHANDLER_NULL MPC_HANDLE(MPC_HANDLE_KIND_ERRHANDLER, 0)
#define MPI_ERRORS_ARE_FATAL MPC_HANDLE(MPC_HANDLE_KIND_ERRHANDLER, 1)
#define MPI_ERRORS_RETURN MPC_HANDLE(MPC_HANDLE_KIND_ERRHANDLER, 2)
#define MPI_OP_NULL MPC_HANDLE(MPC_HANDLE_KIND_OP, 0)
#define MPI_WIN_NULL MPC_HANDLE(MPC_HANDLE_KIND_WIN, 0)
#define MPI_FILE_NULL MPC_HANDLE(MPC_HANDLE_KIND_FILE, 0)

/* ---- predefined datatypes (indices are fixed: mpi_compat/datatype relies on them) -------- */
#define MPI_DATATYPE_NULL MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 0)
#define MPI_CHAR MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 1)
#define MPI_SIGNED_CHAR MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 2)
#define MPI_UNSIGNED_CHAR MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 3)
#define MPI_BYTE MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 4)
#define MPI_WCHAR MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 5)
#define MPI_SHORT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 6)
#define MPI_UNSIGNED_SHORT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 7)
#define MPI_INT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 8)
#define MPI_UNSIGNED MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 9)
#define MPI_LONG MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 10)
#define MPI_UNSIGNED_LONG MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 11)
#define MPI_LONG_LONG_INT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 12)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 13)
#define MPI_FLOAT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 14)
#define MPI_DOUBLE MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 15)
#define MPI_LONG_DOUBLE MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 16)
#define MPI_C_BOOL MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 17)
#define MPI_INT8_T MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 18)
#define MPI_INT16_T MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 19)
#define MPI_INT32_T MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 20)
#define MPI_INT64_T MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 21)
#define MPI_UINT8_T MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 22)
#define MPI_UINT16_T MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 23)
#define MPI_UINT32_T MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 24)
#define MPI_UINT64_T MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 25)
#define MPI_C_COMPLEX MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 26)
#define MPI_C_FLOAT_COMPLEX MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 27)
#define MPI_C_DOUBLE_COMPLEX MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 28)
#define MPI_C_LONG_DOUBLE_COMPLEX MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 29)
#define MPI_AINT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 30)
#define MPI_OFFSET MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 31)
#define MPI_COUNT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 32)
#define MPI_PACKED MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 33)
#define MPI_LB MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 34)
#define MPI_UB MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 35)
#define MPI_FLOAT_INT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 36)
#define MPI_DOUBLE_INT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 37)
#define MPI_LONG_INT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 38)
#define MPI_SHORT_INT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 39)
#define MPI_2INT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 40)
#define MPI_LONG_DOUBLE_INT MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 41)
#define MPI_CXX_BOOL MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 42)
#define MPI_CXX_FLOAT_COMPLEX MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 43)
#define MPI_CXX_DOUBLE_COMPLEX MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 44)
#define MPI_CXX_LONG_DOUBLE_COMPLEX MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 45)
/* Fortran types (for mpif.h and the Fortran issue; usable from C as well) */
#define MPI_CHARACTER MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 46)
#define MPI_LOGICAL MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 47)
#define MPI_INTEGER MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 48)
#define MPI_REAL MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 49)
#define MPI_DOUBLE_PRECISION MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 50)
#define MPI_COMPLEX MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 51)
#define MPI_DOUBLE_COMPLEX MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 52)
#define MPI_2REAL MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 53)
#define MPI_2DOUBLE_PRECISION MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 54)
#define MPI_2INTEGER MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 55)
/* Optional Fortran types REAL*16 and COMPLEX*32: IEEE binary128 (gfortran's REAL(16), GCC's
 * __float128 on x86-64), with MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN (complex: MPI_SUM, MPI_PROD).
 * From C: MPC_FLOAT128 (__float128) and MPC_COMPLEX_FLOAT128 (two __float128, real part first,
 * GCC's __complex128), the same types. Not MPI_LONG_DOUBLE, the x87 80-bit format here. */
#define MPI_REAL16 MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 56)
#define MPI_COMPLEX32 MPC_HANDLE(MPC_HANDLE_KIND_DATATYPE, 57)
#define MPC_FLOAT128 MPI_REAL16
#define MPC_COMPLEX_FLOAT128 MPI_COMPLEX32
/* Optional Fortran types of a given size (MPI 3.1 section 3.2.2), usable from C: the handles of
 * the types of that size and kind, the same handles as mpif.h's and the mpi module's (so a
 * Fortran handle converted with MPI_Type_f2c is the C one). MPI_Type_get_name names the type
 * they stand for. gfortran has no REAL(2) and the C layer does not reduce INTEGER(16)
 * (__int128): MPI_REAL2, MPI_COMPLEX4 and MPI_INTEGER16 are MPI_DATATYPE_NULL (MPI 4.0 section
 * 3.2.2 allows it). */
#define MPI_REAL4 MPI_REAL
#define MPI_REAL8 MPI_DOUBLE_PRECISION
#define MPI_COMPLEX8 MPI_COMPLEX
#define MPI_COMPLEX16 MPI_DOUBLE_COMPLEX
#define MPI_INTEGER1 MPI_INT8_T
#define MPI_INTEGER2 MPI_INT16_T
#define MPI_INTEGER4 MPI_INTEGER
#define MPI_INTEGER8 MPI_INT64_T
#define MPI_REAL2 MPI_DATATYPE_NULL
#define MPI_COMPLEX4 MPI_DATATYPE_NULL
#define MPI_INTEGER16 MPI_DATATYPE_NULL
#define MPC_DATATYPE_PREDEFINED_COUNT 58

/* ---- reduction operations ---------------------------------------------------------------- */
#define MPI_MAX MPC_HANDLE(MPC_HANDLE_KIND_OP, 1)
#define MPI_MIN MPC_HANDLE(MPC_HANDLE_KIND_OP, 2)
#define MPI_SUM MPC_HANDLE(MPC_HANDLE_KIND_OP, 3)
#define MPI_PROD MPC_HANDLE(MPC_HANDLE_KIND_OP, 4)
#define MPI_LAND MPC_HANDLE(MPC_HANDLE_KIND_OP, 5)
#define MPI_BAND MPC_HANDLE(MPC_HANDLE_KIND_OP, 6)
#define MPI_LOR MPC_HANDLE(MPC_HANDLE_KIND_OP, 7)
#define MPI_BOR MPC_HANDLE(MPC_HANDLE_KIND_OP, 8)
#define MPI_LXOR MPC_HANDLE(MPC_HANDLE_KIND_OP, 9)
#define MPI_BXOR MPC_HANDLE(MPC_HANDLE_KIND_OP, 10)
#define MPI_MINLOC MPC_HANDLE(MPC_HANDLE_KIND_OP, 11)
#define MPI_MAXLOC MPC_HANDLE(MPC_HANDLE_KIND_OP, 12)
#define MPI_REPLACE MPC_HANDLE(MPC_HANDLE_KIND_OP, 13)
#define MPI_NO_OP MPC_HANDLE(MPC_HANDLE_KIND_OP, 14)

/* ---- constants --------------------------------------------------------------------------- */
#define MPI_ANY_SOURCE (-2)
#define MPI_PROC_NULL (-1)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID 0x24000000
#define MPI_BSEND_OVERHEAD 96
#define MPI_MAX_PROCESSOR_NAME 128
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128
#define MPI_IN_PLACE ((void *)-1)
#define MPI_BOTTOM ((void *)0)
#define MPI_UNWEIGHTED ((int *)1)
#define MPI_WEIGHTS_EMPTY ((int *)2)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
#define MPI_ERRCODES_IGNORE ((int *)0)

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

#define MPI_COMM_TYPE_SHARED 1

/* Predefined attribute keys */
#define MPI_TAG_UB 0x64400001
#define MPI_HOST 0x64400003
#define MPI_IO 0x64400005
#define MPI_WTIME_IS_GLOBAL 0x64400007
#define MPI_UNIVERSE_SIZE 0x64400009
#define MPI_LASTUSEDCODE 0x6440000b
#define MPI_APPNUM 0x6440000d

/* ---- error classes ----------------------------------------------------------------------- */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_ROOT 7
#define MPI_ERR_TRUNCATE 14
#define MPI_ERR_GROUP 8
#define MPI_ERR_OP 9
#define MPI_ERR_REQUEST 19
#define MPI_ERR_TOPOLOGY 10
#define MPI_ERR_DIMS 11
#define MPI_ERR_ARG 12
#define MPI_ERR_OTHER 15
#define MPI_ERR_UNKNOWN 13
#define MPI_ERR_INTERN 16
#define MPI_ERR_IN_STATUS 17
#define MPI_ERR_PENDING 18
#define MPI_ERR_ACCESS 20
#define MPI_ERR_AMODE 21
#define MPI_ERR_BAD_FILE 22
#define MPI_ERR_CONVERSION 23
#define MPI_ERR_DUP_DATAREP 24
#define MPI_ERR_FILE_EXISTS 25
#define MPI_ERR_FILE_IN_USE 26
#define MPI_ERR_FILE 27
#define MPI_ERR_INFO 28
#define MPI_ERR_INFO_KEY 29
#define MPI_ERR_INFO_VALUE 30
#define MPI_ERR_INFO_NOKEY 31
#define MPI_ERR_IO 32
#define MPI_ERR_NAME 33
#define MPI_ERR_NO_MEM 34
#define MPI_ERR_NOT_SAME 35
#define MPI_ERR_NO_SPACE 36
#define MPI_ERR_NO_SUCH_FILE 37
#define MPI_ERR_PORT 38
#define MPI_ERR_QUOTA 39
#define MPI_ERR_READ_ONLY 40
#define MPI_ERR_SERVICE 41
#define MPI_ERR_SPAWN 42
#define MPI_ERR_UNSUPPORTED_DATAREP 43
#define MPI_ERR_UNSUPPORTED_OPERATION 44
#define MPI_ERR_WIN 45
#define MPI_ERR_BASE 46
#define MPI_ERR_LOCKTYPE 47
#define MPI_ERR_KEYVAL 48
#define MPI_ERR_RMA_CONFLICT 49
#define MPI_ERR_RMA_SYNC 50
#define MPI_ERR_SIZE 51
#define MPI_ERR_DISP 52
#define MPI_ERR_ASSERT 53
#define MPI_ERR_RMA_RANGE 55
#define MPI_ERR_RMA_ATTACH 56
#define MPI_ERR_RMA_SHARED 57
#define MPI_ERR_RMA_FLAVOR 58
#define MPI_T_ERR_INVALID 72
#define MPI_ERR_LASTCODE 0x3fffffff

/* ---- environment ------------------------------------------------------------------------- */
int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Initialized(int *flag);
int MPI_Finalize(void);
int MPI_Finalized(int *flag);
int MPI_Abort(MPI_Comm comm, int errorcode);
int MPI_Query_thread(int *provided);
int MPI_Is_thread_main(int *flag);
int MPI_Get_version(int *version, int *subversion);
int MPI_Get_library_version(char *version, int *resultlen);
int MPI_Get_processor_name(char *name, int *resultlen);
double MPI_Wtime(void);
double MPI_Wtick(void);
int MPI_Pcontrol(const int level, ...); /* profiling control: a no-op unless a tool replaces it */
int MPI_Comm_get_parent(MPI_Comm *parent); /* MPI_COMM_NULL: no process is ever spawned */

int PMPI_Init(int *argc, char ***argv);
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int PMPI_Initialized(int *flag);
int PMPI_Finalize(void);
int PMPI_Finalized(int *flag);
int PMPI_Abort(MPI_Comm comm, int errorcode);
int PMPI_Query_thread(int *provided);
int PMPI_Is_thread_main(int *flag);
int PMPI_Get_version(int *version, int *subversion);
int PMPI_Get_library_version(char *version, int *resultlen);
int PMPI_Get_processor_name(char *name, int *resultlen);
double PMPI_Wtime(void);
double PMPI_Wtick(void);
int PMPI_Pcontrol(const int level, ...);
int PMPI_Comm_get_parent(MPI_Comm *parent);

/* ---- communicators (the core; the rest comes with the communicator work) ----------------- */
int MPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_size(MPI_Comm comm, int *size);
int PMPI_Comm_rank(MPI_Comm comm, int *rank);
int PMPI_Comm_size(MPI_Comm comm, int *size);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int MPI_Comm_free(MPI_Comm *comm);
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name);
int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen);
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int PMPI_Comm_free(MPI_Comm *comm);
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name);
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen);

/* ---- collectives (the others: mpc/mpi_coll.h) --------------------------------------------- */
int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int PMPI_Barrier(MPI_Comm comm);
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm);
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm);
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm);
int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm);
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm);
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm);
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm);
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm);
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

/* ---- point-to-point ---------------------------------------------------------------------- */
int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status);
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request);
int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request);
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
int MPI_Wait(MPI_Request *request, MPI_Status *status);
int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);
int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status);
int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]);
int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status);
int MPI_Request_free(MPI_Request *request);
int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int MPI_Buffer_attach(void *buffer, int size);
int MPI_Buffer_detach(void *buffer_addr, int *size);
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);
int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status);
int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status);
int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request);
int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request);
int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request);
int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request);
int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request);
int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request *request);
int MPI_Start(MPI_Request *request);
int MPI_Startall(int count, MPI_Request array_of_requests[]);
int MPI_Cancel(MPI_Request *request);
int MPI_Test_cancelled(const MPI_Status *status, int *flag);
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]);
int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]);
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request);
int MPI_Grequest_complete(MPI_Request request);
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status *status);
int MPI_Status_set_cancelled(MPI_Status *status, int flag);
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
int MPI_Free_mem(void *base);

int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status);
int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request);
int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request);
int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request);
int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request);
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status);
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
int PMPI_Wait(MPI_Request *request, MPI_Status *status);
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);
int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status);
int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]);
int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status);
int PMPI_Request_free(MPI_Request *request);
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request *request);
int PMPI_Buffer_attach(void *buffer, int size);
int PMPI_Buffer_detach(void *buffer_addr, int *size);
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status);
int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status);
int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request);
int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request);
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request);
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request);
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request);
int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request);
int PMPI_Start(MPI_Request *request);
int PMPI_Startall(int count, MPI_Request array_of_requests[]);
int PMPI_Cancel(MPI_Request *request);
int PMPI_Test_cancelled(const MPI_Status *status, int *flag);
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                  MPI_Status array_of_statuses[]);
int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                  MPI_Status array_of_statuses[]);
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request);
int PMPI_Grequest_complete(MPI_Request request);
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Status *status);
int PMPI_Status_set_cancelled(MPI_Status *status, int flag);
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
int PMPI_Free_mem(void *base);

/* ---- reduction operations ---------------------------------------------------------------- */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op);
int MPI_Op_free(MPI_Op *op);
int MPI_Op_commutative(MPI_Op op, int *commute);
int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op);
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op);
int PMPI_Op_free(MPI_Op *op);
int PMPI_Op_commutative(MPI_Op op, int *commute);
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op);

/* ---- errors ------------------------------------------------------------------------------ */
typedef void MPI_Comm_errhandler_function(MPI_Comm *, int *, ...);
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
int MPI_Error_string(int errorcode, char *string, int *resultlen);
int MPI_Error_class(int errorcode, int *errorclass);
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
int PMPI_Error_string(int errorcode, char *string, int *resultlen);
int PMPI_Error_class(int errorcode, int *errorclass);

/* ---- Fortran handle conversions (handles are ints: identity) ------------------------------ */
/* Functions in libmpc under both names (for tools that take their address or look them up),
 * and macros of the same names, so that a call costs nothing (as in MPICH). */
MPI_Fint MPI_Comm_c2f(MPI_Comm h);
MPI_Comm MPI_Comm_f2c(MPI_Fint h);
MPI_Fint PMPI_Comm_c2f(MPI_Comm h);
MPI_Comm PMPI_Comm_f2c(MPI_Fint h);
MPI_Fint MPI_Type_c2f(MPI_Datatype h);
MPI_Datatype MPI_Type_f2c(MPI_Fint h);
MPI_Fint PMPI_Type_c2f(MPI_Datatype h);
MPI_Datatype PMPI_Type_f2c(MPI_Fint h);
MPI_Fint MPI_Group_c2f(MPI_Group h);
MPI_Group MPI_Group_f2c(MPI_Fint h);
MPI_Fint PMPI_Group_c2f(MPI_Group h);
MPI_Group PMPI_Group_f2c(MPI_Fint h);
MPI_Fint MPI_Request_c2f(MPI_Request h);
MPI_Request MPI_Request_f2c(MPI_Fint h);
MPI_Fint PMPI_Request_c2f(MPI_Request h);
MPI_Request PMPI_Request_f2c(MPI_Fint h);
MPI_Fint MPI_Op_c2f(MPI_Op h);
MPI_Op MPI_Op_f2c(MPI_Fint h);
MPI_Fint PMPI_Op_c2f(MPI_Op h);
MPI_Op PMPI_Op_f2c(MPI_Fint h);
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler h);
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint h);
MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler h);
MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint h);
MPI_Fint MPI_Info_c2f(MPI_Info h);
MPI_Info MPI_Info_f2c(MPI_Fint h);
MPI_Fint PMPI_Info_c2f(MPI_Info h);
MPI_Info PMPI_Info_f2c(MPI_Fint h);
MPI_Fint MPI_Message_c2f(MPI_Message h);
MPI_Message MPI_Message_f2c(MPI_Fint h);
MPI_Fint PMPI_Message_c2f(MPI_Message h);
MPI_Message PMPI_Message_f2c(MPI_Fint h);
MPI_Fint MPI_Win_c2f(MPI_Win h);
MPI_Win MPI_Win_f2c(MPI_Fint h);
MPI_Fint PMPI_Win_c2f(MPI_Win h);
MPI_Win PMPI_Win_f2c(MPI_Fint h);
#define MPI_Comm_c2f(h) ((MPI_Fint)(h))
#define MPI_Comm_f2c(h) ((MPI_Comm)(h))
#define PMPI_Comm_c2f(h) ((MPI_Fint)(h))
#define PMPI_Comm_f2c(h) ((MPI_Comm)(h))
#define MPI_Type_c2f(h) ((MPI_Fint)(h))
#define MPI_Type_f2c(h) ((MPI_Datatype)(h))
#define PMPI_Type_c2f(h) ((MPI_Fint)(h))
#define PMPI_Type_f2c(h) ((MPI_Datatype)(h))
#define MPI_Group_c2f(h) ((MPI_Fint)(h))
#define MPI_Group_f2c(h) ((MPI_Group)(h))
#define PMPI_Group_c2f(h) ((MPI_Fint)(h))
#define PMPI_Group_f2c(h) ((MPI_Group)(h))
#define MPI_Request_c2f(h) ((MPI_Fint)(h))
#define MPI_Request_f2c(h) ((MPI_Request)(h))
#define PMPI_Request_c2f(h) ((MPI_Fint)(h))
#define PMPI_Request_f2c(h) ((MPI_Request)(h))
#define MPI_Op_c2f(h) ((MPI_Fint)(h))
#define MPI_Op_f2c(h) ((MPI_Op)(h))
#define PMPI_Op_c2f(h) ((MPI_Fint)(h))
#define PMPI_Op_f2c(h) ((MPI_Op)(h))
#define MPI_Errhandler_c2f(h) ((MPI_Fint)(h))
#define MPI_Errhandler_f2c(h) ((MPI_Errhandler)(h))
#define PMPI_Errhandler_c2f(h) ((MPI_Fint)(h))
#define PMPI_Errhandler_f2c(h) ((MPI_Errhandler)(h))
#define MPI_Info_c2f(h) ((MPI_Fint)(h))
#define MPI_Info_f2c(h) ((MPI_Info)(h))
#define PMPI_Info_c2f(h) ((MPI_Fint)(h))
#define PMPI_Info_f2c(h) ((MPI_Info)(h))
#define MPI_Message_c2f(h) ((MPI_Fint)(h))
#define MPI_Message_f2c(h) ((MPI_Message)(h))
#define PMPI_Message_c2f(h) ((MPI_Fint)(h))
#define PMPI_Message_f2c(h) ((MPI_Message)(h))
#define MPI_Win_c2f(h) ((MPI_Fint)(h))
#define MPI_Win_f2c(h) ((MPI_Win)(h))
#define PMPI_Win_c2f(h) ((MPI_Fint)(h))
#define PMPI_Win_f2c(h) ((MPI_Win)(h))
/* A Fortran status is the C one as MPI_STATUS_SIZE integers (MPI_SOURCE, MPI_TAG, MPI_ERROR
 * first); MPI_STATUS_IGNORE is not a status (MPI_ERR_ARG). */
int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status);
int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status);
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status);
int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status);
/* mpi_f08's TYPE(MPI_Status) as seen from C (MPI 3.1 section 17.2.5): the layout of MPI_Status,
 * so the conversions below copy it. */
typedef struct MPI_F08_status {
    MPI_Fint MPI_SOURCE;
    MPI_Fint MPI_TAG;
    MPI_Fint MPI_ERROR;
    MPI_Fint mpc_count_lo;
    MPI_Fint mpc_count_hi_and_cancelled;
} MPI_F08_status;
int MPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status);
int MPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status);
int MPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status);
int MPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status);
int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status);
int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status);
int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status);
int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status);
/* The addresses of mpi_f08's MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE, for C code called from
 * Fortran: the calling rank's (each privatized rank has its own copy of the Fortran COMMON
 * blocks that hold them), hence calls rather than variables. */
MPI_F08_status *mpc_f08_status_ignore(void);
MPI_F08_status *mpc_f08_statuses_ignore(void);
#define MPI_F08_STATUS_IGNORE (mpc_f08_status_ignore())
#define MPI_F08_STATUSES_IGNORE (mpc_f08_statuses_ignore())

#ifdef __cplusplus
}
#endif

/* Further parts of the interface, one header per area. */
#include "mpc/mpi_datatypes.h"
#include "mpc/mpi_groups.h"
#include "mpc/mpi_coll.h"
/* MPI_Address, MPI_Type_struct, MPI_Errhandler_set... (removed by MPI-3.0): declared on request. */
#ifdef MPC_ENABLE_MPI1_COMPAT
#include "mpc/removed_mpi1.h"
#endif

#endif /* MPC_MPI_H_INCLUDED */

#!/usr/bin/env python3
"""Generates MPC's Fortran bindings from the C headers (see api.py and docs/fortran.md).

    gen.py OUTDIR HEADER...

writes into OUTDIR:
  fortran_bindings.c  the Fortran-callable C wrappers, compiled into libmpc: pmpi_send_ (the
                      code) and its aliases pmpi_send__ PMPI_SEND, mpi_send_ mpi_send__ MPI_SEND
                      (weak, for profiling tools), one per MPI_ function of the headers
  mpif.h              constants, special addresses (COMMON blocks) and function types, valid
                      as fixed and free form
  mpi.f90             module mpi: the same, with explicit interfaces
  mpi_f08.f90         module mpi_f08: TYPE(MPI_Comm)..., optional ierror, calling the wrappers
                      through BIND(C) interfaces
Files are rewritten only when their text changes (no needless rebuilds).
"""

import os
import sys

import api
import buffers

WIDE_KIND = {"MPI_Aint": "MPI_ADDRESS_KIND", "MPI_Count": "MPI_COUNT_KIND", "MPI_Offset": "MPI_OFFSET_KIND"}
PREDEFINED_KEYVALS = ("MPI_TAG_UB", "MPI_HOST", "MPI_IO", "MPI_WTIME_IS_GLOBAL", "MPI_UNIVERSE_SIZE",
                      "MPI_LASTUSEDCODE", "MPI_APPNUM")
# attribute_val of these is the value itself in Fortran (an address-sized or default integer).
ATTR_GETTERS = {"MPI_Comm_get_attr": "MPI_Aint", "MPI_Attr_get": "MPI_Fint", "MPI_Type_get_attr": "MPI_Aint"}
# void * inputs that are integer values in Fortran (attribute values, extra states): the C
# function gets the value itself, as a pointer-sized integer.
VALUE_IN = {("MPI_Comm_set_attr", "attribute_val"): "MPI_Aint", ("MPI_Type_set_attr", "attribute_val"): "MPI_Aint",
            ("MPI_Attr_put", "attribute_val"): "MPI_Fint",
            ("MPI_Comm_create_keyval", "extra_state"): "MPI_Aint", ("MPI_Type_create_keyval", "extra_state"): "MPI_Aint",
            ("MPI_Keyval_create", "extra_state"): "MPI_Fint", ("MPI_Grequest_start", "extra_state"): "MPI_Aint"}
# Of those, the ones whose Fortran callbacks get the caller's own variable by reference (the C
# function gets its address), as Open MPI and MPICH pass them: MPI_GREQUEST_START's free_fn may
# update the EXTRA_STATE variable the program passed (MPICH's greqf tests it).
ADDRESS_IN = {("MPI_Grequest_start", "extra_state")}
# String outputs written only when a flag says so: MPI_INFO_GET leaves VALUE as it was when the
# key is not there (MPICH's infotest2f).
STR_OUT_IF = {("MPI_Info_get", "value"): "flag"}
# Calls whose callbacks are Fortran procedures (arguments by reference, an ierror, LOGICAL
# flags): the wrapper calls mpc_f_<name> (support.cpp), which interposes C trampolines.
FORTRAN_CALLBACKS = ("MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Keyval_create", "MPI_Grequest_start")
# Not in mpi_f08 (MPI 3.1 gives the deprecated MPI_KEYVAL_CREATE no mpi_f08 binding).
NOT_F08 = ("MPI_Keyval_create",)
# Predefined callbacks (support.cpp), EXTERNAL in mpif.h and module mpi.
PREDEFINED_PROCEDURES = ("MPI_COMM_NULL_COPY_FN", "MPI_COMM_NULL_DELETE_FN", "MPI_COMM_DUP_FN",
                         "MPI_TYPE_NULL_COPY_FN", "MPI_TYPE_NULL_DELETE_FN", "MPI_TYPE_DUP_FN",
                         "MPI_NULL_COPY_FN", "MPI_NULL_DELETE_FN", "MPI_DUP_FN")
# Indices into arrays of requests: 0-based in C, 1-based in Fortran (MPI_UNDEFINED stays).
INDEX_OUT = {"MPI_Waitany": ("index", "1"), "MPI_Testany": ("index", "1"),
             "MPI_Waitsome": ("array_of_indices", "*(MPI_Fint *)outcount"),
             "MPI_Testsome": ("array_of_indices", "*(MPI_Fint *)outcount")}
# mpi_f08: the abstract interface of each callback parameter (the C wrapper gets its address).
F08_CALLBACKS = {"user_fn": "MPI_User_function", "comm_errhandler_fn": "MPI_Comm_errhandler_function",
                 "comm_copy_attr_fn": "MPI_Comm_copy_attr_function",
                 "comm_delete_attr_fn": "MPI_Comm_delete_attr_function",
                 "type_copy_attr_fn": "MPI_Type_copy_attr_function",
                 "type_delete_attr_fn": "MPI_Type_delete_attr_function",
                 "query_fn": "MPI_Grequest_query_function", "free_fn": "MPI_Grequest_free_function",
                 "cancel_fn": "MPI_Grequest_cancel_function"}
# The copy / delete interfaces of MPI 3.1 section 6.7.2 (communicators) and 6.7.4 (datatypes):
# TYPE(MPI_Comm) has the layout of an INTEGER, so the C trampolines of mpif.h serve them too.
F08_ATTR_INTERFACES = "".join(f"""
    subroutine MPI_{kind}_copy_attr_function(old{obj}, {obj}_keyval, extra_state, attribute_val_in, &
        attribute_val_out, flag, ierror)
      import
      type(MPI_{handle}) :: old{obj}
      integer :: {obj}_keyval, ierror
      integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
      logical :: flag
    end subroutine MPI_{kind}_copy_attr_function
    subroutine MPI_{kind}_delete_attr_function({obj}, {obj}_keyval, attribute_val, extra_state, ierror)
      import
      type(MPI_{handle}) :: {obj}
      integer :: {obj}_keyval, ierror
      integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    end subroutine MPI_{kind}_delete_attr_function""" for kind, obj, handle in
    (("Comm", "comm", "Comm"), ("Type", "type", "Datatype")))
F08_ABSTRACT = """  abstract interface
    subroutine MPI_User_function(invec, inoutvec, len, datatype)
      import
      type(c_ptr), value :: invec, inoutvec
      integer :: len
      type(MPI_Datatype) :: datatype
    end subroutine MPI_User_function
    subroutine MPI_Comm_errhandler_function(comm, error_code)
      import
      type(MPI_Comm) :: comm
      integer :: error_code
    end subroutine MPI_Comm_errhandler_function
    subroutine MPI_Grequest_query_function(extra_state, status, ierror)
      import
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
      type(MPI_Status) :: status
      integer :: ierror
    end subroutine MPI_Grequest_query_function
    subroutine MPI_Grequest_free_function(extra_state, ierror)
      import
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
      integer :: ierror
    end subroutine MPI_Grequest_free_function
    subroutine MPI_Grequest_cancel_function(extra_state, complete, ierror)
      import
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
      logical :: complete
      integer :: ierror
    end subroutine MPI_Grequest_cancel_function"""


def fortran_params(f):
    """The parameters a Fortran caller passes (before ierror)."""
    if f.name in ("MPI_Init", "MPI_Init_thread"):
        return [p for p in f.params if p.name not in ("argc", "argv")]
    return list(f.params)


def kind_of(f, p):
    if f.name in ATTR_GETTERS and p.name == "attribute_val":
        return "attr_out"
    if (f.name, p.name) in VALUE_IN:
        return "value_in"
    if f.name == "MPI_Buffer_detach" and p.name == "buffer_addr":
        return "addr_out"  # C stores the buffer's address there: not into a Fortran buffer
    return p.kind


def c_cast(p):
    """The C type of parameter p, for a cast of the Fortran argument."""
    const = "const " if p.const else ""
    if p.dims.count("[") > 1:
        inner = p.dims[p.dims.index("]") + 1:]
        return f"{const}{p.base} (*){inner}"
    return f"{const}{p.base} {'*' * p.ptr}"


# ---- C wrappers ---------------------------------------------------------------------------------
def c_parts(f):
    """The Fortran-ABI wrapper of f in parts: its parameters (C declarations), the hidden string
    lengths, the statements before the call, the C call's arguments, the statements after it,
    and whether it needs the special addresses."""
    params, hidden, pre, args, post = [], [], [], [], []
    needs_sentinels = False
    fps = fortran_params(f)
    for p in f.params:
        k = kind_of(f, p)
        n = p.name
        if p not in fps:
            args.append("NULL")
            continue
        if k in ("int", "logical"):
            params.append(f"MPI_Fint *{n}")
            args.append(f"(*{n} != 0)" if k == "logical" else f"*{n}")
        elif k == "wide":
            params.append(f"{p.base} *{n}")
            args.append(f"*{n}")
        elif k in ("ref", "lref", "funcptr", "f08status", "fstatus"):
            params.append(f"void *{n}")
            args.append(f"({c_cast(p)}){n}")
            if k == "lref" and not p.const:
                count = "1" if not p.array else "*maxdims"
                post.append(f"mpc_f_logicals_out((MPI_Fint *){n}, {count});")
        elif k in ("choice", "status", "statuses", "weights"):
            needs_sentinels = True
            params.append(f"void *{n}")
            args.append(f"({c_cast(p)})mpc_f_{k}({n}, s)")
        elif k == "str_in":
            params.append(f"const char *{n}")
            hidden.append(f"size_t {n}_len")
            # Info keys and values lose their leading blanks too (MPI 3.1 section 9: "leading and
            # trailing blanks are stripped"); other strings (names) only their trailing ones.
            conv = "mpc_f_str_in_trimmed" if f.name.startswith("MPI_Info_") else "mpc_f_str_in"
            pre.append(f"char *{n}_c = {conv}({n}, {n}_len);")
            pre.append(f"if ({n}_c == NULL) {{ rc = MPI_ERR_NO_MEM; goto done_{n}; }}")
            args.append(f"{n}_c")
            post.insert(0, f"free({n}_c);\ndone_{n}:;")
        elif k == "str_out":
            params.append(f"char *{n}")
            hidden.append(f"size_t {n}_len")
            pre.append(f"char *{n}_c = mpc_f_str_buffer({n}_len);")
            pre.append(f"if ({n}_c == NULL) {{ rc = MPI_ERR_NO_MEM; goto done_{n}; }}")
            args.append(f"{n}_c")
            ok = f"rc == MPI_SUCCESS && *(int *){STR_OUT_IF[(f.name, n)]} == 0 ? MPI_ERR_OTHER : rc" \
                if (f.name, n) in STR_OUT_IF else "rc"
            post.insert(0, f"mpc_f_str_out({n}, {n}_len, {n}_c, {ok});\ndone_{n}:;")
        elif k == "addr_out":
            params.append(f"void *{n}")
            pre.append(f"void *{n}_c = NULL;")
            pre.append(f"(void){n};")
            args.append(f"&{n}_c")
        elif k == "attr_out":
            params.append(f"void *{n}")
            pre.append(f"void *{n}_c = NULL;")
            args.append(f"&{n}_c")
            t = ATTR_GETTERS[f.name]
            # only communicators have predefined attributes
            value = f"(MPI_Aint){n}_c" if f.name.startswith("MPI_Type") else f"mpc_f_attr_value(*{f.params[1].name}, {n}_c)"
            post.append(f"if (rc == MPI_SUCCESS && *(MPI_Fint *)flag) {{ *({t} *){n} = ({t}){value}; }}")
        elif k == "value_in":
            t = VALUE_IN[(f.name, n)]
            params.append(f"const {t} *{n}")
            args.append(f"(void *){n}" if (f.name, n) in ADDRESS_IN else f"(void *)(MPI_Aint)*{n}")
        else:
            raise SystemExit(f"gen.py: {f.name}: no C wrapper for parameter kind {k}")
    if f.name in INDEX_OUT:
        name, count = INDEX_OUT[f.name]
        post.append(f"if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) {{ mpc_f_indices_out((MPI_Fint *){name}, {count}); }}")
    if f.name == "MPI_Info_get":  # at most the Fortran buffer's length
        args[2] = "(*valuelen < (int)value_len ? *valuelen : (int)value_len)"
    return params, hidden, pre, args, post, needs_sentinels


def c_wrapper(f):
    params, hidden, pre, args, post, needs_sentinels = c_parts(f)
    lower = f.stem.lower()
    if f.has_ierror:
        params.append("MPI_Fint *ierror")
    sig_params = ", ".join(params + hidden) or "void"
    ret = {"int": "void", "double": "double", "MPI_Aint": "MPI_Aint"}[f.ret]
    body = []
    if needs_sentinels:
        body.append("const struct mpc_f_sentinels *s = mpc_f_sentinels_get();")
    target = f"mpc_f_{f.stem.lower()}" if f.name in FORTRAN_CALLBACKS else f"PMPI_{f.stem}"
    call = f"{target}({', '.join(args)})"
    if f.is_subroutine:
        body.append("int rc = MPI_SUCCESS;")
        body += pre
        body.append(f"rc = {call};")
        body += post
        body.append("*ierror = rc;" if f.has_ierror else "(void)rc;")
    else:
        body.append(f"return {call};")
    text = f"/* {f.name} */\n{ret} pmpi_{lower}_({sig_params}) {{\n"
    text += "".join("    " + line.replace("\n", "\n    ") + "\n" for line in body)
    text += "}\n"
    for alias, weak in ((f"pmpi_{lower}__", False), (f"PMPI_{f.stem.upper()}", False),
                        (f"mpi_{lower}_", True), (f"mpi_{lower}__", True), (f"MPI_{f.stem.upper()}", True)):
        attr = "weak, " if weak else ""
        text += f"{ret} {alias}({sig_params}) __attribute__(({attr}alias(\"pmpi_{lower}_\")));\n"
    return text


def c_file(functions):
    out = ["/* Generated by mpi_compat/fortran/gen.py from the C headers: do not edit. */",
           "#include <stdlib.h>", "#include <mpi.h>", '#include "mpi_compat/fortran/support.h"',
           '#include "mpi_compat/fortran/f08/buffers.h"', "",
           "#pragma GCC diagnostic ignored \"-Wmissing-prototypes\"",
           "#pragma GCC diagnostic ignored \"-Wmissing-declarations\"", ""]
    out += [c_wrapper(f) for f in functions]
    out.append("/* mpi_f08: choice buffers as C descriptors (f08/buffers.h) */")
    out += [buffers.c_wrapper(f, c_parts(f)) for f in functions if buffers.params(f)]
    return "\n".join(out)


# ---- Fortran declarations -------------------------------------------------------------------------
def f_dims(p):
    if p.dims.count("[") > 1:
        inner = p.dims[p.dims.index("]") + 1:].strip("[]")
        return f"({inner},*)"
    return "(*)" if p.array else ""


def f_decl(f, p, f08=False, bind=False):
    """Declaration lines of dummy p: in a module mpi interface, an mpi_f08 procedure (f08) or the
    BIND(C) interface the mpi_f08 procedure calls (bind)."""
    k, n = kind_of(f, p), p.name
    handle = f08 and p.handle
    if k in ("int", "ref") and handle:
        return [f"type({p.handle}) :: {n}{f_dims(p) if k == 'ref' else ''}"]
    if k in ("int", "ref", "weights"):
        if p.base in WIDE_KIND:
            return [f"integer(kind={WIDE_KIND[p.base]}) :: {n}{f_dims(p)}"]
        return [f"integer :: {n}{f_dims(p) if k != 'int' else ''}"]
    if k == "wide":
        return [f"integer(kind={WIDE_KIND[p.base]}) :: {n}"]
    if k in ("logical", "lref"):
        return [f"logical :: {n}{f_dims(p) if k == 'lref' else ''}"]
    if k == "choice" and f08 and p in buffers.params(f):
        attrs = (", intent(in)" if p.const else "") + (", asynchronous" if buffers.is_async(f) else "")
        return [f"type(*), dimension(..){attrs} :: {n}"]
    if k == "choice":
        lines = [] if bind else [f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {n}"]
        return lines + [f"type(*), dimension(*) :: {n}"]
    if k == "f08status":
        return [f"type(MPI_Status) :: {n}"]
    if k == "fstatus":
        return [f"integer :: {n}(MPI_STATUS_SIZE)"]
    if k in ("status", "statuses"):
        dims = "" if k == "status" else "(*)"
        if f08:
            return [f"type(MPI_Status) :: {n}{dims}"]
        return [f"integer :: {n}(MPI_STATUS_SIZE{',*' if k == 'statuses' else ''})"]
    if k in ("str_in", "str_out"):
        return [f"character(kind=c_char) :: {n}(*)"] if bind else [f"character(len=*) :: {n}"]
    if k == "funcptr":
        if bind:
            return [f"type(c_funptr), value :: {n}"]
        if f08:
            return [f"procedure({F08_CALLBACKS[n]}) :: {n}"]
        return [f"external :: {n}"]
    if k == "addr_out":
        lines = [] if bind else [f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {n}"]
        return lines + [f"type(*), dimension(*) :: {n}"]
    if k == "attr_out":
        return [f"integer(kind={'MPI_ADDRESS_KIND' if ATTR_GETTERS[f.name] == 'MPI_Aint' else 'c_int'}) :: {n}"]
    if k == "value_in":
        return [f"integer(kind={'MPI_ADDRESS_KIND' if VALUE_IN[(f.name, n)] == 'MPI_Aint' else 'c_int'}) :: {n}"]
    raise SystemExit(f"gen.py: {f.name}: no Fortran declaration for parameter kind {k}")


def wrap(line, indent, width=100):
    """Free-form continuation of a long line."""
    out = []
    while len(line) > width:
        cut = line.rfind(", ", 0, width) + 1
        out.append(line[:cut] + " &")
        line = " " * (indent + 4) + line[cut:].lstrip()
    return "\n".join(out + [line])


def f_return_type(f):
    return {"double": "double precision", "MPI_Aint": "integer(kind=MPI_ADDRESS_KIND)"}[f.ret]


def interface(f, indent="    ", name=None):
    name = name or f.name.upper()
    names = [p.name for p in fortran_params(f)] + (["ierror"] if f.has_ierror else [])
    head = "subroutine" if f.is_subroutine else f"{f_return_type(f)} function"
    lines = [wrap(f"{indent}{head} {name}({', '.join(names)})", len(indent)), f"{indent}  import"]
    for p in fortran_params(f):
        lines += [f"{indent}  {d}" for d in f_decl(f, p)]
    if f.has_ierror:
        lines.append(f"{indent}  integer :: ierror")
    lines.append(f"{indent}end {head.split()[-1]} {name}")
    return "\n".join(lines)


# MPI_SIZEOF (MPI 3.1 section 17.1.9) in both modules: a generic over every intrinsic numeric
# and logical kind gfortran has and CHARACTER, scalars and arrays of any rank alike (assumed
# rank), giving the size in bytes of one element (of a CHARACTER: its length). Not in mpif.h (the standard does not require it there).
SIZEOF_KINDS = [("integer", k) for k in (1, 2, 4, 8, 16)] + [("real", k) for k in (4, 8, 10, 16)] + \
    [("complex", k) for k in (4, 8, 10, 16)] + [("logical", k) for k in (1, 2, 4, 8)] + [("character", 1)]


def sizeof_lines(optional_ierror):
    procs = [f"mpc_sizeof_{t[0]}{k}" for t, k in SIZEOF_KINDS]
    generic = ["  interface MPI_Sizeof", wrap(f"    module procedure {', '.join(procs)}", 4), "  end interface MPI_Sizeof",
               "  interface PMPI_Sizeof", wrap(f"    module procedure {', '.join(procs)}", 4), "  end interface PMPI_Sizeof"]
    opt = ", optional" if optional_ierror else ""
    bodies = []
    for (t, k), proc in zip(SIZEOF_KINDS, procs):
        decl = "character(len=*)" if t == "character" else f"{t}(kind={k})"  # CHARACTER: its length
        bodies += [f"  subroutine {proc}(x, size, ierror)", f"    {decl}, intent(in) :: x(..)",
                   "    integer, intent(out) :: size", f"    integer, intent(out){opt} :: ierror",
                   "    size = storage_size(x) / 8"]
        bodies += ["    if (present(ierror)) ierror = MPI_SUCCESS"] if optional_ierror else ["    ierror = MPI_SUCCESS"]
        bodies.append(f"  end subroutine {proc}")
    return generic, bodies


# ---- mpif.h and module mpi --------------------------------------------------------------------------
# LOGICAL constants (MPI 3.1 section 17.1.7): choice buffers are passed as addresses (a
# non-contiguous section is copied), and no ASYNCHRONOUS protection.
LOGICAL_CONSTANTS = {"MPI_SUBARRAYS_SUPPORTED": ".false.", "MPI_ASYNC_PROTECTS_NONBLOCKING": ".false."}
# mpi_f08: choice buffers are TYPE(*), DIMENSION(..) descriptors, any array section works
# (docs/fortran.md, "Array sections"); see there for MPI_ASYNC_PROTECTS_NONBLOCKING.
F08_LOGICAL_CONSTANTS = {"MPI_SUBARRAYS_SUPPORTED": ".true.", "MPI_ASYNC_PROTECTS_NONBLOCKING": ".true."}


def status_type_lines():
    """TYPE(MPI_Status), the C MPI_Status (MPI_F08_status): in mpi_f08, and in mpi for
    MPI_STATUS_F082F / MPI_STATUS_F2F08. BIND(C) types with the same name and components are
    the same type, so a status of either module passes to the other's procedures."""
    return ["  type, bind(C) :: MPI_Status", "    integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
            "    integer(c_int), private :: mpc_count_lo, mpc_count_hi_and_cancelled", "  end type MPI_Status"]


def constant_lines(constants, f77):
    out = []
    for name, value in constants.items():
        if f77:
            out += [f"      integer {name}", f"      parameter ({name}={value})"]
        else:
            out.append(f"  integer, parameter :: {name} = {value}")
    for name, value in LOGICAL_CONSTANTS.items():
        if f77:
            out += [f"      logical {name}", f"      parameter ({name}={value})"]
        else:
            out.append(f"  logical, parameter :: {name} = {value}")
    return out


def sentinel_lines(f77, f08=False):
    out = []
    for name, dims, block, _ in api.SENTINELS:
        ty = "integer"
        if f08 and name in ("MPI_STATUS_IGNORE", "MPI_STATUSES_IGNORE"):
            ty, dims = "type(MPI_Status)", "" if name == "MPI_STATUS_IGNORE" else "(1)"
        if f77:
            out += [f"      {ty} {name}{dims}", f"      common /{block}/ {name}"]
        else:
            out += [f"  {ty} :: {name}{dims}", f"  common /{block}/ {name}", f"  save /{block}/"]
    return out


def mpif_h(functions, constants):
    out = ["! mpif.h: MPC's MPI interface for Fortran (fixed and free form).",
           "! Generated by mpi_compat/fortran/gen.py from MPC's C headers:",
           "! do not edit."]
    out += constant_lines(constants, True)
    out += sentinel_lines(True)
    for f in functions:
        if not f.is_subroutine:
            for name in (f.name.upper(), "P" + f.name.upper()):
                out += [f"      external {name}", f"      {f_return_type(f)} {name}"]
    out += [f"      external {name}" for name in PREDEFINED_PROCEDURES]
    return "\n".join(out) + "\n"


def mpi_module(functions, constants):
    out = ["! module mpi: MPC's MPI interface for Fortran 90. Generated by mpi_compat/fortran/gen.py",
           "! from MPC's C headers: do not edit.", "module mpi", "  use, intrinsic :: iso_c_binding, only: c_int",
           "  implicit none", "  public", "  private :: c_int"]
    out += status_type_lines()
    out += constant_lines(constants, False)
    out += sentinel_lines(False)
    out += [f"  external :: {name}" for name in PREDEFINED_PROCEDURES]
    out.append("  interface")
    out += [interface(f) for f in functions]
    # The PMPI_ names of the functions (MPI_WTIME...): mpif.h declares them EXTERNAL too.
    out += [interface(f, name="P" + f.name.upper()) for f in functions if not f.is_subroutine]
    out += [SYNC_REG_MPI]
    out.append("  end interface")
    generic, bodies = sizeof_lines(False)
    out += generic + ["contains"] + bodies
    out += ["end module mpi", ""]
    return "\n".join(out)


# ---- module mpi_f08 ---------------------------------------------------------------------------------
def f08_procedure(f):
    fps = fortran_params(f)
    names = [p.name for p in fps]
    lower = f.stem.lower()
    hidden = [p.name for p in fps if kind_of(f, p) in ("str_in", "str_out")]
    head = "subroutine" if f.is_subroutine else f"{f_return_type(f)} function"
    c_names = names + (["ierror"] if f.has_ierror else []) + [h + "_len" for h in hidden]
    # the BIND(C) interface of the wrapper
    c_name = f"mpc_f08_{lower}_" if buffers.params(f) else f"pmpi_{lower}_"
    iface = [wrap(f"    {head} c_{lower}({', '.join(c_names)}) bind(C, name=\"{c_name}\")", 4), "      import"]
    for p in fps:
        iface += ["      " + d for d in f_decl(f, p, f08=True, bind=True)]
    if f.has_ierror:
        iface.append("      integer :: ierror")
    iface += [f"      integer(c_size_t), value :: {h}_len" for h in hidden]
    iface.append(f"    end {head.split()[-1]} c_{lower}")
    # the module procedure
    proc_names = names + (["ierror"] if f.has_ierror else [])
    body = [wrap(f"  {head} {f.name}({', '.join(proc_names)})", 2)]
    for p in fps:
        body += ["    " + d for d in f_decl(f, p, f08=True)]
    body.append("    interface")
    body += iface
    body.append("    end interface")
    passed = [f"c_funloc({p.name})" if kind_of(f, p) == "funcptr" else p.name for p in fps]
    args = ", ".join(passed + (["ierror_"] if f.has_ierror else []) + [f"len({h}, c_size_t)" for h in hidden])
    if f.has_ierror:
        body += ["    integer, optional, intent(out) :: ierror", "    integer :: ierror_",
                 wrap(f"    call c_{lower}({args})", 4), "    if (present(ierror)) ierror = ierror_"]
    elif f.is_subroutine:
        body.append(wrap(f"    call c_{lower}({args})", 4))
    else:
        body.append(wrap(f"    {f.name} = c_{lower}({args})", 4))
    body.append(f"  end {head.split()[-1]} {f.name}")
    return "\n".join(body)


# MPI_F_SYNC_REG (MPI 3.1 section 17.1.8): a Fortran-only routine that does nothing but
# take the buffer, so that the compiler must assume the call reads and writes it (no code
# movement of its loads and stores across). C side: support.cpp.
SYNC_REG_MPI = """    subroutine MPI_F_SYNC_REG(buf)
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf
      type(*), dimension(*) :: buf
    end subroutine MPI_F_SYNC_REG"""
SYNC_REG_F08 = """  subroutine MPI_F_sync_reg(buf)
    type(*), dimension(..), asynchronous :: buf
    interface
    subroutine c_f_sync_reg(buf) bind(C, name="mpc_f08_f_sync_reg_")
      type(*), dimension(..), asynchronous :: buf
    end subroutine c_f_sync_reg
    end interface
    call c_f_sync_reg(buf)
  end subroutine MPI_F_sync_reg"""


def f08_predefined():
    """MPI_COMM_NULL_COPY_FN... as module procedures of the abstract interfaces."""
    out = []
    for kind, obj, handle in (("COMM", "comm", "Comm"), ("TYPE", "type", "Datatype")):
        for what, body in (("NULL_COPY", ["flag = .false."]), ("DUP", ["attribute_val_out = attribute_val_in", "flag = .true."])):
            name = f"MPI_{kind}_{what}_FN"
            out += [f"  subroutine {name}(old{obj}, {obj}_keyval, extra_state, attribute_val_in, attribute_val_out, &",
                    "      flag, ierror)", f"    type(MPI_{handle}) :: old{obj}", f"    integer :: {obj}_keyval, ierror",
                    "    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out",
                    "    logical :: flag"] + [f"    {line}" for line in body] + ["    ierror = MPI_SUCCESS", f"  end subroutine {name}"]
        name = f"MPI_{kind}_NULL_DELETE_FN"
        out += [f"  subroutine {name}({obj}, {obj}_keyval, attribute_val, extra_state, ierror)",
                f"    type(MPI_{handle}) :: {obj}", f"    integer :: {obj}_keyval, ierror",
                "    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state", "    ierror = MPI_SUCCESS",
                f"  end subroutine {name}"]
    return out


def f08_module(functions, constants, handle_types):
    out = ["! module mpi_f08: MPC's MPI interface for Fortran 2008. Generated by",
           "! mpi_compat/fortran/gen.py from MPC's C headers: do not edit.", "module mpi_f08",
           "  use, intrinsic :: iso_c_binding, only: c_int, c_size_t, c_char, c_double, c_ptr, c_funptr, c_funloc",
           "  implicit none", "  private :: c_int, c_size_t, c_char, c_double, c_ptr, c_funptr, c_funloc"]
    for t in api.HANDLE_TYPES:
        out += [f"  type, bind(C) :: {t}", "    integer(c_int) :: MPI_VAL", f"  end type {t}"]
    out += status_type_lines()
    for name, value in constants.items():
        t = handle_types.get(name)
        if t:
            out.append(f"  type({t}), parameter :: {name} = {t}({value})")
        else:
            out.append(f"  integer, parameter :: {name} = {value}")
    out += [f"  logical, parameter :: {name} = {value}" for name, value in F08_LOGICAL_CONSTANTS.items()]
    out += sentinel_lines(False, f08=True)
    out.append(F08_ABSTRACT + F08_ATTR_INTERFACES + "\n  end interface")
    eq = []
    for op, sym in (("eq", "=="), ("ne", "/=")):
        procs = ", ".join(f"mpc_{op}_{t[4:].lower()}" for t in api.HANDLE_TYPES)
        out += [f"  interface operator({sym})", wrap(f"    module procedure {procs}", 4), "  end interface"]
        for t in api.HANDLE_TYPES:
            fn = f"mpc_{op}_{t[4:].lower()}"
            eq += [f"  elemental logical function {fn}(a, b)", f"    type({t}), intent(in) :: a, b",
                   f"    {fn} = a%MPI_VAL {sym} b%MPI_VAL", f"  end function {fn}"]
    # PMPI_ names (MPI 3.1 section 14.2): a generic of one specific each, the MPI_ procedure
    # (both call the same pmpi_ C wrapper; a tool's own MPI_Send module procedure calls PMPI_Send)
    for name in [f.name for f in functions if f.name not in NOT_F08] + ["MPI_F_sync_reg"]:
        out += [f"  interface P{name}", f"    module procedure {name}", f"  end interface P{name}"]
    generic, bodies = sizeof_lines(True)
    out += generic
    out.append("contains")
    out += eq + bodies
    out += [f08_procedure(f) for f in functions if f.name not in NOT_F08]
    out += f08_predefined()
    out += [SYNC_REG_F08, "end module mpi_f08", ""]
    return "\n".join(out)


def write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: gen.py OUTDIR HEADER...")
    outdir, headers = argv[1], argv[2:]
    try:
        functions, constants, handle_types = api.parse(headers)
    except (ValueError, OSError) as e:
        sys.exit(f"gen.py: {e}")
    for f in functions:  # an uppercase symbol must not be a macro of the C headers
        if f.name.upper() in constants:
            sys.exit(f"gen.py: the symbol {f.name.upper()} would clash with a constant")
    os.makedirs(outdir, exist_ok=True)
    write_if_changed(os.path.join(outdir, "fortran_bindings.c"), c_file(functions))
    write_if_changed(os.path.join(outdir, "mpif.h"), mpif_h(functions, constants))
    write_if_changed(os.path.join(outdir, "mpi.f90"), mpi_module(functions, constants))
    write_if_changed(os.path.join(outdir, "mpi_f08.f90"), f08_module(functions, constants, handle_types))


if __name__ == "__main__":
    main(sys.argv)

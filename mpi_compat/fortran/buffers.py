"""mpi_f08's choice buffers (docs/fortran.md, "Array sections"): TYPE(*), DIMENSION(..)
dummies, which gfortran passes to C as TS 29113 descriptors (CFI_cdesc_t *). For each MPI_
function with choice buffers, gen.py writes a C wrapper mpc_f08_<name>_ that takes the
descriptors and calls the Fortran-ABI wrapper pmpi_<name>_ (one implementation for mpif.h, mpi
and mpi_f08): with each buffer's address when every buffer is contiguous (the common case, one
test per buffer), else through mpc_f08_buffer (f08/buffers.cpp), which needs to know, for each
buffer, which count and datatype arguments describe it and what the call does with it. That is
worked out here from the C parameter names; the exceptions are the tables below.
"""

# Calls whose buffer is only an address.
ADDRESS_ONLY = ("MPI_Get_address", "MPI_Free_mem")
# Not a descriptor: MPI_Alloc_mem's baseptr is where C stores an address (TYPE(C_PTR) in MPI 3.1).
NOT_DESCRIPTOR = ("MPI_Alloc_mem",)
# The packed side of MPI_Pack / MPI_Unpack: bytes, described by a size, not by the datatype.
BYTE_SIDE = {"MPI_Pack": "outbuf", "MPI_Pack_external": "outbuf", "MPI_Unpack": "inbuf",
             "MPI_Unpack_external": "inbuf"}
# Buffers that outlive the call, so no temporary copy can stand in for them.
OUTLIVES_CALL = ("MPI_Buffer_attach",)

# The flags of f08/buffers.h.
OUT, WHOLE, OWN_TYPE, ADDRESS, NO_COPY = 1, 2, 4, 8, 16


# void * parameters that are not buffers (gen.py: integer values in Fortran, or an address out).
NOT_BUFFERS = ("attribute_val", "extra_state", "buffer_addr")


def params(f):
    """The choice buffers of f that are descriptors in mpi_f08."""
    if f.name in NOT_DESCRIPTOR:
        return []
    return [p for p in f.params if p.kind == "choice" and p.name not in NOT_BUFFERS]


def is_async(f):
    """ASYNCHRONOUS buffers (MPI 3.1 section 17.1.2): nonblocking and persistent calls,
    MPI_Buffer_attach, and the address-only MPI_Get_address / MPI_Free_mem."""
    return any(p.name == "request" for p in f.params) or f.name in OUTLIVES_CALL or f.name in ADDRESS_ONLY


def _spec(f, p):
    """(count parameter or None, datatype parameter or None) of buffer p."""
    names = {q.name: q for q in f.params}
    if f.name in ADDRESS_ONLY or BYTE_SIDE.get(f.name) == p.name:
        return None, None
    prefix = "send" if p.name.startswith("send") else "recv" if p.name.startswith("recv") else ""
    candidates = ([f"{prefix}type"] if prefix else []) + ["datatype"]
    dtype = next((n for n in candidates if n in names and names[n].kind == "int"), None)
    count = next((n for n in (f"{prefix}count", "count", "incount", "outcount") if n in names and names[n].kind == "int"),
                 None)
    return count, dtype


def spec(f, p):
    """(count, datatype, flags) of buffer p of f."""
    count, dtype = _spec(f, p)
    shared = dtype is not None and sum(1 for q in params(f) if _spec(f, q)[1] == dtype) > 1
    lower = f.name.lower()
    chunked = ("gather" in lower and p.name == "recvbuf") or ("scatter" in lower and p.name == "sendbuf") or \
        "alltoall" in lower
    flags = 0 if p.const else OUT
    if f.name in ADDRESS_ONLY:
        flags |= ADDRESS
    if f.name.endswith("_init") or f.name in OUTLIVES_CALL:
        flags |= NO_COPY
    if dtype is not None and not shared:
        flags |= OWN_TYPE
    if dtype is not None and count is not None and not chunked:
        flags |= WHOLE
    return count, dtype, flags


def c_wrapper(f, parts):
    """The descriptor-taking wrapper mpc_f08_<name>_ of f; parts: gen.c_parts(f)."""
    params_c, hidden, _, _, _, _ = parts
    bufs = params(f)
    bufnames = {p.name for p in bufs}
    if not f.has_ierror:
        raise SystemExit(f"gen.py: {f.name}: a choice buffer but no ierror")
    decls = params_c + ["MPI_Fint *ierror"] + hidden  # the order of the Fortran-ABI wrapper's
    names = [decl.split()[-1].lstrip("*") for decl in decls]
    sig = [f"CFI_cdesc_t *{n}" if n in bufnames else decl for n, decl in zip(names, decls)]
    lower = f.stem.lower()
    has_comm = any(q.name == "comm" for q in f.params)
    has_request = any(q.name == "request" for q in f.params)
    fast = " && ".join(f"mpc_f08_contiguous({p.name})" for p in bufs)
    direct = [f"{n}->base_addr" if n in bufnames else n for n in names]
    specs = {p.name: spec(f, p) for p in bufs}
    rewritten = sorted({x for c, t, _ in specs.values() for x in (c, t) if x is not None})
    slow = [f"{n}_p" if n in bufnames else f"&{n}_v" if n in rewritten else n for n in names]
    body = [f"if ({fast}) {{", f"    pmpi_{lower}_({', '.join(direct)});", "    return;", "}",
            "struct mpc_f08_call c;",
            f"mpc_f08_begin(&c, \"{f.name}\", {'*comm' if has_comm else 'MPI_COMM_WORLD'});"]
    body += [f"MPI_Fint {n}_v = *{n};" for n in rewritten]
    for p in bufs:
        count, dtype, flags = specs[p.name]
        cnt = f"&{count}_v" if count else "NULL"
        typ = f"&{dtype}_v" if dtype else "NULL"
        body += [f"void *{p.name}_p;", f"mpc_f08_buffer(&c, {p.name}, &{p.name}_p, {cnt}, {typ}, {flags});"]
    body += ["if (c.err == MPI_SUCCESS) {", f"    pmpi_{lower}_({', '.join(slow)});", "}",
             f"mpc_f08_end(&c, ierror, {'request' if has_request else 'NULL'});"]
    text = f"/* {f.name} (mpi_f08) */\nvoid mpc_f08_{lower}_({', '.join(sig)}) {{\n"
    text += "".join("    " + line + "\n" for line in body)
    return text + "}\n"

"""The MPI API as the Fortran generator sees it: read from the C headers (include/mpi.h and
include/mpc/*.h), the one description of the interface, so that the C, Fortran and PMPI names
cannot drift apart.

parse(headers) returns (functions, constants, handle_types):
  functions  the MPI_ functions that have a PMPI_ twin, in header order, each a Function whose
             parameters are classified for the Fortran bindings (see Param.kind)
  constants  {name: integer value} of every #define MPI_* that evaluates to an integer
  handle_types  {name: C handle type} for the constants that are handles (MPI_COMM_WORLD ...)

What C cannot say about Fortran (which int parameters are LOGICAL, which pointers are arrays,
which functions have no Fortran binding) is in the tables below, by function and parameter
name.
"""

import re

HANDLE_TYPES = ("MPI_Comm", "MPI_Group", "MPI_Datatype", "MPI_Op", "MPI_Request", "MPI_Errhandler",
                "MPI_Info", "MPI_Message", "MPI_Win", "MPI_File")
HANDLE_KINDS = {"COMM": "MPI_Comm", "GROUP": "MPI_Group", "DATATYPE": "MPI_Datatype", "OP": "MPI_Op",
                "REQUEST": "MPI_Request", "ERRHANDLER": "MPI_Errhandler", "INFO": "MPI_Info",
                "MESSAGE": "MPI_Message", "WIN": "MPI_Win", "FILE": "MPI_File"}
WIDE_TYPES = ("MPI_Aint", "MPI_Count", "MPI_Offset")  # INTEGER(KIND=MPI_ADDRESS_KIND / ..._KIND)

# int parameters that are LOGICAL in Fortran (MPI 3.1's language-independent definitions).
LOGICAL_NAMES = {"flag", "commute", "reorder", "periods", "remain_dims", "weighted"}
# int pointers that are arrays although written `int *`.
ARRAY_NAMES = {"sourceweights", "destweights", "weights"}

# No Fortran binding (and why): C-only calls.
SKIP = {"MPI_Status_c2f": "C only", "MPI_Status_f2c": "C only", "MPI_Status_c2f08": "C only",
        "MPI_Status_f082c": "C only"}

# Subroutines without the trailing ierror argument in Fortran (MPI 3.1 section 14.2.4).
NO_IERROR = {"MPI_Pcontrol"}

# Fortran-only names for predefined datatypes: aliases of the handle of the same size and kind.
FORTRAN_TYPE_ALIASES = {
    "MPI_REAL4": "MPI_REAL", "MPI_REAL8": "MPI_DOUBLE_PRECISION",
    "MPI_INTEGER1": "MPI_INT8_T", "MPI_INTEGER2": "MPI_INT16_T", "MPI_INTEGER4": "MPI_INTEGER",
    "MPI_INTEGER8": "MPI_INT64_T", "MPI_COMPLEX8": "MPI_COMPLEX", "MPI_COMPLEX16": "MPI_DOUBLE_COMPLEX",
    # gfortran's .TRUE. is 1 in every LOGICAL kind, so the C integer types of the size compute
    # MPI_LAND / MPI_LOR / MPI_LXOR on them
    "MPI_LOGICAL1": "MPI_INT8_T", "MPI_LOGICAL2": "MPI_INT16_T", "MPI_LOGICAL4": "MPI_LOGICAL",
    "MPI_LOGICAL8": "MPI_INT64_T",
    # Optional types MPC has no datatype for (MPI 4.0 section 3.2.2 lets them be
    # MPI_DATATYPE_NULL): gfortran has no REAL(2); INTEGER(16) is __int128, which the C layer
    # does not reduce. (MPI_REAL16 and MPI_COMPLEX32, binary128, are types of mpi.h.)
    "MPI_REAL2": "MPI_DATATYPE_NULL", "MPI_COMPLEX4": "MPI_DATATYPE_NULL", "MPI_INTEGER16": "MPI_DATATYPE_NULL",
}
# Fortran-only integer constants.
FORTRAN_CONSTANTS = {
    "MPI_SOURCE": 1, "MPI_TAG": 2, "MPI_ERROR": 3,  # indices into a status array
    "MPI_ADDRESS_KIND": 8, "MPI_OFFSET_KIND": 8, "MPI_COUNT_KIND": 8, "MPI_INTEGER_KIND": 4,
}

# Special addresses: Fortran COMMON blocks whose address the C wrappers compare arguments with.
# name -> (Fortran declaration suffix, COMMON block name, the C value it stands for)
SENTINELS = [
    ("MPI_BOTTOM", "", "mpi_fortran_bottom", "MPI_BOTTOM"),
    ("MPI_IN_PLACE", "", "mpi_fortran_in_place", "MPI_IN_PLACE"),
    ("MPI_STATUS_IGNORE", "(MPI_STATUS_SIZE)", "mpi_fortran_status_ignore", "MPI_STATUS_IGNORE"),
    ("MPI_STATUSES_IGNORE", "(MPI_STATUS_SIZE,1)", "mpi_fortran_statuses_ignore", "MPI_STATUSES_IGNORE"),
    ("MPI_ERRCODES_IGNORE", "(1)", "mpi_fortran_errcodes_ignore", "MPI_ERRCODES_IGNORE"),
    ("MPI_UNWEIGHTED", "(1)", "mpi_fortran_unweighted", "MPI_UNWEIGHTED"),
    ("MPI_WEIGHTS_EMPTY", "(1)", "mpi_fortran_weights_empty", "MPI_WEIGHTS_EMPTY"),
]


class Param:
    """One C parameter. kind is one of:
    int       int or handle by value            (Fortran INTEGER, by reference)
    wide      MPI_Aint/MPI_Count/MPI_Offset     (INTEGER(KIND=8), by reference)
    logical   int by value that is LOGICAL
    ref       pointer to int/handle/wide, scalar or array: passed through
    lref      pointer to int that is LOGICAL (scalar out, or array)
    choice    void * buffer (MPI_IN_PLACE / MPI_BOTTOM recognised)
    status    MPI_Status * (MPI_STATUS_IGNORE recognised); statuses: an array of them
    weights   int * that may be MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY
    str_in    const char * (blank-padded CHARACTER, hidden length)
    str_out   char * (filled and blank-padded)
    funcptr   a C function pointer that a Fortran procedure matches as is
    f08status MPI_F08_status * (TYPE(MPI_Status)), passed through
    fstatus   MPI_Fint *f_status: an INTEGER(MPI_STATUS_SIZE) status, passed through
    argv      char ** / char *** (MPI_Init's, no Fortran counterpart)
    """

    def __init__(self, text, func):
        self.text = text.strip()
        m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*((?:\[\w*\])*)$", self.text)
        if not m:
            raise ValueError(f"{func}: cannot parse parameter '{text}'")
        decl, self.name, dims = m.group(1), m.group(2), m.group(3)
        self.const = "const" in decl.split()
        self.ptr = decl.count("*") + (1 if dims.startswith("[]") else 0)
        self.dims = dims
        self.base = " ".join(w for w in decl.replace("*", " ").split() if w != "const")
        self.array = bool(dims) or self.name in ARRAY_NAMES or self.name.startswith("array_of_")
        self.kind = self._classify(func)

    def _classify(self, func):
        b, p, n = self.base, self.ptr, self.name
        if b == "char":
            if p >= 2:
                return "argv"
            return "str_in" if self.const else "str_out"
        if b == "void":
            return "choice"
        if b == "MPI_Status":
            return "statuses" if self.array else "status"
        if b == "MPI_F08_status":
            return "f08status"
        if b == "MPI_Fint" and n == "f_status":
            return "fstatus"
        if b.endswith("_function") or b.endswith("_fn"):
            return "funcptr"
        if b in WIDE_TYPES:
            return "wide" if p == 0 else "ref"
        if b in ("int", "MPI_Fint") or b in HANDLE_TYPES:
            logical = b == "int" and n in LOGICAL_NAMES
            if p == 0:
                return "logical" if logical else "int"
            if n in ARRAY_NAMES:
                return "weights"
            return "lref" if logical else "ref"
        raise ValueError(f"{func}: parameter '{self.text}' has a type the Fortran bindings do not know")

    @property
    def handle(self):
        return self.base if self.base in HANDLE_TYPES else None


class Function:
    def __init__(self, ret, name, params_text):
        self.ret = ret
        self.name = name
        params_text = params_text.strip()
        self.variadic = "..." in params_text
        parts = [] if params_text in ("", "void") else [t for t in params_text.split(",") if t.strip() != "..."]
        self.params = [Param(t, name) for t in parts]

    @property
    def stem(self):
        return self.name[len("MPI_"):]

    @property
    def is_subroutine(self):
        return self.ret == "int"

    @property
    def has_ierror(self):
        return self.is_subroutine and self.name not in NO_IERROR


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _eval_constant(name, defs, seen=()):
    expr = defs[name]
    if name in seen:
        return None
    expr = re.sub(r"\((?:int|MPI_Fint|MPI_\w+ *\*|void *\*|int *\*|char *\*+)\)", "", expr)
    if "*" in defs[name] and re.search(r"\*\s*\)", defs[name]):
        return None  # a pointer constant: a special address
    expr = re.sub(r"MPC_HANDLE\(", "_handle(", expr)

    def sub(m):
        ident = m.group(0)
        if ident == "_handle":
            return ident
        if ident in defs:
            v = _eval_constant(ident, defs, seen + (name,))
            if v is None:
                raise KeyError(ident)
            return str(v)
        raise KeyError(ident)

    try:
        expr = re.sub(r"(?<!\w)[A-Za-z_]\w*", sub, expr)
        value = eval(expr, {"__builtins__": {}}, {"_handle": lambda k, i: (k << 24) | i})  # noqa: S307
    except (KeyError, SyntaxError, TypeError):
        return None
    return value if isinstance(value, int) else None


def parse(headers):
    functions, pmpi, defs, order = [], set(), {}, []
    for path in headers:
        with open(path, encoding="utf-8") as f:
            raw = f.read()
        for m in re.finditer(r"^#define\s+(MP[IC]_\w+)\s+(.+)$", raw, flags=re.M):
            if m.group(1) not in defs:
                defs[m.group(1)] = re.sub(r"/\*.*", "", m.group(2)).strip()
                order.append(m.group(1))
        text = _strip_comments(raw)
        text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)
        for stmt in text.split(";"):
            m = re.search(r"(?:^|[{}])\s*(int|double|MPI_Aint)\s+(P?MPI_\w+)\s*\(([^()]*)\)\s*$", stmt, flags=re.S)
            if not m:
                continue
            ret, name, params = m.group(1), m.group(2), " ".join(m.group(3).split())
            if name.startswith("PMPI_"):
                pmpi.add(name[1:])
            else:
                functions.append(Function(ret, name, params))
    missing = [f.name for f in functions if f.name not in pmpi]
    if missing:
        raise SystemExit("api.py: no PMPI_ declaration for " + ", ".join(missing))
    constants = {}
    for name in order:
        if name.startswith("MPI_"):
            v = _eval_constant(name, defs)
            if v is not None:
                constants[name] = v
    handle_types = {}
    for name in constants:
        text, seen = defs[name], 0
        while text in defs and seen < 8:  # an alias of another constant
            text, seen = defs[text], seen + 1
        m = re.search(r"MPC_HANDLE_KIND_(\w+)", text)
        if m:
            handle_types[name] = HANDLE_KINDS[m.group(1)]
    for alias, target in FORTRAN_TYPE_ALIASES.items():
        constants[alias] = constants[target]
        handle_types[alias] = "MPI_Datatype"
    constants.update(FORTRAN_CONSTANTS)
    return [f for f in functions if f.name not in SKIP], constants, handle_types

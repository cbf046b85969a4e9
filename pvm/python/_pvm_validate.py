"""AST validator shared by actors and libraries.

validate(source, limits) -> sorted list of candidate library imports, or
raises Invalid(line, col, rule, message). The first violation in source
order (line, column) is reported so the result is deterministic.
"""

import ast
import string
import sys

STDLIB_WHITELIST = frozenset((
    "collections", "dataclasses", "enum", "functools", "itertools", "json",
    "re", "struct", "math", "decimal", "typing", "abc", "hashlib",
))
SDK_MODULES = frozenset(("cowboy_sdk", "pvm_host"))
ALLOWED_SUBMODULES = frozenset(("collections.abc", "cowboy_sdk.collections", "cowboy_sdk.tokens", "cowboy_sdk.blobs"))

# Dunder methods a class may *define* (never access as attributes).
ALLOWED_DUNDER_DEFS = frozenset((
    "__init__", "__repr__", "__str__", "__eq__", "__ne__", "__lt__", "__le__",
    "__gt__", "__ge__", "__hash__", "__len__", "__iter__", "__next__",
    "__contains__", "__getitem__", "__setitem__", "__delitem__", "__bool__",
    "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
    "__neg__", "__pos__", "__abs__", "__radd__", "__rsub__", "__rmul__",
    "__post_init__", "__enter__", "__exit__",
))

FORBIDDEN_ATTRS = frozenset((
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended",
    "cr_frame", "cr_code", "cr_await", "cr_origin", "cr_running",
    "ag_frame", "ag_code", "ag_await", "ag_running",
    "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace",
    "f_lasti", "f_lineno",
    "tb_frame", "tb_next", "tb_lasti", "tb_lineno",
    "co_code", "co_consts", "co_names", "co_varnames", "co_filename",
    "co_lnotab", "co_linetable", "co_freevars", "co_cellvars",
    "format_map", "mro", "get_type_hints", "ForwardRef",
))

FORBIDDEN_CALLS = frozenset((
    "eval", "exec", "compile", "globals", "locals", "vars", "breakpoint",
    "input", "id", "help", "exit", "quit", "memoryview", "dir", "classmethod_descriptor",
))
FORBIDDEN_NAMES = frozenset((
    "BaseException", "SystemExit", "KeyboardInterrupt", "GeneratorExit",
    "get_type_hints", "ForwardRef", "copyright", "credits", "license",
)) | FORBIDDEN_CALLS
ATTR_BUILTINS = frozenset(("getattr", "setattr", "delattr", "hasattr"))
# Builtin types whose calls are metered: the names cannot be rebound, so the
# metering transformer can rely on what they mean.
TYPE_NAMES = frozenset(("list", "dict", "tuple", "str", "int", "bytes", "bytearray", "type"))


class Invalid(Exception):
    def __init__(self, line, col, rule, message):
        Exception.__init__(self, message)
        self.line = line
        self.col = col
        self.rule = rule
        self.message = message


def _is_dunder(name):
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _check_format_string(s):
    try:
        for _lit, field, spec, _conv in string.Formatter().parse(s):
            if field is not None and ("." in field or "[" in field):
                return False
            if spec and ("{" in spec):
                return False
    except ValueError:
        return True  # the runtime will raise the same ValueError
    return True


class _V(ast.NodeVisitor):
    def __init__(self, limits):
        self.errors = []
        self.libs = set()
        self.max_literal = int(limits.get("max_literal_bytes", 65536))
        self.max_int_bits = int(limits.get("max_int_bits", 8192))
        self.class_depth = 0

    def err(self, node, rule, msg):
        self.errors.append((getattr(node, "lineno", 0), getattr(node, "col_offset", 0) + 1, rule, msg))

    # imports -------------------------------------------------------------
    def _import_name(self, node, name):
        top = name.split(".")[0]
        if top in STDLIB_WHITELIST or top in SDK_MODULES:
            if "." in name and name not in ALLOWED_SUBMODULES:
                self.err(node, "import-not-allowed", "module not allowed: " + name)
            return
        if top in sys.stdlib_module_names or top.startswith("_") or top in ("importlib", "builtins"):
            self.err(node, "import-not-allowed", "module not allowed: " + name)
            return
        if "." in name:
            self.err(node, "import-not-allowed", "library submodules are not supported: " + name)
            return
        self.libs.add(top)

    def visit_Import(self, node):
        for a in node.names:
            self.visit_alias_of(node, a)
            self._import_name(node, a.name)
            if a.asname and (_is_dunder(a.asname) or a.asname.startswith("_pvm")):
                self.err(node, "dunder-name", "reserved name: " + a.asname)

    def visit_ImportFrom(self, node):
        if node.level:
            self.err(node, "import-not-allowed", "relative imports are not allowed")
            return
        if node.module == "__future__":
            self.err(node, "typing-eval", "__future__ imports are not allowed")
            return
        self._import_name(node, node.module or "")
        for a in node.names:
            self.visit_alias_of(node, a)
            if a.name == "*":
                self.err(node, "star-import", "star imports are not allowed")
            elif _is_dunder(a.name) or a.name.startswith("_"):
                self.err(node, "dunder-name", "private import: " + a.name)
            elif a.name in FORBIDDEN_NAMES or a.name in FORBIDDEN_ATTRS:
                self.err(node, "forbidden-name", "name not allowed: " + a.name)
            if a.asname and (_is_dunder(a.asname) or a.asname.startswith("_pvm")):
                self.err(node, "dunder-name", "reserved name: " + a.asname)

    # names and attributes -----------------------------------------------
    def _shadow(self, node, name):
        if name in TYPE_NAMES:
            self.err(node, "shadow-builtin", "builtin type name cannot be rebound: " + name)

    def visit_Name(self, node):
        n = node.id
        if not isinstance(node.ctx, ast.Load):
            self._shadow(node, n)
        if _is_dunder(n):
            self.err(node, "dunder-name", "dunder name not allowed: " + n)
        elif n.startswith("_pvm"):
            self.err(node, "dunder-name", "reserved name: " + n)
        elif n in FORBIDDEN_NAMES:
            self.err(node, "forbidden-name", "name not allowed: " + n)

    def visit_Attribute(self, node):
        a = node.attr
        if _is_dunder(a):
            ok = (a == "__init__" and isinstance(node.value, ast.Call)
                  and isinstance(node.value.func, ast.Name) and node.value.func.id == "super")
            if not ok:
                self.err(node, "dunder-attribute", "dunder attribute not allowed: " + a)
        elif a.startswith("_pvm"):
            self.err(node, "dunder-attribute", "reserved attribute: " + a)
        elif a in FORBIDDEN_ATTRS:
            self.err(node, "frame-attribute", "attribute not allowed: " + a)
        self.generic_visit(node)

    def visit_alias_of(self, node, a):
        self._shadow(node, (a.asname or a.name).split(".")[0])

    def visit_arg(self, node):
        self._shadow(node, node.arg)

    def _def_name(self, node, name):
        self._shadow(node, name)
        if _is_dunder(name):
            if not (self.class_depth and name in ALLOWED_DUNDER_DEFS):
                self.err(node, "dunder-name", "dunder definition not allowed: " + name)
        elif name.startswith("_pvm"):
            self.err(node, "dunder-name", "reserved name: " + name)

    def _args(self, args):
        for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if a is not None and (_is_dunder(a.arg) or a.arg.startswith("_pvm")):
                self.err(a, "dunder-name", "reserved argument name: " + a.arg)

    def visit_FunctionDef(self, node):
        self._def_name(node, node.name)
        self._args(node.args)
        saved = self.class_depth
        self.class_depth = 0
        self.generic_visit(node)
        self.class_depth = saved

    def visit_Lambda(self, node):
        self._args(node.args)
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node):
        self.err(node, "async", "async functions are not supported")

    def visit_Await(self, node):
        self.err(node, "async", "await is not supported")

    def visit_AsyncFor(self, node):
        self.err(node, "async", "async for is not supported")

    def visit_AsyncWith(self, node):
        self.err(node, "async", "async with is not supported")

    def visit_ClassDef(self, node):
        self._def_name(node, node.name)
        for k in node.keywords:
            if k.arg == "metaclass":
                self.err(k, "forbidden-name", "metaclasses are not allowed")
        saved = self.class_depth
        self.class_depth = 1
        self.generic_visit(node)
        self.class_depth = saved

    def visit_Global(self, node):
        for n in node.names:
            self._shadow(node, n)
            if _is_dunder(n) or n.startswith("_pvm"):
                self.err(node, "dunder-name", "reserved name: " + n)

    visit_Nonlocal = visit_Global

    # calls ------------------------------------------------------------------
    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name):
            if f.id in ATTR_BUILTINS:
                if len(node.args) < 2 or not (isinstance(node.args[1], ast.Constant) and type(node.args[1].value) is str):
                    self.err(node, "dynamic-attribute", f.id + "() needs a literal attribute name")
                else:
                    name = node.args[1].value
                    if _is_dunder(name) or name.startswith("_pvm") or name in FORBIDDEN_ATTRS:
                        self.err(node, "dunder-attribute", f.id + "() of forbidden attribute: " + name)
            elif f.id == "open":
                p = node.args[0] if node.args else None
                if not (isinstance(p, ast.Constant) and type(p.value) is str and p.value.startswith("/tmp/")
                        and ".." not in p.value):
                    self.err(node, "open-outside-tmp", "open() needs a literal path under /tmp/")
        elif isinstance(f, ast.Attribute):
            if f.attr == "format" and isinstance(f.value, ast.Constant) and type(f.value.value) is str:
                if not _check_format_string(f.value.value):
                    self.err(node, "format-attribute", "format fields may not access attributes or items")
            if f.attr in ("get_type_hints", "ForwardRef"):
                self.err(node, "typing-eval", "typing features that evaluate strings are not allowed")
        self.generic_visit(node)

    # misc --------------------------------------------------------------------
    def visit_Compare(self, node):
        for op, rhs in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Is, ast.IsNot)):
                for side in (node.left, rhs):
                    if isinstance(side, ast.Constant) and type(side.value) in (str, bytes, int, float, complex):
                        self.err(node, "is-literal", "'is' comparison with a literal")
        self.generic_visit(node)

    def visit_Constant(self, node):
        v = node.value
        if type(v) in (str, bytes) and len(v) > self.max_literal:
            self.err(node, "literal-too-large", "literal larger than %d bytes" % self.max_literal)
        elif type(v) is int and v.bit_length() > self.max_int_bits:
            self.err(node, "literal-too-large", "integer literal wider than %d bits" % self.max_int_bits)
        elif type(v) is complex:
            self.err(node, "forbidden-name", "complex numbers are not supported")

    def visit_JoinedStr(self, node):
        self.generic_visit(node)

    def visit_ExceptHandler(self, node):
        if node.name:
            self._shadow(node, node.name)
        if node.type is None:
            self.err(node, "bare-except", "bare except is not allowed; catch Exception")
        if node.name and (_is_dunder(node.name) or node.name.startswith("_pvm")):
            self.err(node, "dunder-name", "reserved name: " + node.name)
        self.generic_visit(node)

    def visit_MatchClass(self, node):
        for a in node.kwd_attrs:
            if _is_dunder(a) or a in FORBIDDEN_ATTRS or a.startswith("_pvm"):
                self.err(node, "match-dunder", "match pattern on forbidden attribute: " + a)
        self.generic_visit(node)

    def visit_MatchAs(self, node):
        if node.name:
            self._shadow(node, node.name)
        if node.name and (_is_dunder(node.name) or node.name.startswith("_pvm")):
            self.err(node, "dunder-name", "reserved name: " + node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node):
        if node.name:
            self._shadow(node, node.name)
        if node.name and (_is_dunder(node.name) or node.name.startswith("_pvm")):
            self.err(node, "dunder-name", "reserved name: " + node.name)

    def visit_MatchMapping(self, node):
        if node.rest and (_is_dunder(node.rest) or node.rest.startswith("_pvm")):
            self.err(node, "dunder-name", "reserved name: " + node.rest)
        self.generic_visit(node)

    def visit_Starred(self, node):
        self.generic_visit(node)


def parse(source, limits):
    if type(source) is bytes:
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Invalid(1, 1, "syntax", "source is not valid UTF-8")
    max_src = int(limits.get("max_source_bytes", 131072))
    if len(source) > max_src:
        raise Invalid(1, 1, "source-too-large", "source larger than %d bytes" % max_src)
    try:
        tree = ast.parse(source, "<actor>", "exec")
    except SyntaxError as e:
        raise Invalid(e.lineno or 0, e.offset or 0, "syntax", str(e.msg))
    except (ValueError, RecursionError, MemoryError) as e:
        raise Invalid(1, 1, "syntax", "source cannot be parsed")
    return tree


def validate_tree(tree, limits):
    v = _V(limits)
    try:
        v.visit(tree)
    except RecursionError:
        raise Invalid(1, 1, "nesting-too-deep", "source nesting too deep")
    if v.errors:
        v.errors.sort()
        line, col, rule, msg = v.errors[0]
        raise Invalid(line, col, rule, msg)
    return sorted(v.libs)


def validate(source, limits):
    return validate_tree(parse(source, limits), limits)

"""Metering transformer: rewrites a validated actor/library AST.

* Every statement list is prefixed with a cycle charge covering the static
  cost of its statements (the cost of a compound statement's header is
  charged with the group that precedes it).
* Loop bodies, function entries, lambdas and comprehension elements also
  check the budget, so every unbounded path passes a check.
* Operations whose cost depends on operand size (+ - * ** << %, slicing,
  `in`, star-unpacking, bulk methods such as join/extend/update) are routed
  through runtime helpers that charge before (or, when the result is bounded
  by the operands, right after) doing the work.
* Set displays/comprehensions become insertion-ordered sets.
* Non-generator functions track the actor call depth.
"""

import ast

BINOPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Pow: "pow",
    ast.LShift: "lshift", ast.Mod: "mod",
}

# method name -> runtime helper that meters the call (receiver passed first)
METHODS = frozenset((
    "append", "extend", "extendleft", "insert", "update", "fromkeys", "join",
    "format", "ljust", "rjust", "center", "zfill", "expandtabs", "replace",
    "count", "index", "find", "rfind", "rindex", "split", "rsplit",
    "splitlines", "encode", "decode", "lower", "upper", "strip", "lstrip",
    "rstrip", "startswith", "endswith", "copy", "sort", "reverse", "translate",
    "partition", "rpartition", "title", "capitalize", "casefold", "swapcase",
    "union", "intersection", "difference", "symmetric_difference",
    "issubset", "issuperset", "isdisjoint", "to_bytes", "hex", "setdefault",
    "add",
))


def _name(id_, ctx=None):
    return ast.Name(id=id_, ctx=ctx or ast.Load())


def _call(fn, args, keywords=None):
    return ast.Call(func=_name(fn), args=args, keywords=keywords or [])


class _Cost(ast.NodeVisitor):
    """Static cost of an expression tree (not descending into lambdas or
    comprehension elements, which charge for themselves)."""

    def __init__(self, costs):
        self.c = costs
        self.total = 0

    def generic_visit(self, node):
        c = self.c
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.AugAssign)):
            self.total += c["arith"]
        elif isinstance(node, ast.BoolOp):
            self.total += c["arith"] * (len(node.values) - 1)
        elif isinstance(node, ast.Compare):
            self.total += c["compare"] * len(node.ops)
        elif isinstance(node, ast.Call):
            self.total += c["call"]
        elif isinstance(node, ast.Subscript):
            self.total += c["subscript"]
        elif isinstance(node, ast.Attribute):
            self.total += c["attribute"]
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            n = len(node.keys) if isinstance(node, ast.Dict) else len(node.elts)
            self.total += c["list_append"] * n
        elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            self.total += c["call"]
            return
        elif isinstance(node, ast.JoinedStr):
            self.total += c["arith"] * len(node.values)
        ast.NodeVisitor.generic_visit(self, node)


def expr_cost(node, costs):
    if node is None:
        return 0
    v = _Cost(costs)
    v.visit(node)
    return v.total


def header_cost(stmt, costs):
    """Cost charged for a statement itself (compound: its header only)."""
    base = costs["stmt"]
    if isinstance(stmt, (ast.If, ast.While)):
        return base + expr_cost(stmt.test, costs)
    if isinstance(stmt, ast.For):
        return base + expr_cost(stmt.iter, costs)
    if isinstance(stmt, ast.With):
        return base + sum(expr_cost(i.context_expr, costs) for i in stmt.items)
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
        return base + costs["call"] + sum(expr_cost(d, costs) for d in stmt.decorator_list)
    if isinstance(stmt, (ast.Try, ast.TryStar)):
        return base
    if isinstance(stmt, ast.Match):
        return base + expr_cost(stmt.subject, costs)
    return base + expr_cost(stmt, costs)


def _charge_stmt(n):
    # _pvm_k[0] += n
    return ast.AugAssign(
        target=ast.Subscript(value=_name("_pvm_k"), slice=ast.Constant(0), ctx=ast.Store()),
        op=ast.Add(), value=ast.Constant(n))


def _check_stmt():
    # if _pvm_k[0] > _pvm_k[1]: _pvm_oot()
    return ast.If(
        test=ast.Compare(
            left=ast.Subscript(value=_name("_pvm_k"), slice=ast.Constant(0), ctx=ast.Load()),
            ops=[ast.Gt()],
            comparators=[ast.Subscript(value=_name("_pvm_k"), slice=ast.Constant(1), ctx=ast.Load())]),
        body=[ast.Expr(_call("_pvm_oot", []))], orelse=[])


def _has_yield(fn):
    for n in ast.walk(fn):
        if n is not fn and isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
    # ast.walk still descends into nested defs; do a scoped walk instead
    return False


def _scoped_has_yield(fn):
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


class _Rewrite(ast.NodeTransformer):
    def __init__(self, costs):
        self.costs = costs

    # expressions -------------------------------------------------------------
    def visit_BinOp(self, node):
        self.generic_visit(node)
        fn = BINOPS.get(type(node.op))
        if fn is None:
            return node
        return ast.copy_location(_call("_pvm_" + fn, [node.left, node.right]), node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        fn = BINOPS.get(type(node.op))
        if fn is None:
            return node
        t = node.target
        if isinstance(t, ast.Name):
            load = _name(t.id)
        elif isinstance(t, ast.Attribute):
            load = ast.Attribute(value=t.value, attr=t.attr, ctx=ast.Load())
        else:
            load = ast.Subscript(value=t.value, slice=t.slice, ctx=ast.Load())
        new = ast.Assign(targets=[t], value=_call("_pvm_i" + fn, [load, node.value]))
        return ast.copy_location(new, node)

    def visit_Set(self, node):
        self.generic_visit(node)
        return ast.copy_location(_call("_pvm_oset", [ast.List(elts=node.elts, ctx=ast.Load())]), node)

    def _comp_tick(self, node, elt_nodes):
        n = self.costs["loop_iter"] + sum(expr_cost(e, self.costs) for e in elt_nodes)
        last = node.generators[-1]
        last.ifs = [_call("_pvm_ck", [ast.Constant(n)])] + list(last.ifs)

    def visit_ListComp(self, node):
        self.generic_visit(node)
        self._comp_tick(node, [node.elt])
        return node

    def visit_GeneratorExp(self, node):
        self.generic_visit(node)
        self._comp_tick(node, [node.elt])
        return node

    def visit_DictComp(self, node):
        self.generic_visit(node)
        self._comp_tick(node, [node.key, node.value])
        return node

    def visit_SetComp(self, node):
        self.generic_visit(node)
        self._comp_tick(node, [node.elt])
        lc = ast.ListComp(elt=node.elt, generators=node.generators)
        return ast.copy_location(_call("_pvm_oset", [lc]), node)

    def visit_Lambda(self, node):
        self.generic_visit(node)
        n = self.costs["call"] + expr_cost(node.body, self.costs)
        node.body = ast.BoolOp(op=ast.And(), values=[_call("_pvm_ck", [ast.Constant(n)]), node.body])
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Slice):
            s = node.slice
            args = [node.value] + [x if x is not None else ast.Constant(None) for x in (s.lower, s.upper, s.step)]
            return ast.copy_location(_call("_pvm_slice", args), node)
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            c = _call("_pvm_in", [node.left, node.comparators[0]])
            if isinstance(node.ops[0], ast.NotIn):
                c = ast.UnaryOp(op=ast.Not(), operand=c)
            return ast.copy_location(c, node)
        return node

    def visit_Starred(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            node.value = _call("_pvm_star", [node.value])
        return node

    def visit_Dict(self, node):
        self.generic_visit(node)
        node.values = [_call("_pvm_dstar", [v]) if k is None else v for k, v in zip(node.keys, node.values)]
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        if any(isinstance(n, ast.Starred) for t in node.targets for n in ast.walk(t)):
            node.value = _call("_pvm_star", [node.value])
        return node

    def visit_For(self, node):
        node = self._loop(node)
        if any(isinstance(n, ast.Starred) for n in ast.walk(node.target)):
            # per-item unpack of a starred target
            pass
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        node.keywords = [ast.keyword(arg=None, value=_call("_pvm_dstar", [k.value])) if k.arg is None else k
                         for k in node.keywords]
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in METHODS:
            new = _call("_pvm_meth", [f.value, ast.Constant(f.attr)] + node.args, node.keywords)
            return ast.copy_location(new, node)
        return node

    def visit_FormattedValue(self, node):
        self.generic_visit(node)
        if node.format_spec is not None:
            conv = node.conversion if node.conversion is not None else -1
            node.value = _call("_pvm_format", [node.value, node.format_spec, ast.Constant(conv)])
            node.format_spec = None
            node.conversion = -1
        return node

    # statements --------------------------------------------------------------
    def _loop(self, node):
        self.generic_visit(node)
        body = node.body
        n = self.costs["loop_iter"]
        node.body = [_charge_stmt(n), _check_stmt()] + body
        return node

    visit_While = _loop

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        entry = [_charge_stmt(self.costs["call"]), _check_stmt()]
        if _scoped_has_yield(node):
            node.body = entry + node.body
            return node
        enter = ast.Expr(_call("_pvm_enter", []))
        dec = ast.AugAssign(
            target=ast.Subscript(value=_name("_pvm_k"), slice=ast.Constant(2), ctx=ast.Store()),
            op=ast.Sub(), value=ast.Constant(1))
        node.body = [_charge_stmt(self.costs["call"]), enter,
                     ast.Try(body=node.body, handlers=[], orelse=[], finalbody=[dec])]
        return node


class _Charge(ast.NodeTransformer):
    """Prefix every statement list with charges for its statements."""

    def __init__(self, costs):
        self.costs = costs

    def _fix(self, stmts):
        out = []
        pending = 0
        group = []
        for s in stmts:
            self.visit(s)
            if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Subscript) \
                    and isinstance(s.target.value, ast.Name) and s.target.value.id == "_pvm_k":
                group.append(s)  # already an instrumentation statement
                continue
            if isinstance(s, ast.If) and isinstance(s.test, ast.Compare) and isinstance(s.test.left, ast.Subscript) \
                    and isinstance(s.test.left.value, ast.Name) and s.test.left.value.id == "_pvm_k":
                group.append(s)
                continue
            pending += header_cost(s, self.costs)
            group.append(s)
            if isinstance(s, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.TryStar, ast.Match,
                              ast.FunctionDef, ast.ClassDef, ast.Return, ast.Raise, ast.Break, ast.Continue)):
                out.append(_charge_stmt(pending))
                out.extend(group)
                pending, group = 0, []
        if group:
            if pending:
                out.append(_charge_stmt(pending))
            out.extend(group)
        return out or [ast.Pass()]

    def generic_visit(self, node):
        for field in ("body", "orelse", "finalbody"):
            v = getattr(node, field, None)
            if isinstance(v, list) and v and isinstance(v[0], ast.stmt):
                setattr(node, field, self._fix(v))
        if isinstance(node, (ast.Try, ast.TryStar)):
            for h in node.handlers:
                h.body = self._fix(h.body)
        if isinstance(node, ast.Match):
            for c in node.cases:
                c.body = self._fix(c.body)
        return node


def instrument(tree, costs):
    tree = _Rewrite(costs).visit(tree)
    tree = _Charge(costs).visit(tree)
    ast.fix_missing_locations(tree)
    return tree

"""A tiny, safe expression language for declarative tools.

Expressions are parsed with :mod:`ast` and only a whitelist of node types is evaluated: literals,
names, field access (``patient.balance`` reads a mapping key), indexing, arithmetic, comparisons,
boolean logic, conditional expressions, list/dict literals and calls to the functions in
``FUNCTIONS``. Nothing else (attribute access on objects, lambdas, imports, dunder names) can
run, so scenario and tool files from untrusted sources cannot execute code.

Templates: a string value ``"${expr}"`` evaluates to the expression's value (keeping its type);
a string with embedded ``${...}`` parts is interpolated as text; other strings are literals.
"""

from __future__ import annotations

import ast
import hashlib
import operator
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from voxeval.json_types import JSONReadValue, JSONScalar, JSONValue


class ExpressionError(ValueError):
    """An expression that cannot be parsed or evaluated; the message says why."""


_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,  # meant for ``x is None``
    ast.IsNot: operator.is_not,
}
_UNARYOPS: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
# indexing, like the operators above, is applied to whatever values the expression produced;
# a wrong combination raises TypeError/KeyError/IndexError, which ``evaluate`` reports
_INDEX: Callable[[Any, Any], Any] = operator.getitem
_TZ_SUFFIX = re.compile(r"\s+[A-Z]{2,5}$")
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: codes meant to be spoken


def parse_datetime(value: JSONReadValue) -> datetime:
    """ISO date or date-time (``2026-03-14``, ``2026-03-14 09:30``, ``...T09:30``), with an
    optional trailing zone abbreviation (``PST``) that is ignored."""
    text = _TZ_SUFFIX.sub("", str(value).strip())
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ExpressionError(f"not a date/time: {value!r}") from exc
    return parsed.replace(tzinfo=None)


def _norm(value: JSONReadValue) -> str:
    """Identifier normalisation: upper case, letters and digits only (``kx4 92-b7`` ->
    ``KX492B7``), so spoken IDs match however the agent punctuated them."""
    return re.sub(r"[^0-9A-Z]", "", str(value).upper())


def _code(length: int, *parts: JSONReadValue) -> str:
    """A deterministic alphanumeric code from ``parts`` (same inputs -> same code)."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return "".join(_CODE_ALPHABET[b % len(_CODE_ALPHABET)] for b in digest[: int(length)])


def _get(obj: JSONValue, key: JSONValue, default: JSONValue = None) -> JSONValue:
    if isinstance(obj, Mapping):
        return _INDEX(obj, key) if key in obj else default
    if isinstance(obj, list | tuple) and isinstance(key, int) and -len(obj) <= key < len(obj):
        return obj[key]
    return default


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
    "len": len,
    "sum": sum,
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "sorted": sorted,
    "lower": lambda s: str(s).lower(),
    "upper": lambda s: str(s).upper(),
    "strip": lambda s: str(s).strip(),
    "norm": _norm,
    "get": _get,
    "keys": lambda m: list(m.keys()),
    "values": lambda m: list(m.values()),
    "code": _code,
    "money": lambda v: f"{float(v):.2f}",
    "date": lambda v: parse_datetime(v).date().isoformat(),
    "time": lambda v: parse_datetime(v).strftime("%H:%M"),
    "add_days": lambda v, n: (parse_datetime(v) + timedelta(days=float(n))).date().isoformat(),
    "days_between": lambda a, b: (parse_datetime(b).date() - parse_datetime(a).date()).days,
    "hours_between": lambda a, b: (parse_datetime(b) - parse_datetime(a)).total_seconds() / 3600,
    "weekday": lambda v: parse_datetime(v).strftime("%A"),
}


def _check(tree: ast.AST, source: str) -> None:
    allowed = (
        ast.Expression,
        ast.Constant,
        ast.Name,
        ast.Load,
        ast.Attribute,
        ast.Subscript,
        ast.BinOp,
        ast.UnaryOp,
        ast.BoolOp,
        ast.Compare,
        ast.IfExp,
        ast.Call,
        ast.List,
        ast.Tuple,
        ast.Dict,
        ast.And,
        ast.Or,
        ast.Not,
        ast.USub,
        ast.UAdd,
        *_BINOPS,
        *_CMPOPS,
    )
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise ExpressionError(f"{source!r}: {type(node).__name__} is not allowed")
        if isinstance(node, ast.Name | ast.Attribute):
            ident = node.id if isinstance(node, ast.Name) else node.attr
            if ident.startswith("_"):
                raise ExpressionError(f"{source!r}: names starting with '_' are not allowed")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                known = ", ".join(sorted(FUNCTIONS))
                raise ExpressionError(f"{source!r}: only these functions can be called: {known}")
            if node.keywords:
                raise ExpressionError(f"{source!r}: keyword arguments are not supported")


_PARSED: dict[str, ast.Expression] = {}


def compile_expression(source: str) -> ast.Expression:
    """Parse and whitelist-check ``source`` (cached); raise ExpressionError if not allowed."""
    cached = _PARSED.get(source)
    if cached is not None:
        return cached
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"{source!r}: syntax error ({exc.msg})") from exc
    _check(tree, source)
    _PARSED[source] = tree
    return tree


def evaluate(source: str, scope: Mapping[str, JSONValue]) -> JSONValue:
    """Evaluate ``source`` with names looked up in ``scope``."""
    tree = compile_expression(source)
    try:
        return _Evaluator(scope, source).visit(tree.body)
    except ExpressionError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, KeyError, IndexError) as exc:
        raise ExpressionError(f"{source!r}: {type(exc).__name__}: {exc}") from exc


class _Evaluator:
    def __init__(self, scope: Mapping[str, JSONValue], source: str) -> None:
        self.scope = scope
        self.source = source

    def visit(self, node: ast.AST) -> JSONValue:
        method: Callable[[ast.AST], JSONValue] = getattr(self, "_" + type(node).__name__)
        return method(node)

    def _Constant(self, node: ast.Constant) -> JSONValue:
        if isinstance(node.value, bytes | complex) or node.value is Ellipsis:
            raise ExpressionError(f"{self.source!r}: {node.value!r} is not a JSON value")
        return node.value

    def _Name(self, node: ast.Name) -> JSONValue:
        if node.id in ("true", "false", "null", "none"):
            return {"true": True, "false": False}.get(node.id)
        if node.id not in self.scope:
            known = ", ".join(sorted(k for k in self.scope if not k.startswith("_")))
            raise ExpressionError(f"{self.source!r}: unknown name {node.id!r} (known: {known})")
        return self.scope[node.id]

    def _Attribute(self, node: ast.Attribute) -> JSONValue:
        obj = self.visit(node.value)
        if not isinstance(obj, Mapping):
            raise ExpressionError(f"{self.source!r}: .{node.attr} applied to a non-record value")
        if node.attr not in obj:
            raise ExpressionError(f"{self.source!r}: record has no field {node.attr!r}")
        return obj[node.attr]

    def _Subscript(self, node: ast.Subscript) -> JSONValue:
        obj = self.visit(node.value)
        return _INDEX(obj, self.visit(node.slice))

    def _BinOp(self, node: ast.BinOp) -> JSONValue:
        left, right = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.Mult) and _huge_repeat(left, right):
            raise ExpressionError(f"{self.source!r}: sequence repetition is limited to 10000")
        return _BINOPS[type(node.op)](left, right)

    def _UnaryOp(self, node: ast.UnaryOp) -> JSONValue:
        value = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return not value
        return _UNARYOPS[type(node.op)](value)

    def _BoolOp(self, node: ast.BoolOp) -> JSONValue:
        result: JSONValue = isinstance(node.op, ast.And)
        for value_node in node.values:
            result = self.visit(value_node)
            if isinstance(node.op, ast.And) and not result:
                return result
            if isinstance(node.op, ast.Or) and result:
                return result
        return result

    def _Compare(self, node: ast.Compare) -> bool:
        left = self.visit(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.visit(right_node)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp) -> JSONValue:
        return self.visit(node.body) if self.visit(node.test) else self.visit(node.orelse)

    def _Call(self, node: ast.Call) -> JSONValue:
        assert isinstance(node.func, ast.Name)
        return FUNCTIONS[node.func.id](*(self.visit(a) for a in node.args))

    def _List(self, node: ast.List) -> list[JSONValue]:
        return [self.visit(e) for e in node.elts]

    def _Tuple(self, node: ast.Tuple) -> list[JSONValue]:
        return [self.visit(e) for e in node.elts]

    def _Dict(self, node: ast.Dict) -> dict[JSONScalar, JSONValue]:
        if any(k is None for k in node.keys):
            raise ExpressionError(f"{self.source!r}: '**' in dict literals is not allowed")
        return {
            self._key(k): self.visit(v) for k, v in zip(node.keys, node.values, strict=True) if k
        }

    def _key(self, node: ast.AST) -> JSONScalar:
        key = self.visit(node)
        if isinstance(key, list | dict):  # the message Python's own TypeError gives
            raise TypeError(f"unhashable type: '{type(key).__name__}'")
        return key


def _huge_repeat(left: JSONValue, right: JSONValue) -> bool:
    """``'a' * 10**9``-style memory blow-ups from untrusted tool files."""
    for seq, count in ((left, right), (right, left)):
        if isinstance(seq, str | list) and isinstance(count, int) and count > 10_000:
            return True
    return False


_WHOLE = re.compile(r"^\$\{(.*)\}$", re.DOTALL)
_EMBEDDED = re.compile(r"\$\{(.*?)\}")


def render(template: JSONValue, scope: Mapping[str, JSONValue]) -> JSONValue:
    """Fill a value template (see module docstring); mappings and lists are rendered deeply."""
    if isinstance(template, str):
        whole = _WHOLE.match(template)
        if whole and "${" not in whole.group(1):
            return evaluate(whole.group(1), scope)
        if "${" in template:
            return _EMBEDDED.sub(lambda m: _as_text(evaluate(m.group(1), scope)), template)
        return template
    if isinstance(template, Mapping):
        return {str(k): render(v, scope) for k, v in template.items()}
    if isinstance(template, list):
        return [render(v, scope) for v in template]
    return template


def _as_text(value: JSONValue) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


def template_expressions(template: JSONReadValue) -> list[str]:
    """Every expression inside a template (for load-time syntax checks)."""
    if isinstance(template, str):
        return [m.group(1) for m in _EMBEDDED.finditer(template)]
    if isinstance(template, Mapping):
        return [e for v in template.values() for e in template_expressions(v)]
    if isinstance(template, list):
        return [e for v in template for e in template_expressions(v)]
    return []

"""The tensor annotations of an FX graph printed by PyTorch (``print_readable``).

AOTAutograd's graphs in a TORCH_TRACE log annotate every value with its
dtype, sizes, strides and device in one string, ``"f32[8, 16][16, 1]cpu"``:
``f32`` is ``torch.float32`` in FX's short names, the first brackets the
sizes, the second the strides, then the device (``cpu``, ``cuda:0``). Under
dynamic shapes a size or stride may be a symbol (``f32[s77, 16][16, 1]cpu``)
and a plain symbolic integer is ``Sym(s77)``. This module reads those
strings without PyTorch, and says how many bytes a tensor holds (elements
times the element's size), which is what ``gradview saved`` adds up.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["TensorAnnotation", "SymbolAnnotation", "parse_annotation", "DTYPES", "ELEMENT_SIZES", "AnnotationError",
           "evaluate_size"]

# FX's short dtype names (torch.fx.graph.dtype_abbrs) -> (torch dtype name, bytes per element).
# Sub-byte and bit dtypes have no whole-byte element size: their bytes are unknown (None).
DTYPES: dict[str, tuple[str, int | None]] = {
    "u8": ("uint8", 1),
    "i8": ("int8", 1),
    "i16": ("int16", 2),
    "i32": ("int32", 4),
    "i64": ("int64", 8),
    "u16": ("uint16", 2),
    "u32": ("uint32", 4),
    "u64": ("uint64", 8),
    "f16": ("float16", 2),
    "bf16": ("bfloat16", 2),
    "f32": ("float32", 4),
    "f64": ("float64", 8),
    "c32": ("complex32", 4),
    "c64": ("complex64", 8),
    "c128": ("complex128", 16),
    "b8": ("bool", 1),
    "f8e5m2": ("float8_e5m2", 1),
    "f8e4m3fn": ("float8_e4m3fn", 1),
    "f8e5m2fnuz": ("float8_e5m2fnuz", 1),
    "f8e4m3fnuz": ("float8_e4m3fnuz", 1),
    "f8e8m0fnu": ("float8_e8m0fnu", 1),
    "f4e2m1fnx2": ("float4_e2m1fn_x2", 1),
    "b1x8": ("bits1x8", 1),
    "b2x4": ("bits2x4", 1),
    "b4x2": ("bits4x2", 1),
    "b8x1": ("bits8", 1),
    "b16x1": ("bits16", 2),
}

ELEMENT_SIZES: dict[str, int | None] = {name: size for name, size in DTYPES.values()}  # torch's name -> bytes

_TENSOR = re.compile(r"^(?P<dtype>[a-z][a-z0-9]*)\[(?P<sizes>[^\]]*)\]\[(?P<strides>[^\]]*)\](?P<device>[a-z][a-z0-9_]*(?::\d+)?)$")

Dim = int | str  # a size or stride: a number, or a symbol / expression under dynamic shapes


class AnnotationError(ValueError):
    """A string that is not an FX value annotation (the message quotes it)."""


@dataclass(frozen=True)
class TensorAnnotation:
    dtype: str  # torch's name: "float32"
    sizes: tuple[Dim, ...]
    strides: tuple[Dim, ...]
    device: str  # "cpu", "cuda:0"

    @property
    def element_size(self) -> int | None:
        return ELEMENT_SIZES.get(self.dtype)

    @property
    def numel(self) -> int | None:
        """Elements; None where a size is symbolic."""
        count = 1
        for size in self.sizes:
            if not isinstance(size, int):
                return None
            count *= size
        return count

    @property
    def nbytes(self) -> int | None:
        """Elements times the element's size (None where either is unknown)."""
        numel, size = self.numel, self.element_size
        return None if numel is None or size is None else numel * size


@dataclass(frozen=True)
class SymbolAnnotation:
    expr: str  # "s77", "s77*s0"


def parse_annotation(text: str) -> TensorAnnotation | SymbolAnnotation:
    """``"f32[8, 16][16, 1]cpu"`` or ``"Sym(s77)"`` (quotes around it allowed)."""
    body = text.strip().strip("\"'")
    if body.startswith("Sym(") and body.endswith(")") and _balanced(body[4:-1]):
        return SymbolAnnotation(body[4:-1].strip())
    match = _TENSOR.match(body)
    if match is None:
        raise AnnotationError(f"not a tensor annotation like 'f32[8, 16][16, 1]cpu' or 'Sym(s0)': {text!r}")
    short = match.group("dtype")
    if short not in DTYPES:
        raise AnnotationError(f"unknown dtype {short!r} in {text!r} (known: {', '.join(DTYPES)})")
    sizes, strides = _dims(match.group("sizes"), text), _dims(match.group("strides"), text, whole_is_strides=True)
    if len(sizes) != len(strides):
        raise AnnotationError(f"{len(sizes)} sizes but {len(strides)} strides in {text!r}")
    return TensorAnnotation(DTYPES[short][0], sizes, strides, match.group("device"))


def _balanced(text: str) -> bool:
    """Do the parentheses of a size expression (``((s77//2)) + 1``) pair up?"""
    depth = 0
    for char in text:
        depth += (char == "(") - (char == ")")
        if depth < 0:
            return False
    return depth == 0


def _top_level_parts(text: str) -> list[str]:
    """``"2*s77, Max(1, s0)"`` -> ``["2*s77", " Max(1, s0)"]``: commas inside parentheses stay."""
    parts, depth, start = [], 0, 0
    for position, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(text[start:position])
            start = position + 1
    parts.append(text[start:])
    return parts


_INT64_MAX = 2**63 - 1  # torch's sizes and strides are int64


def _dims(text: str, whole: str, whole_is_strides: bool = False) -> tuple[Dim, ...]:
    if not text.strip():
        return ()
    dims: list[Dim] = []
    for part in _top_level_parts(text):
        item = part.strip()
        if not item:
            raise AnnotationError(f"an empty size or stride in {whole!r}")
        if item.lstrip("-").isdigit() and int(item) < 0 and not whole_is_strides:
            raise AnnotationError(f"a negative size {item} in {whole!r}")
        if item.lstrip("-").isdigit() and abs(int(item)) > _INT64_MAX:  # as the IR parser refuses it
            raise AnnotationError(f"a size or stride beyond int64 ({item[:30]}) in {whole[:80]!r}")
        dims.append(int(item) if item.lstrip("-").isdigit() else item)
    return tuple(dims)


_FUNCTIONS = {
    "FloorDiv": lambda a, b: a // b,
    "CeilDiv": lambda a, b: -(-a // b),
    "Mod": lambda a, b: a % b,
    "PythonMod": lambda a, b: a % b,
    "Max": max,
    "Min": min,
}
def _power(base: int, exponent: int) -> int:
    if exponent < 0 or exponent > 64 or abs(base) > 2**32:
        raise ValueError("a power too large for a size")
    return base**exponent


_OPERATORS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Pow: _power,
}
_LONGEST_EXPRESSION = 1000  # characters: longer is not a size PyTorch printed


def evaluate_size(expr: Dim, symbols: dict[str, int]) -> int | None:
    """A size given ``symbols``' values: ``"s77*s27"`` with s77=5, s27=8 -> 40; None when
    it names an unknown symbol or uses anything beyond integer arithmetic and
    sympy's FloorDiv, CeilDiv, Mod, Max and Min."""
    if isinstance(expr, int):
        return expr
    if len(expr) > _LONGEST_EXPRESSION:
        return None
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, RecursionError, MemoryError):
        return None

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id in symbols:
            return symbols[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS and not node.keywords:
            return _FUNCTIONS[node.func.id](*[value(arg) for arg in node.args])
        raise ValueError(ast.dump(node))

    try:
        result = int(value(tree))
    except (ValueError, ZeroDivisionError, TypeError, OverflowError, RecursionError):
        return None
    return result if result >= 0 else None  # a size is never negative

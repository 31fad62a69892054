"""How big a trace's tensors are: bytes per element of torch's dtypes, TorchScript's
names for them, and symbolic sizes at their symbols' values.

Compiled graphs (read by :mod:`gradview.loaders`) give sizes in torch's dtype names
and, under dynamic shapes, as expressions of symbols (``s77*s27``); the runtime's
saved values and the checks' example inputs turn them into numbers here.
"""

from __future__ import annotations

import ast

__all__ = ["ELEMENT_SIZES", "SCALAR_TYPE_OF_DTYPE", "Dim", "evaluate_size"]

Dim = int | str  # a size or stride: a number, or a symbol / expression under dynamic shapes

# torch's dtype names -> bytes per element (one byte for a bits dtype's byte).
ELEMENT_SIZES: dict[str, int | None] = {
    "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint16": 2, "uint32": 4,
    "uint64": 8, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "complex32": 4,
    "complex64": 8, "complex128": 16, "bool": 1, "float8_e5m2": 1, "float8_e4m3fn": 1,
    "float8_e5m2fnuz": 1, "float8_e4m3fnuz": 1, "float8_e8m0fnu": 1, "float4_e2m1fn_x2": 1,
    "bits1x8": 1, "bits2x4": 1, "bits4x2": 1, "bits8": 1, "bits16": 2,
}

# torch's dtype names -> TorchScript's ScalarType names (the ones TensorType prints).
SCALAR_TYPE_OF_DTYPE = {
    "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
    "complex32": "ComplexHalf", "complex64": "ComplexFloat", "complex128": "ComplexDouble", "bool": "Bool",
    "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64", "float8_e5m2": "Float8_e5m2",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2fnuz": "Float8_e5m2fnuz", "float8_e4m3fnuz": "Float8_e4m3fnuz",
    "bits1x8": "Bits1x8", "bits2x4": "Bits2x4", "bits4x2": "Bits4x2", "bits8": "Bits8", "bits16": "Bits16",
}

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

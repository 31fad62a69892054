"""Run-time helpers for TorchScript's structural prims.

Most prims compile to plain Python in the interpreter; this module holds the
checks they call and the list of prims that cannot run on their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gradview.ir import TensorType, Type
from gradview.kernels.dtypes import to_dtype

__all__ = ["STRUCTURAL_PRIMS", "check_types", "matches_type"]

# Prims the interpreter refuses, with the reason it gives.
STRUCTURAL_PRIMS = {
    "prim::CallFunction": "the called function's graph is not part of this graph (run the Inline pass first)",
    "prim::CallMethod": "methods of scripted modules are not supported",
    "prim::Reverse": "a prim::Reverse block only exists inside differentiate(); it is not runnable",
    "prim::BailOut": "bailouts belong to the legacy profiling executor and are not supported",
    "prim::PythonOp": "Python operators cannot be run outside PyTorch",
}


def matches_type(expected: Type, value: Any) -> bool:
    """Does ``value`` fit the profiled tensor type ``expected`` (TypeCheck's test)?"""
    if not isinstance(expected, TensorType):
        return True
    if value is None:
        return bool(expected.undefined)
    requires_grad = bool(getattr(value, "requires_grad", False))
    if expected.requires_grad is not None and expected.requires_grad != requires_grad:
        return False
    array = getattr(value, "data", value) if hasattr(value, "requires_grad") else value
    if expected.scalar_type is not None and getattr(array, "dtype", None) != to_dtype(expected.scalar_type):
        return False
    if expected.sizes is not None:
        shape = tuple(getattr(array, "shape", ()))
        if len(shape) != len(expected.sizes):
            return False
        if any(e is not None and e != s for e, s in zip(expected.sizes, shape, strict=True)):
            return False
    return True


def check_types(types: Sequence[Type], values: Sequence[Any]) -> bool:
    """``prim::TypeCheck`` / ``prim::RequiresGradCheck``: do all inputs fit their types?"""
    return all(matches_type(t, v) for t, v in zip(types, values, strict=False))

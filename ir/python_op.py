"""Calls of Python functions inside a TorchScript graph (``prim::PythonOp``).

A scripted function that calls a function marked ``@torch.jit.ignore`` (or a
traced ``autograd.Function``) keeps the call as a Python op, which PyTorch
prints as ``%y : Tensor = ^fn[](scalars)(%x)``: ``^`` and the function's name
where the kind would be, its attributes, the text of its non-tensor Python
arguments, then its inputs. gradview reads such a node as ``prim::PythonOp``
and keeps the name and the scalars' text under two attribute keys no parsed
attribute can have (they start with ``^``), so copies of the node carry them
and the printer writes the node back as PyTorch does.
"""

from __future__ import annotations

from .node import Node

__all__ = ["PYTHON_OP", "PYTHON_NAME", "PYTHON_SCALARS", "python_function_name", "is_hidden_attribute"]

PYTHON_OP = "prim::PythonOp"
PYTHON_NAME = "^name"
PYTHON_SCALARS = "^scalars"


def python_function_name(node: Node) -> str | None:
    """The called Python function's name, for a Python op read from ``^name``."""
    entry = node._attrs.get(PYTHON_NAME) if node._kind == PYTHON_OP else None
    return None if entry is None else entry[1]


def is_hidden_attribute(name: str) -> bool:
    """Keys that hold a Python op's call, not attributes of its own."""
    return name[0] == "^"

"""Find the kernel that computes a node, for passes that evaluate nodes.

The mapping is the node's resolved schema (``aten::add.Tensor``) or, for
schema-less prims, its kind. Constant propagation and the interpreter share it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradview.ops import kernel_for

from ..node import Node
from ..operators import schemas_for

__all__ = ["node_kernel", "kernel_key"]


def kernel_key(node: Node) -> str | None:
    """The registry key of ``node``: its schema's qualified name, or its kind for
    schema-less prims. None when the operator has schemas but none accepts the
    node's inputs (the kind alone would name an unrelated overload)."""
    schema = node.maybe_schema()
    if schema is not None:
        return schema.qualified_name
    return None if schemas_for(node.kind()) else node.kind()


def node_kernel(node: Node) -> Callable[..., Any] | None:
    """The kernel ``(xp, *inputs)`` for ``node``, or None when none is registered."""
    key = kernel_key(node)
    return kernel_for(key) if key is not None else None

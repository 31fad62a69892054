"""Find the kernel that computes a node, for passes that evaluate nodes.

The mapping is the node's resolved schema (``aten::add.Tensor``) or, for
schema-less prims, its kind. Constant propagation and the interpreter share it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradview.kernels import kernel_for

from ..node import Node

__all__ = ["node_kernel", "kernel_key"]


def kernel_key(node: Node) -> str:
    """The registry key of ``node``: its schema's qualified name, else its kind."""
    schema = node.maybe_schema()
    return schema.qualified_name if schema is not None else node.kind()


def node_kernel(node: Node) -> Callable[..., Any] | None:
    """The kernel ``(xp, *inputs)`` for ``node``, or None when none is registered."""
    return kernel_for(kernel_key(node))

"""How deep a graph's blocks may nest for gradview to trace, run and draw it.

The parser reads blocks with an explicit stack (torch prints ifs nested
thousands deep, and ``parse_ir`` reads them back), but the passes, the trace's
snapshots, the viewer and the interpreter's generated Python (whose
indentation stops near 100 levels) walk blocks recursively. ``gradview check``
and the loaders call :func:`check_block_depth` where the text is read, so a
deeper graph gets one line naming its deepest block instead of a
RecursionError far from the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .attributes import AttributeKind
from .errors import IRVerifyError
from .printer import node_summary

if TYPE_CHECKING:
    from .graph import Block, Graph

__all__ = ["MAX_RUNNABLE_NESTING", "check_block_depth"]

MAX_RUNNABLE_NESTING = 100


def check_block_depth(graph: Graph, limit: int = MAX_RUNNABLE_NESTING) -> None:
    """Raise :class:`IRVerifyError` naming the first node whose blocks (or subgraph)
    nest more than ``limit`` levels deep, counted without recursion."""
    pending: list[tuple[Block, int]] = [(graph.block, 0)]
    while pending:
        block, depth = pending.pop()
        for node in block.nodes():
            inner = [*node.blocks(), *(v.block for k, v in node._attrs.values() if k is AttributeKind.g and v is not None)]
            if inner and depth + 1 > limit:
                raise IRVerifyError(
                    f"blocks nest more than {limit} levels deep; gradview traces and runs graphs nested at most "
                    f"{limit} deep: at `{node_summary(node)}`",
                    node,
                )
            pending.extend((child, depth + 1) for child in inner)

"""Where each box and arrow goes: one layout per view for all the steps at once.

(Interface fixed; the implementation is being written.)

Coordinates are Graphviz points (72 per inch), origin top left, y down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .model import DrawGraph

__all__ = ["NodeBox", "Layout", "union_layout", "DotMissingError"]


class DotMissingError(RuntimeError):
    """Graphviz's ``dot`` is not installed; the message says how to install it."""


@dataclass(frozen=True)
class NodeBox:
    x: float  # centre
    y: float
    width: float
    height: float


EdgeKey = tuple[int, int, int]  # (source node id, target node id, value id)


@dataclass
class Layout:
    boxes: dict[int, NodeBox] = field(default_factory=dict)
    # Points along each edge, source to target (a polyline sampled from the spline).
    edges: dict[EdgeKey, list[tuple[float, float]]] = field(default_factory=dict)
    clusters: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)  # x0, y0, x1, y1
    width: float = 0.0
    height: float = 0.0
    engine: str = "dot"  # "dot" or "layered" (the fallback)


def union_layout(graphs: Sequence[DrawGraph], engine: str = "auto") -> Layout:
    """One layout of the union of ``graphs`` (all steps of one view)."""
    raise NotImplementedError

"""Levels of detail: how much of the IR a picture shows.

* ``model``: the model's modules are the picture's skeleton (each module a
  frame, folded into one box until expanded; a large model opens with each
  top-level module one box), with the plumbing folded as at ``ops``;
* ``ops``: every op, with the plumbing (constants, list and tuple packing,
  sizes, attribute reads) folded into the op that reads it and shown as
  attributes on its label (``conv2d stride=2 pad=1``);
* ``ir``: every node of the IR, as TorchScript prints it.

The switch changes the picture only: the inspector, the IR tab, runs and
checks always work on the full IR.
"""

from __future__ import annotations

import enum

__all__ = ["Detail", "parse_detail", "next_detail"]


class Detail(enum.Enum):
    MODEL = "model"
    OPS = "ops"
    IR = "ir"


def parse_detail(text: str) -> Detail:
    """``model``, ``ops`` or ``ir``; ValueError names the choices."""
    try:
        return Detail(text.strip().lower())
    except ValueError:
        raise ValueError(f"unknown detail level {text!r}: choose model, ops or ir") from None


def next_detail(detail: Detail) -> Detail:
    """The level the detail key switches to: model -> ops -> ir -> model."""
    order = list(Detail)
    return order[(order.index(detail) + 1) % len(order)]

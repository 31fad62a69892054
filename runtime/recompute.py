"""What if the backward recomputed a saved value instead of keeping it?

Every value a forward graph saves for backward stays in memory until the
backward has run. The alternative, which activation checkpointing and
AOTAutograd's min-cut partitioner use, is to keep less and run part of the
forward again during the backward. This module works out the trade for a
choice of saved values, without changing any graph:

* the values chosen are no longer saved: their bytes are freed;
* to make each of them again, the backward reruns the forward op that made
  it, and, for each input of that op, either reads it (still saved), gets it
  for free (a constant), reruns the op that made it too (a forward
  intermediate that is not saved), or, for a forward graph input that was
  not saved, must now keep that input instead (its bytes are added back);
* a saved graph input cannot be recomputed: nothing in the forward makes it;
* nor can a value made from an input the forward overwrites in place (the
  backward would see the new contents);
* a random op (dropout) rerun draws new numbers unless the generator's state
  is kept too, as ``torch.utils.checkpoint`` does: the result names such ops.

The result counts the ops to rerun (constants, ``detach``, and the nodes that
only pack or unpack values, such as a list's element, do not count) and the saved
bytes before and after. An input whose size is not known (a TorchScript graph
whose types leave sizes open) is listed with its bytes as unknown.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .pass_trace import PassTrace
from .random_values import may_draw_random_values
from .saved_values import (
    INPUT,
    PASS_THROUGH,
    GraphSaved,
    element_size,
    sizes_at_symbols,
    tensor_shape_dtype,
)
from .trace_records import NodeRecord, walk_records
from .trace_types import Note

__all__ = ["RecomputeError", "Recomputation", "what_if_recomputed"]

_CONSTANTS = ("prim::Constant",)
# Ops that only pack or unpack values (a list's element, a number as a 0-d tensor): rerun
# with the rest, but not counted as forward ops, as an FX graph's getitem is not one.
_NOT_COUNTED = (*_CONSTANTS, *PASS_THROUGH, "prim::ListConstruct", "prim::ListUnpack", "prim::TupleConstruct",
                "prim::TupleUnpack", "aten::__getitem__", "prim::NumToTensor")


class RecomputeError(ValueError):
    """A choice that cannot be recomputed (the message names the value)."""


@dataclass(frozen=True)
class KeptInput:
    """A forward input the backward must now keep, to rerun the ops that read it."""

    name: str
    value: int  # its id in the forward graph's snapshot
    bytes: int | None  # None where its size is not known


@dataclass(frozen=True)
class Recomputation:
    recomputed: tuple[str, ...]  # the saved values chosen, by name
    saved_bytes_before: int
    saved_bytes_after: int  # without the inputs of unknown size
    rerun_nodes: tuple[int, ...]  # forward node ids to run again, in the forward's order
    rerun_ops: tuple[str, ...]  # their kinds, in the same order
    kept_inputs: tuple[KeptInput, ...]  # forward inputs saved now, and not before
    random_ops: tuple[str, ...] = ()  # rerun ops that draw random numbers (new ones, unless the RNG state is kept)

    @property
    def ops_to_rerun(self) -> int:
        return len(self.rerun_nodes)

    @property
    def bytes_freed(self) -> int:
        return self.saved_bytes_before - self.saved_bytes_after

    @property
    def sizes_unknown(self) -> bool:
        return any(kept.bytes is None for kept in self.kept_inputs)


def what_if_recomputed(trace: PassTrace, graph: GraphSaved, names: Iterable[str]) -> Recomputation:
    """The trade of recomputing the saved values ``names`` of ``graph`` (from :func:`saved_values`)."""
    by_name = {value.name: value for value in graph.saved}
    chosen = list(dict.fromkeys(names))
    chosen_set = set(chosen)
    for name in chosen:
        value = by_name.get(name)
        if value is None:
            raise RecomputeError(f"{graph.name}: {name} is not a saved tensor of this graph")
        if value.producer == INPUT:
            raise RecomputeError(f"{graph.name}: {name} is an input of the forward graph: nothing in the forward makes it, so it cannot be recomputed")
    forward = trace[graph.forward_step].graph
    position = {}
    producer: dict[int, NodeRecord] = {}
    inputs = {param.id: param for param in forward.params}
    # An input the forward overwrites in place (aten::copy_ of a mutated input) holds its
    # new value by the time the backward runs: rerunning from it would be wrong.
    overwritten: dict[int, str] = {}
    for order, node in enumerate(walk_records(forward, subgraphs=False)):
        position[node.id] = order
        for output in node.outputs:
            producer[output.id] = node
        if node.kind.endswith("_") and node.inputs and node.inputs[0] in inputs:
            overwritten.setdefault(node.inputs[0], node.kind)
    notes = trace[graph.forward_step].annotations
    still_saved = {value.forward_value for value in graph.saved if value.name not in chosen_set}
    rerun: dict[int, NodeRecord] = {}
    kept: dict[int, KeptInput] = {}
    pending = [by_name[name].forward_value for name in chosen]
    reached: set[int] = set()
    while pending:
        value = pending.pop()
        if value in reached:
            continue
        reached.add(value)
        node = producer.get(value)
        if node is None:
            continue
        rerun.setdefault(node.id, node)
        for used in node.inputs:
            if used in still_saved or used in reached:
                continue
            made_by = producer.get(used)
            if made_by is not None and made_by.kind in _CONSTANTS:
                continue
            if used in inputs:  # not saved: the backward must keep it now
                kept.setdefault(used, _kept(inputs[used].name, used, inputs[used].type, notes))
                continue
            pending.append(used)
    for value in kept:
        if value in overwritten:
            raise RecomputeError(
                f"{graph.name}: recomputing {', '.join(chosen)} reruns forward ops on the input {inputs[value].name}, "
                f"which the forward overwrites ({overwritten[value]}): the backward would read its new value, not the "
                "one the forward used"
            )
    freed = sum(by_name[name].bytes for name in chosen)
    added = sum(item.bytes or 0 for item in kept.values())
    ordered = sorted(rerun.values(), key=lambda node: position[node.id])
    counted = [node for node in ordered if node.kind not in _NOT_COUNTED]
    return Recomputation(
        tuple(chosen), graph.total_bytes, graph.total_bytes - freed + added,
        tuple(node.id for node in counted), tuple(node.kind for node in counted),
        tuple(sorted(kept.values(), key=lambda item: item.name)),
        # Rerun in the backward, they draw new numbers unless the generator's state is kept
        # too (as torch.utils.checkpoint does); the op library says which ops draw.
        tuple(node.kind for node in counted if may_draw_random_values(node.kind)),
    )


def _kept(name: str, value: int, type_text: str, notes: dict[str, object]) -> KeptInput:
    found = tensor_shape_dtype(type_text)
    symbolic = dict(notes.get(Note.SYMBOLIC_SIZES, {}) or {}).get(name)  # type: ignore[call-overload]
    if found is None and isinstance(symbolic, list | tuple):  # dynamic shapes: at the compiling run's sizes
        found = sizes_at_symbols(symbolic, type_text, dict(notes.get(Note.SYMBOL_VALUES, {}) or {}), {})  # type: ignore[call-overload]
    size = math.prod(found[0]) * element_size(found[1]) if found is not None else None
    return KeptInput(name, value, size)

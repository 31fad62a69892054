"""What the Saved tab shows, without Textual: its rows, the words under the
table, and which nodes a row lights.

The rows are ``gradview saved``'s table (:func:`gradview.runtime.saved_values.saved_values`):
one heading row per differentiated graph, carrying the graph's total, then one
row per saved tensor, biggest first, named as users know it (``SavedValue.display``:
:mod:`gradview.runtime.value_names`). Bytes come second, after the name, so a
narrow tabs panel still shows them; the other columns scroll into view.

A row lights, in the joint view of its graph, the node that made the value in
the forward graph (the input box itself for a saved graph input) and the
backward nodes that read it. A what-if (:func:`gradview.runtime.recompute.what_if_recomputed`)
adds the forward nodes the backward would run again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from gradview.runtime import (
    INPUT,
    GraphSaved,
    PassTrace,
    Recomputation,
    SavedValue,
    no_differentiable_graph_reason,
)

__all__ = [
    "COLUMNS", "RECOMPUTED", "SavedLight", "short_name", "heading_cells", "value_cells", "light_for", "joint_step",
    "describe_graph", "describe_value", "describe_what_if", "byte_count",
]

COLUMNS = ("name", "bytes", "shape", "dtype", "producer", "consumers")
RECOMPUTED = "↻ "  # before the name of a value marked as recomputed


@dataclass(frozen=True)
class SavedLight:
    """What the Saved tab lights: node and value ids of DifferentiableGraph ``dg``,
    shown together in its joint view at step ``step``."""

    dg: int
    step: int
    nodes: frozenset[int]
    values: frozenset[int]
    focus: tuple[int, ...] = ()  # what the canvas scrolls to: the producer (or input) first, then the readers


def byte_count(count: int) -> str:
    return f"{count:,}"


def joint_step(graph: GraphSaved) -> int:
    """The step whose joint view shows the very snapshots the saved values' ids
    come from: the later of the graph's forward and backward steps (a TorchScript
    backward is recorded before its forward's last pass)."""
    return max(graph.forward_step, graph.backward_step)


def short_name(graph: GraphSaved) -> str:
    """A graph's name as short as a table row needs: ``graph 0/0``, ``DG 0`` (the full one is under the table)."""
    name = graph.name.removeprefix("compiled ")
    return "DG " + name.removeprefix("DifferentiableGraph ") if name.startswith("DifferentiableGraph ") else name


def heading_cells(graph: GraphSaved, what_if: Recomputation | None) -> tuple[Text, ...]:
    """A graph's heading row: its short name, its total (the total after a what-if, flagged) and its count."""
    count = f"{len(graph.saved)} saved"
    if what_if is None:
        total = Text(byte_count(graph.total_bytes), style="bold", justify="right")
    else:
        total = Text(byte_count(what_if.saved_bytes_after), style="bold italic", justify="right")
        count += f", {len(what_if.recomputed)} {RECOMPUTED.strip()}"
    return (Text(short_name(graph), style="bold"), total, Text(count, style="dim"), Text(""), Text(""), Text(""))


def value_cells(value: SavedValue, recomputed: bool) -> tuple[Text, ...]:
    """One saved tensor's row; a value marked as recomputed is flagged and its bytes struck out."""
    name = Text(RECOMPUTED + value.display, style="bold italic") if recomputed else Text(value.display)
    return (
        name, Text(byte_count(value.bytes), style="strike dim" if recomputed else "", justify="right"),
        Text("[" + ", ".join(map(str, value.shape)) + "]"), Text(value.dtype), Text(value.producer),
        Text(", ".join(value.consumers) or "-"),
    )


def light_for(graph: GraphSaved, value: SavedValue | None, what_if: Recomputation | None) -> SavedLight:
    """The producer (or the input box) and the backward readers of ``value``, plus the
    forward nodes ``what_if`` reruns; with no value, the reruns alone."""
    reruns = what_if.rerun_nodes if what_if is not None else ()
    focus: tuple[int, ...] = reruns
    values: set[int] = set()
    if value is not None:
        made_by = value.producer_node if value.producer_node is not None else value.forward_value
        focus = (made_by, *value.consumer_nodes)
        values.add(value.forward_value)
        if value.backward_value is not None:
            values.add(value.backward_value)
    return SavedLight(graph.dg, joint_step(graph), frozenset((*focus, *reruns)), frozenset(values), focus)


def describe_graph(graph: GraphSaved) -> Text:
    count = len(graph.saved)
    text = Text(f"{graph.name}: {count} saved tensor{'s' if count != 1 else ''}, "
                f"{byte_count(graph.total_bytes)} bytes", style="bold")
    if graph.not_tensors:
        n = graph.not_tensors
        text.append(f"\n(and {n} saved value{'s' if n != 1 else ''} that {'are' if n != 1 else 'is'} "
                    "not a tensor: no tensor memory)", style="dim")
    return text


def describe_value(value: SavedValue) -> Text:
    """The row in full: what it is, who made it, who reads it, and the source line that made it."""
    text = Text()
    text.append(value.display, style="bold")
    text.append(f" [{', '.join(map(str, value.shape))}] {value.dtype}, {byte_count(value.bytes)} bytes")
    if value.producer == INPUT:
        text.append("\na forward input, saved as it is")
    else:
        text.append("\nmade by ")
        text.append(value.producer, style="bold")
    text.append("\nread by ")
    text.append(", ".join(value.consumers) or "no backward op", style="bold")
    if value.source:
        text.append("\nsource: ", style="dim")
        text.append(value.source)
    return text


def describe_what_if(graph: GraphSaved, marked: Sequence[str], what_if: Recomputation | None) -> Text:
    """The trade of recomputing ``marked``: saved bytes before -> after, the forward ops
    the backward runs again, the inputs it must keep now; a hint when nothing is marked."""
    if what_if is None or not marked:
        return Text("up / down: a saved value, lit in the joint view · w: what if the backward "
                    "recomputed it instead of keeping it?", style="dim")
    shown = {value.name: value.display for value in graph.saved}
    text = Text()
    text.append("what if recomputed: ", style="bold")
    text.append(", ".join(shown.get(name, name) for name in marked))
    before, after = what_if.saved_bytes_before, what_if.saved_bytes_after
    text.append(f"\nsaved {byte_count(before)} → {byte_count(after)} bytes")
    if what_if.sizes_unknown:
        text.append(" + inputs of unknown size")
    freed = what_if.bytes_freed
    text.append(f": {byte_count(freed)} freed" if freed >= 0 else f": {byte_count(-freed)} more",
                style="green" if freed > 0 else "yellow")
    ops = what_if.ops_to_rerun
    text.append(f"\nthe backward reruns {ops} forward op{'s' if ops != 1 else ''}")
    if ops:
        text.append(": " + ", ".join(what_if.rerun_ops))
    if what_if.random_ops:
        text.append(
            f"\n{', '.join(sorted(set(what_if.random_ops)))} draws new random numbers when rerun, "
            "unless the RNG state is kept too (as torch.utils.checkpoint does)",
            style="yellow",
        )
    if what_if.kept_inputs:
        known = dict(graph.input_names)
        kept = ", ".join(
            f"{known.get(item.value, item.name)} "
            + (f"({byte_count(item.bytes)} bytes)" if item.bytes is not None else "(size unknown)")
            for item in what_if.kept_inputs
        )
        text.append(f"\nforward inputs now kept: {kept}")
    return text


def empty_message(trace: PassTrace) -> str:
    """What the tab says when no graph keeps values for backward, and why (as
    the backward view and ``gradview saved`` say it)."""
    return f"nothing is saved for backward: {no_differentiable_graph_reason(trace)}"

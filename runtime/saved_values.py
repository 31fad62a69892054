"""What every graph saves for backward, and why.

Reverse mode needs values of the forward pass when the backward runs: the
forward graph hands them over, and they stay in memory from the forward pass
until the backward is done. Both kinds of graph gradview reads say which:

* TorchScript's ``differentiate`` lists the *captured* values of each
  DifferentiableGraph: some of f's inputs and some of f's outputs (the
  temporaries f returns only for df's sake);
* torch.compile's AOTAutograd forward returns, after its real outputs, the
  values marked ``SavedForBackwardsAOTOutput``, which its backward takes first.

Both become the same Gradient lists in a trace (:mod:`gradview.runtime.gradient_wiring`),
so one function lists them: per graph, each saved tensor with its shape,
dtype and bytes (elements times the element's size), the op that made it in
the forward graph (``input`` for a graph input saved as it is; the op that
made a list for an element read out of it; looking through ``detach``, which
AOTAutograd puts between an activation and the backward) and the ops of the
backward graph that read it (through ``detach`` too); biggest first, with
the total. Sizes come from the graph's complete tensor types (a compiled graph's annotations) or, where the types
leave sizes open (TorchScript's DifferentiableGraphs), from the arrays the
executor kept on its first run, which the trace records
(:meth:`PassTrace.record_saved`). Saved values that are not tensors (sizes,
integers) are counted apart: no tensor memory is held for them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from gradview.ir import IRParseError, TensorType, parse_type

from .gradient_wiring import gradient_wiring
from .pass_trace import PassTrace, Step
from .tensor_sizes import ELEMENT_SIZES, SCALAR_TYPE_OF_DTYPE, evaluate_size
from .trace_records import BlockRecord, NodeRecord, walk_records
from .trace_types import GraphName, Note, differentiated_graph_name
from .value_names import ValueName, name_table

__all__ = [
    "INPUT", "SavedValue", "GraphSaved", "SavedValuesError", "saved_values", "element_size",
    "measured_meta", "pasted_back", "sizes_at_symbols", "tensor_shape_dtype",
]

INPUT = "input"  # the producer of a saved graph input
# TorchScript's scalar-type names (what a type prints) -> torch's dtype names (what the
# tables print); bytes per element come from the FX annotations' dtype table.
_DTYPE_NAMES = {scalar: dtype for dtype, scalar in SCALAR_TYPE_OF_DTYPE.items()}


class SavedValuesError(ValueError):
    """Saved values whose sizes cannot be known: the message says what would tell them."""


@dataclass(frozen=True)
class SavedValue:
    name: str
    shape: tuple[int, ...]
    dtype: str  # torch's name: "float32"
    bytes: int
    producer: str  # "aten::tanh", or "input"
    consumers: tuple[str, ...]  # the backward ops reading it, sorted, each once
    # Where it is, for the viewer: value ids in the trace's snapshots.
    forward_value: int = -1
    backward_value: int | None = None
    producer_node: int | None = None  # None for an input
    consumer_nodes: tuple[int, ...] = ()
    source: str | None = None  # the source line that made it ("model.py:12 in forward, code: ...")
    # What the user knows it by (:mod:`gradview.runtime.value_names`): a parameter's,
    # buffer's or argument's name, and the module of the op that made it.
    user_name: str | None = None
    module: str | None = None

    @property
    def display(self) -> str:
        """``layer4.1.conv2.weight (primals_98)``, ``100 in layer2.1.bn1``, or the name alone."""
        return ValueName(self.name, self.user_name, self.module).text()

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "user_name": self.user_name,
            "module": self.module,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "bytes": self.bytes,
            "producer": self.producer,
            "consumers": list(self.consumers),
        }


@dataclass(frozen=True)
class GraphSaved:
    name: str  # "compiled graph 0/0", "DifferentiableGraph 0"
    saved: tuple[SavedValue, ...]  # biggest first
    dg: int = 0  # the k of forward k / backward k in the trace
    forward_step: int = -1
    backward_step: int = -1
    not_tensors: int = 0  # saved values that are not tensors (sizes, ints): no bytes
    # Under dynamic shapes: the symbols the sizes use, with the values they had in the
    # run that compiled the graph (Dynamo's create_symbol), which the sizes are given at.
    symbols: tuple[tuple[str, int], ...] = ()
    # Forward input value id -> its name as users know it, where that differs from the
    # graph's (the inputs a what-if would keep: :mod:`gradview.runtime.value_names`).
    input_names: tuple[tuple[int, str], ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(value.bytes for value in self.saved)

    def as_json(self) -> dict[str, object]:
        return {"name": self.name, "saved": [value.as_json() for value in self.saved], "total_bytes": self.total_bytes}


def saved_values(trace: PassTrace) -> list[GraphSaved]:
    """The values each differentiated graph of ``trace`` saves, in the order they were compiled.

    Raises :class:`SavedValuesError` when a saved tensor's sizes are unknown
    (a TorchScript graph traced without running it, or symbolic sizes)."""
    graphs = []
    gone = pasted_back(trace)
    for k in _differentiated(trace):
        if k in gone:
            continue  # its nodes run under eager autograd: no DifferentiableGraph keeps anything
        notes_step = _latest(trace, GraphName.forward(k), Note.DF_INPUT_VJPS)
        if notes_step is not None and Note.COMPILE_ID in notes_step.annotations:
            # AOTAutograd's forward and backward as the partition made them (the
            # aot_forward_graph / aot_backward_graph entries), not Inductor's rewrites.
            forward = notes_step
            after = notes_step.index + 1
            backward = trace[after] if after < len(trace) and trace[after].which == GraphName.backward(k) else None
        else:
            backward = _latest(trace, GraphName.backward(k))
            forward = _latest(trace, GraphName.forward(k))
        if notes_step is None:
            raise SavedValuesError(
                f"DifferentiableGraph {k}: the trace shows its forward graph but not the Gradient that says "
                "which values it captures (a PYTORCH_JIT_LOG_LEVEL log does not print it): open the graph "
                "itself (.ir or model.py) to list them"
            )
        if backward is None or forward is None:
            continue
        graphs.append(_graph_saved(trace, k, forward, backward, notes_step))
    return graphs


def pasted_back(trace: PassTrace) -> dict[int, str]:
    """DifferentiableGraph k -> why InlineAutodiffSubgraphs pasted it back into the graph
    (so its ops run under eager autograd, which saves their values op by op)."""
    created = _latest_main(trace, Note.DIFFERENTIABLE_GRAPHS)
    inlined = _latest_main(trace, Note.INLINED)
    last = _latest_main(trace)
    if created is None or inlined is None or last is None or inlined.index < created.index:
        return {}
    present = {node.id for node in walk_records(last.graph)}
    reasons = [str(reason) for reason in dict(inlined.annotations[Note.INLINED]).values()]
    why = reasons[0] if reasons else "InlineAutodiffSubgraphs pasted it back"
    return {int(k): why for node_id, k in dict(created.annotations[Note.DIFFERENTIABLE_GRAPHS]).items() if node_id not in present}


def _latest_main(trace: PassTrace, key: str | None = None) -> Step | None:
    return _latest(trace, GraphName.main(), key)


def _differentiated(trace: PassTrace) -> list[int]:
    order: dict[int, None] = {}
    for step in trace:
        if step.which.is_forward and step.which.compilation is None and step.which.index is not None:
            order.setdefault(step.which.index, None)
    return list(order)


def _latest(trace: PassTrace, which: GraphName, key: str | None = None) -> Step | None:
    for step in reversed(trace.steps):
        if step.which == which and (key is None or key in step.annotations):
            return step
    return None


def _graph_saved(trace: PassTrace, k: int, forward: Step, backward: Step, notes_step: Step) -> GraphSaved:
    notes = dict(notes_step.annotations)
    wiring = gradient_wiring(forward.graph, backward.graph, notes)
    name = differentiated_graph_name(notes, k)
    f_values = [*wiring.captured_inputs_f, *wiring.captured_outputs_f]
    df_values = [*wiring.captured_inputs_df, *wiring.captured_outputs_df]
    n_inputs = len(wiring.captured_inputs_f)
    measured = trace.saved_measured.get(str(GraphName.forward(k)))
    if measured is not None and len(measured) != len(f_values):
        measured = None  # recorded for another shape of the graph: not these values
    producers = _producers(forward.graph)
    readers = _readers(backward.graph)
    types = _value_types(forward.graph)
    names = name_table(trace, forward.index)
    symbolic = dict(notes.get(Note.SYMBOLIC_SIZES, {}))
    symbol_values = dict(notes.get(Note.SYMBOL_VALUES, {}))
    used: dict[str, int] = {}
    values = []
    not_tensors = 0
    for position, (value, df_value) in enumerate(zip(f_values, df_values, strict=True)):
        if value is None:
            continue
        value_name, type_text = types.get(value, ("?", "Tensor"))
        meta = measured[position] if measured is not None else None
        if meta is not None and meta[0] is None:
            not_tensors += 1  # the run kept a number or a list of sizes
            continue
        shape_dtype = (tuple(meta[0]), meta[1]) if meta is not None else tensor_shape_dtype(type_text)
        if shape_dtype is None and isinstance(symbolic.get(value_name), list | tuple):
            shape_dtype = sizes_at_symbols(symbolic[value_name], type_text, symbol_values, used)
        if shape_dtype is None:
            if not _is_tensor(type_text):
                not_tensors += 1
                continue
            raise SavedValuesError(f"{name}: the size of saved value %{value_name} ({type_text}) is not known: " + _why_unknown(type_text, notes))
        shape, dtype = shape_dtype
        node = _made_by(producers.get(value), producers)
        is_input = position < n_inputs or node is None
        reading = _read_by(df_value, readers) if df_value is not None else []
        consumer_nodes = tuple(sorted({n.id for n in reading}))
        consumer_kinds = tuple(sorted({n.kind for n in reading}))
        known = names.of(value, value_name)
        values.append(SavedValue(
            value_name, shape, dtype, math.prod(shape) * element_size(dtype),
            INPUT if is_input else _producer_kind(node, producers),  # type: ignore[arg-type]
            consumer_kinds, value, df_value, None if is_input else node.id, consumer_nodes,  # type: ignore[union-attr]
            None if is_input else node.source,  # type: ignore[union-attr]
            known.user_name, known.module,
        ))
    values.sort(key=lambda item: -item.bytes)  # stable: the forward's order among equals
    known_inputs = ((param.id, param.name, names.of(param.id, param.name).text()) for param in forward.graph.params)
    renamed = tuple((value, text) for value, graph_name, text in known_inputs if text != graph_name)
    return GraphSaved(
        name, tuple(values), k, forward.index, backward.index, not_tensors, tuple(sorted(used.items())), renamed
    )


def sizes_at_symbols(
    sizes: list[int | str], type_text: str, values: dict[str, int], used: dict[str, int]
) -> tuple[tuple[int, ...], str] | None:
    """Symbolic sizes at the symbols' values in the compiling run (their dtype from the type)."""
    try:
        parsed = parse_type(type_text)
    except IRParseError:
        return None
    if not isinstance(parsed, TensorType) or parsed.scalar_type not in _DTYPE_NAMES:
        return None
    shape = []
    for size in sizes:
        concrete = evaluate_size(size, values)
        if concrete is None:
            return None
        shape.append(concrete)
        if isinstance(size, str):
            used.update({name: values[name] for name in values if re.search(rf"\b{re.escape(name)}\b", size)})
    return tuple(shape), _DTYPE_NAMES[parsed.scalar_type]


def _producers(block: BlockRecord) -> dict[int, NodeRecord]:
    return {output.id: node for node in walk_records(block, subgraphs=False) for output in node.outputs}


# Ops that hand on the same tensor: AOTAutograd saves activations through chains of
# detach (``detach_1 = detach(detach(tanh))``), so the op that made a saved value and
# the ops that read it are found by looking through them.
PASS_THROUGH = ("aten::detach", "aten::alias")


def _made_by(node: NodeRecord | None, producers: dict[int, NodeRecord]) -> NodeRecord | None:
    """The op that made a value, through detach chains; None for a graph input."""
    while node is not None and node.kind in PASS_THROUGH and node.inputs:
        node = producers.get(node.inputs[0])
    return node


def _read_by(value: int, readers: dict[int, list[NodeRecord]]) -> list[NodeRecord]:
    """The ops that read a value, through detach chains."""
    found: list[NodeRecord] = []
    pending, seen = [value], {value}
    while pending:
        for node in readers.get(pending.pop(), []):
            if node.kind in PASS_THROUGH:
                for output in node.outputs:
                    if output.id not in seen:
                        seen.add(output.id)
                        pending.append(output.id)
            else:
                found.append(node)
    return found


def _producer_kind(node: NodeRecord, producers: dict[int, NodeRecord]) -> str:
    """The op that made the value; an element read out of an op's list is that op's."""
    if node.kind == "aten::__getitem__" and node.inputs:
        listed = producers.get(node.inputs[0])
        if listed is not None and listed.kind not in ("prim::ListConstruct", "prim::Constant"):
            return listed.kind
    return node.kind


def _readers(block: BlockRecord) -> dict[int, list[NodeRecord]]:
    found: dict[int, list[NodeRecord]] = {}
    for node in walk_records(block, subgraphs=False):
        for used in node.inputs:
            found.setdefault(used, []).append(node)
    return found


def _value_types(block: BlockRecord) -> dict[int, tuple[str, str]]:
    types = {param.id: (param.name, param.type) for param in block.params}
    for node in walk_records(block, subgraphs=False):
        for output in node.outputs:
            types[output.id] = (output.name, output.type)
    return types


def _why_unknown(type_text: str, notes: dict[str, object]) -> str:
    try:
        parsed = parse_type(type_text)
    except IRParseError as exc:  # a saved trace's type text is the file's word, not gradview's
        return f"its type does not parse ({exc.message})"
    if isinstance(parsed, TensorType) and parsed.scalar_type not in _DTYPE_NAMES:
        return f"gradview does not know the size of its dtype ({parsed.scalar_type or 'not given'})"
    if not notes.get(Note.COMPILE_ID):
        return "run the graph (give example inputs) so the executor measures it"
    return "its sizes are symbolic (dynamic shapes) and the log does not give every symbol's value"


def tensor_shape_dtype(type_text: str) -> tuple[tuple[int, ...], str] | None:
    """(sizes, torch dtype name) of a complete tensor type's text; None where either is open."""
    try:
        parsed = parse_type(type_text)
    except IRParseError:
        return None
    if not isinstance(parsed, TensorType) or parsed.sizes is None or parsed.scalar_type not in _DTYPE_NAMES:
        return None
    if any(size is None for size in parsed.sizes):
        return None
    return tuple(parsed.sizes), _DTYPE_NAMES[parsed.scalar_type]  # type: ignore[arg-type,index]


def _is_tensor(type_text: str) -> bool:
    try:
        return isinstance(parse_type(type_text), TensorType)
    except IRParseError:
        return True




def element_size(dtype: str) -> int:
    """Bytes per element of torch dtype ``dtype`` ("float32": 4)."""
    size = ELEMENT_SIZES.get(dtype)
    if size is None:
        raise SavedValuesError(f"dtype {dtype} has no whole number of bytes per element")
    return size


def measured_meta(values: Sequence[object]) -> list[tuple[tuple[int, ...] | None, str | None]]:
    """(shape, dtype name) of each captured value as a run kept it; (None, None) for a non-array."""
    out: list[tuple[tuple[int, ...] | None, str | None]] = []
    for value in values:
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        out.append((tuple(int(s) for s in shape), str(dtype)) if shape is not None and dtype is not None else (None, None))
    return out

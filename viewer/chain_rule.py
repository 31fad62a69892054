"""The chain rule as df computes it: one line per gradient, built from df's ops.

For ``sin(x) * x`` the inspector says ``grad_x = grad * sin_x + grad * x * cos(x)``:
the expression df's executor evaluates for the gradient of ``x``, read from
its graph (the last one the trace recorded for DifferentiableGraph k: after
specializeAutogradZero its checks for undefined gradients are gone), with
values named as the source names them (``%x.1`` reads ``x``), the incoming
gradients ``grad_<output>`` (``grad`` when f has one output and no name
for it), and autodiff's plumbing left out: ``_grad_sum_to_size`` undoes
broadcasting, so the expression shows the gradient it sums and the line
says that each term is summed back to its input's shape.

Operators print as in the source (``a * b``, ``a + b``, ``-a``), other ops as
calls (``cos(x)``, ``matmul(grad, t(w2))``); a value made in a block (an
``If`` left over) or an op with more than a few arguments prints by name. A
line longer than :data:`MAX_CHARS` is cut with ``…``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from gradview.runtime import BlockRecord, GraphName, NodeRecord, Note, PassTrace, Step

from .view_steps import forward_step, gradient_notes

__all__ = ["chain_rule_lines", "incoming_gradient_names", "picture_gradient_names", "MAX_CHARS"]

MAX_CHARS = 240
_INFIX = {"aten::mul": ("*", 2), "aten::div": ("/", 2), "aten::add": ("+", 1), "aten::sub": ("-", 1),
          "prim::AutogradAdd": ("+", 1)}
_PASS_THROUGH = frozenset({"aten::_grad_sum_to_size", "aten::type_as", "aten::contiguous"})
_NUMBERED = re.compile(r"\.\d+$")
# Said after a line whose expression left out a _grad_sum_to_size.
_SUMMED = " (terms summed back to their inputs' shapes)"
# Helpers whose arguments are sizes: named for what they compute.
_CALLED = {"gradview::reduced_numel": "numel"}
_ATOM = 3


def chain_rule_lines(trace: PassTrace, k: int) -> list[str]:
    """``grad_<input> = <expression>`` for each gradient df of DifferentiableGraph
    ``k`` returns, in df's order; [] when the trace holds no df for ``k``."""
    forward = _last(trace, GraphName.forward(k))
    df = _last(trace, GraphName.backward_executor(k)) or _last(trace, GraphName.backward(k))
    notes = _notes(trace, k)
    if forward is None or df is None or notes is None:
        return []
    names, f_inputs = _lecture_names(forward.graph, df.graph, notes)
    builder = _Builder(df.graph, names)
    results = builder.returned()
    wanted = list(notes.get(Note.DF_OUTPUT_VJPS, ()))
    lines = []
    for position, value in enumerate(results):
        input_name = f_inputs[wanted[position]] if position < len(wanted) and wanted[position] < len(f_inputs) else str(position)
        expression, _, summed = builder.text(value)
        text = f"grad_{input_name} = {expression}"
        text = text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"
        lines.append(text + (_SUMMED if summed else ""))
    return lines


def incoming_gradient_names(forward: BlockRecord, df: BlockRecord, notes: Mapping[str, Any]) -> dict[int, str]:
    """df's incoming gradients, param id -> the name a lecture gives it:
    ``grad_<output>`` for the gradient of f's output ``<output>`` (``grad_sin_x``),
    plain ``grad`` for the one used gradient of an output the source does not
    name, ``grad_<n>`` for another such output (``%n`` in f). The chain-rule line and the pictures (df's input
    boxes at the ops level) both name them so: one spelling."""
    names, _ = _lecture_names(forward, df, notes)
    return {param.id: names[param.id] for param in df.params[: len(notes.get(Note.DF_INPUT_VJPS, ()))]}


def picture_gradient_names(trace: PassTrace, index: int, dg: int, steps: Sequence[Step]) -> dict[int, str]:
    """:func:`incoming_gradient_names` for a picture of ``steps`` (a view's steps
    at ``index``, of DifferentiableGraph ``dg``); {} when it draws no df."""
    df = next((step for step in steps if not step.which.is_main and not step.which.is_forward), None)
    if df is None:
        return {}
    forward = next((step for step in steps if step.which.is_forward), None) or forward_step(trace, index, dg)
    notes = gradient_notes(trace, index, dg)
    if forward is None or not notes:
        return {}
    return incoming_gradient_names(forward.graph, df.graph, notes)


def _lecture_names(forward: BlockRecord, df: BlockRecord, notes: Mapping[str, Any]) -> tuple[dict[int, str], list[str]]:
    """How expressions name df's params (value id -> name) and f's inputs (in order)."""
    # df's captures are f's values: df's %x is f's %x.1 (df_input_captured_inputs/outputs).
    vjps = list(notes.get(Note.DF_INPUT_VJPS, ()))
    named = _value_names(forward)
    f_names = [v.name for v in forward.params] + [named.get(v, str(v)) for v in forward.returns]
    captured = [f_names[i] for i in notes.get(Note.DF_INPUT_CAPTURED_INPUTS, ()) if i < len(forward.params)]
    captured += [
        f_names[len(forward.params) + i] for i in notes.get(Note.DF_INPUT_CAPTURED_OUTPUTS, ())
        if i < len(forward.returns)
    ]
    same = {param.name: f_name for param, f_name in zip(df.params[len(vjps):], captured, strict=False)}
    # Source names without their numbers where that names one value only (a loop's h.2, h.4 keep theirs).
    full = f_names + [v.name for v in df.params if v.name not in same]
    stems: dict[str, set[str]] = {}
    for name in full:
        stems.setdefault(_lecture(name), set()).add(name)
    short = {name: _lecture(name) if len(stems[_lecture(name)]) == 1 else name for name in full}
    f_inputs = [short[v.name] for v in forward.params]
    f_returned = [named.get(v, str(v)) for v in forward.returns]
    f_outputs = ["" if name.isdigit() else short[name] for name in f_returned]
    used = {value for node in _walk(df) for value in node.inputs} | set(df.returns)
    # One incoming gradient used, of an output the source does not name: plain "grad".
    unnamed = [
        p for position, p in enumerate(df.params[: len(vjps)])
        if p.id in used and not (f_outputs[vjps[position]] if vjps[position] < len(f_outputs) else "")
    ]
    names: dict[int, str] = {}
    for position, param in enumerate(df.params):
        if position < len(vjps):
            output = f_outputs[vjps[position]] if vjps[position] < len(f_outputs) else ""
            # Plain "grad" for that one only: an unused one (a Zero) of another unnamed output is grad_<k>.
            # (One the source does not name is called by its number in f: sub's %9, grad_9.)
            number = f_returned[vjps[position]] if vjps[position] < len(f_returned) else str(vjps[position])
            names[param.id] = "grad" if unnamed == [param] else f"grad_{output or number}"
        else:
            name = same.get(param.name, param.name)
            names[param.id] = "%" + name if name.isdigit() else short[name]
    return names, f_inputs


def _last(trace: PassTrace, which: GraphName) -> Step | None:
    found = None
    for step in trace:
        if step.which == which:
            found = step
    return found


def _notes(trace: PassTrace, k: int) -> dict[str, Any] | None:
    found = None
    for step in trace:
        if step.which == GraphName.forward(k) and Note.DF_INPUT_VJPS in step.annotations:
            found = dict(step.annotations)
    return found


def _lecture(name: str) -> str:
    """``x.1`` -> ``x``; a number stays (``%2`` has no name in the source)."""
    return _NUMBERED.sub("", name)


def _name(name: str) -> str:
    """How an expression names a value: ``x``, or ``%11`` for one the source does not name."""
    return "%" + name if name.isdigit() else _lecture(name)


def _walk(graph: BlockRecord) -> list[NodeRecord]:
    found, pending = [], [graph]
    while pending:
        block = pending.pop()
        for node in block.nodes:
            found.append(node)
            pending.extend(node.blocks)
    return found


def _value_names(graph: BlockRecord) -> dict[int, str]:
    """Value id -> its name, for the graph's params and top-level nodes' outputs (built once:
    a lookup per returned value was quadratic on a 1,000-op f)."""
    names: dict[int, str] = {}
    for node in reversed(graph.nodes):
        for out in node.outputs:
            names[out.id] = out.name
    for param in graph.params:
        names[param.id] = param.name
    return names


class _Builder:
    """Expressions of df's values, each built once (a value used twice prints twice)."""

    def __init__(self, graph: BlockRecord, names: dict[int, str]) -> None:
        self.graph = graph
        self.names = names
        self.producer: dict[int, NodeRecord] = {}
        for node in graph.nodes:
            for out in node.outputs:
                self.producer[out.id] = node
                self.names.setdefault(out.id, _name(out.name))
        self.memo: dict[int, tuple[str, int]] = {}

    def returned(self) -> list[int]:
        """The gradients df returns (a returned tuple unpacked)."""
        values = list(self.graph.returns)
        if len(values) == 1:
            node = self.producer.get(values[0])
            if node is not None and node.kind == "prim::TupleConstruct":
                return list(node.inputs)
        return values

    def text(self, value: int, depth: int = 0) -> tuple[str, int, bool]:
        """(the expression, its precedence: 1 sums, 2 products, 3 atoms and calls,
        whether a ``_grad_sum_to_size`` was left out of it)."""
        if value in self.memo:
            return self.memo[value]
        node = self.producer.get(value)
        if node is None or node.blocks or depth > 40:
            found = (self.names.get(value, "?"), _ATOM, False)
        else:
            found = self._op(node, depth)
        self.memo[value] = found
        return found

    def _op(self, node: NodeRecord, depth: int) -> tuple[str, int, bool]:
        if node.kind == "prim::Constant":
            return dict(node.attrs).get("value", "None"), _ATOM, False
        if node.kind in _PASS_THROUGH and node.inputs:
            text, rank, summed = self.text(node.inputs[0], depth + 1)
            return text, rank, summed or node.kind == "aten::_grad_sum_to_size"
        if node.kind in _INFIX and len(node.inputs) >= 2:
            symbol, rank = _INFIX[node.kind]
            left, left_rank, left_summed = self.text(node.inputs[0], depth + 1)
            right, right_rank, right_summed = self.text(node.inputs[1], depth + 1)
            if left_rank < rank:
                left = f"({left})"
            if right_rank < rank or (right_rank == rank and symbol in "-/"):
                right = f"({right})"
            return f"{left} {symbol} {right}", rank, left_summed or right_summed
        if node.kind == "aten::neg" and node.inputs:
            inner, rank, summed = self.text(node.inputs[0], depth + 1)
            return (f"-{inner}" if rank == _ATOM else f"-({inner})"), _ATOM, summed
        if node.kind in _CALLED:
            return _CALLED[node.kind], _ATOM, False
        args = [v for v in node.inputs if self._is_data(v) or self._number(v) is not None]
        if node.kind.startswith(("aten::", "prim::")) and 0 < len(args) <= 4 and any(map(self._is_data, args)):
            parts = [(self._number(v), None) if self._number(v) is not None else (None, self.text(v, depth + 1)) for v in args]
            text = ", ".join(number if number is not None else built[0] for number, built in parts)  # type: ignore[index]
            return f"{node.kind.split('::')[-1]}({text})", _ATOM, any(b is not None and b[2] for _, b in parts)
        return (self.names.get(node.outputs[0].id, "?") if node.outputs else node.kind), _ATOM, False

    def _number(self, value: int) -> str | None:
        """A number constant's text (``0`` in ``gt(h, 0)``), else None."""
        node = self.producer.get(value)
        if node is None or node.kind != "prim::Constant" or not node.outputs:
            return None
        if not node.outputs[0].type.startswith(("int", "float")) or node.outputs[0].type.endswith("[]"):
            return None
        return dict(node.attrs).get("value")

    def _is_data(self, value: int) -> bool:
        """A tensor, not a size or a constant flag (those are the op's settings, left out)."""
        node = self.producer.get(value)
        if node is not None:
            types = [out.type for out in node.outputs if out.id == value]
        else:
            types = [p.type for p in self.graph.params if p.id == value]
        kind = types[0] if types else ""
        return not (kind.startswith(("int", "bool", "float", "NoneType", "Scalar")) or kind.endswith("[]?"))

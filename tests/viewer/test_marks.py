"""marks.step_marks: highlights that agree with the recorded trace."""

from __future__ import annotations

import pytest

from gradview.ir.parser import parse_type
from gradview.ir.types import TensorType
from gradview.runtime import GraphName
from gradview.runtime.pass_trace import PassTrace, Step
from gradview.runtime.trace_records import walk_records
from gradview.viewer.marks import base_marks, step_marks, with_selection
from gradview.viewer.model import Mark, View

from .graphs import drawn_node_ids, loop_and_if_trace, step_named

STATES = {"Zero": Mark.ZERO, "Nonzero": Mark.NONZERO, "Unknown": Mark.UNKNOWN}


def marked(marks, mark: Mark) -> set[int]:
    return {ident for ident, found in marks.nodes.items() if mark in found}


def test_every_captured_value_is_marked_with_its_index(mlp_trace: PassTrace) -> None:
    index = len(mlp_trace) - 1
    notes = next(s.annotations for s in reversed(mlp_trace.steps) if "df_input_captured_inputs" in s.annotations)
    f = next(s for s in reversed(mlp_trace.steps) if s.which == GraphName.forward(0)).graph
    df = next(s for s in reversed(mlp_trace.steps) if s.which == GraphName.backward_executor(0)).graph
    marks = step_marks(mlp_trace, index, View.JOINT)
    vjps, inputs, outputs = notes["df_input_vjps"], notes["df_input_captured_inputs"], notes["df_input_captured_outputs"]

    def has(value: int, mark: Mark, position: int) -> bool:
        return mark in marks.values.get(value, set()) and marks.indices[(value, mark)] == position

    for j, i in enumerate(inputs):
        assert has(f.params[i].id, Mark.CAPTURED_INPUT, j)
        assert has(df.params[len(vjps) + j].id, Mark.CAPTURED_INPUT, j)
    temporaries = 0
    for j, i in enumerate(outputs):
        value = f.returns[i]
        assert has(value, Mark.CAPTURED_OUTPUT, j)
        assert has(df.params[len(vjps) + len(inputs) + j].id, Mark.CAPTURED_OUTPUT, j)
        is_temporary = i >= notes["f_real_outputs"]
        assert (Mark.TEMPORARY in marks.values[value]) == is_temporary
        temporaries += is_temporary
    assert temporaries > 0
    for i, output in enumerate(vjps):
        assert has(f.returns[output], Mark.VJP_INPUT, i)
        assert has(df.params[i].id, Mark.VJP_INPUT, i)
    for j, i in enumerate(notes["df_output_vjps"]):
        assert has(f.params[i].id, Mark.VJP_OUTPUT, j)
    # The box that makes a captured output is marked too.
    made_by = {v.id: n.id for n in f.nodes for v in n.outputs}
    assert {made_by[f.returns[i]] for i in outputs if f.returns[i] in made_by} <= marked(marks, Mark.CAPTURED_OUTPUT)
    # The forward view alone marks f's side only.
    forward = step_marks(mlp_trace, index, View.FORWARD)
    assert df.params[len(vjps)].id not in forward.values
    assert Mark.CAPTURED_INPUT in forward.values[f.params[inputs[0]].id]


@pytest.mark.parametrize("name", ["mlp", "loop_and_if"])
def test_changes_agree_with_a_brute_force_diff(name: str, mlp_trace: PassTrace) -> None:
    trace = {"mlp": mlp_trace, "loop_and_if": loop_and_if_trace()}[name]
    kinds = set()
    for step in trace:
        previous = trace.previous(step)
        if previous is None:
            continue
        marks = step_marks(trace, step.index, View.WHOLE)
        before = {n.id: n for n in walk_records(previous.graph)}
        now = {n.id: n for n in walk_records(step.graph)}
        assert marked(marks, Mark.ADDED) == now.keys() - before.keys(), step.index
        assert marked(marks, Mark.REMOVED) == drawn_node_ids(previous.graph) - now.keys(), step.index
        changed = {i for i in now.keys() & before.keys() if now[i].inputs != before[i].inputs}
        assert marked(marks, Mark.INPUTS_CHANGED) == changed, step.index
        kinds |= {m for m in (Mark.ADDED, Mark.REMOVED, Mark.INPUTS_CHANGED) if marked(marks, m)}
    assert kinds == {Mark.ADDED, Mark.REMOVED, Mark.INPUTS_CHANGED}


def test_a_graph_not_changed_by_this_step_shows_no_changes(mlp_trace: PassTrace) -> None:
    packed = step_named(mlp_trace, "packGradient")
    marks = step_marks(mlp_trace, packed.index, View.BACKWARD)
    assert not marked(marks, Mark.ADDED) and not marked(marks, Mark.INPUTS_CHANGED)
    lifted = step_named(mlp_trace, "lambdaLiftReverse", GraphName.forward(0))
    # At the forward half of lambdaLiftReverse the backward view shows its df half.
    assert marked(step_marks(mlp_trace, lifted.index, View.BACKWARD), Mark.INPUTS_CHANGED)


def _tensor_ids(step: Step) -> set[int]:
    values = [*step.graph.params, *(v for node in walk_records(step.graph) for v in node.outputs)]
    return {v.id for v in values if isinstance(parse_type(v.type), TensorType)}  # ints, lists, None have no state


@pytest.mark.parametrize("which", [GraphName.main(), GraphName.backward_executor(0)])
def test_autograd_zero_marks_equal_the_annotation_on_tensors(which: object, mlp_trace: PassTrace) -> None:
    step = step_named(mlp_trace, "specializeAutogradZero", which)
    states = step.annotations["autograd_zero"]
    marks = step_marks(mlp_trace, step.index, View.WHOLE)
    tensors = _tensor_ids(step)
    expected = {value: STATES[state] for value, state in states.items() if value in tensors}
    found = {value: mark for value, ms in marks.values.items() for mark in ms if mark in STATES.values()}
    assert found == expected and expected
    after = mlp_trace[step.index + 1]
    later = {value: mark for value, ms in step_marks(mlp_trace, after.index, View.WHOLE).values.items()
             for mark in ms if mark in STATES.values()}
    if which == GraphName.main():
        assert later == {}  # the forward graph's states are shown on their own step only
    else:
        assert later == {v: m for v, m in expected.items() if v in _tensor_ids(after)} and later


def test_backward_view_carries_the_backward_states(mlp_trace: PassTrace) -> None:
    marks = step_marks(mlp_trace, len(mlp_trace) - 1, View.BACKWARD)
    assert any(Mark.ZERO in ms for ms in marks.values.values())


def test_grad_of_links_both_ways(mlp_trace: PassTrace) -> None:
    step = step_named(mlp_trace, "UpdateDifferentiableGraphRequiresGrad", GraphName.backward(0))
    f = step_named(mlp_trace, "UpdateDifferentiableGraphRequiresGrad", GraphName.forward(0))
    forward_nodes = {n.id: n for n in walk_records(f.graph)}
    grad_ofs = [n for n in walk_records(step.graph) if n.kind == "prim::GradOf"]
    assert len(grad_ofs) == 5
    plain = step_marks(mlp_trace, step.index, View.JOINT)
    assert {n.id for n in grad_ofs} <= marked(plain, Mark.GRAD_OF)
    assert not marked(plain, Mark.LINKED)
    for grad_of in grad_ofs:
        marks = step_marks(mlp_trace, step.index, View.JOINT, selection=grad_of.id)
        (primal,) = marked(marks, Mark.LINKED)
        assert f'"{forward_nodes[primal].kind}"' == dict(grad_of.attrs)["name"]
        assert Mark.SELECTED in marks.nodes[grad_of.id]
        back = step_marks(mlp_trace, step.index, View.JOINT, selection=primal)
        assert grad_of.id in marked(back, Mark.LINKED)


def test_selection_marks_a_copy_and_leaves_the_cached_base_as_it_was(mlp_trace: PassTrace) -> None:
    """The viewer caches a step's marks without a selection and marks a copy per
    selection: marking the copy must not leak into the cache."""
    step = step_named(mlp_trace, "UpdateDifferentiableGraphRequiresGrad", GraphName.backward(0))
    grad_of = next(n for n in walk_records(step.graph) if n.kind == "prim::GradOf")
    base = base_marks(mlp_trace, step.index, View.JOINT)
    before = ({k: set(v) for k, v in base.nodes.items()}, {k: set(v) for k, v in base.values.items()})
    selected = with_selection(base, mlp_trace, step.index, grad_of.id)
    assert selected == step_marks(mlp_trace, step.index, View.JOINT, selection=grad_of.id)
    assert Mark.SELECTED in selected.nodes[grad_of.id] and marked(selected, Mark.LINKED)
    assert (base.nodes, base.values) == before, "the base marks are unchanged"
    assert not marked(base, Mark.SELECTED) and not marked(base, Mark.LINKED)

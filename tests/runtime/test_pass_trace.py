"""The pass trace: stable ids through real pipelines, text round trips, save/load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gradview.ir import parse_ir
from gradview.ir.passes.pipelines import (
    run_nondiff_optimization,
    run_optimization,
    run_required_passes,
)
from gradview.runtime import GraphName
from gradview.runtime.pass_trace import NULL_TRACE, PassTrace, TraceFormatError

SOURCE = """graph(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::mul(%x, %y)
  %one : int = prim::Constant[value=1]()
  %dead : Tensor = aten::sin(%x)
  %b : Tensor = aten::add(%a, %x, %one)
  %two : int = prim::Constant[value=1]()
  %c : Tensor = aten::add(%b, %a, %two)
  return (%c)
"""


def _producer(step, name):
    for node in step.nodes():
        if any(v.name == name for v in node.outputs):
            return node
    return None


def _traced(source=SOURCE):
    graph = parse_ir(source)
    trace = PassTrace()
    trace.record("Input", graph, changed=False)
    record = trace.pipeline_recorder(graph)
    run_required_passes(graph, record=record)
    run_optimization(graph, record=record)
    run_nondiff_optimization(graph, record=record)
    return graph, trace


def _step(trace, name):
    return next(s for s in trace if s.pass_name == name)


def test_records_every_pipeline_pass():
    graph, trace = _traced()
    names = [s.pass_name for s in trace]
    assert names[:4] == ["Input", "RemoveExpands", "CanonicalizeOps", "EliminateDeadCode"]
    assert "ConstantPooling" in names and names[-1] == "BatchMM"
    assert [s.index for s in trace] == list(range(len(trace)))
    assert trace[-1].text() == str(graph)


def test_untouched_node_keeps_its_id_and_record():
    _, trace = _traced()
    first, last = trace[0], trace[-1]
    mul0, mul1 = _producer(first, "a"), _producer(last, "a")
    assert mul0.id == mul1.id
    assert mul0 is mul1  # an unchanged node record is shared, not copied
    assert trace[1].graph.nodes[0] is first.graph.nodes[0]


def test_dce_removes_node_id():
    _, trace = _traced()
    dce = _step(trace, "EliminateDeadCode")
    dead = _producer(trace[0], "dead")
    assert dce.changed
    assert dead.id in trace[dce.index - 1].node_ids()
    assert dead.id not in dce.node_ids()


def test_pooled_constant_keeps_its_id():
    _, trace = _traced()
    pool = next(s for s in trace if s.pass_name == "ConstantPooling" and s.changed)
    before = trace.previous(pool)
    constants_before = {n.id for n in before.nodes() if n.kind == "prim::Constant"}
    constants_after = {n.id for n in pool.nodes() if n.kind == "prim::Constant"}
    assert constants_after and constants_after < constants_before
    # The kept constant was hoisted to the top, under its old id.
    assert pool.graph.nodes[0].kind == "prim::Constant"
    assert pool.graph.nodes[0].id in constants_before


def test_new_nodes_get_new_ids():
    graph = parse_ir(SOURCE)
    trace = PassTrace()
    trace.record("a", graph)
    old = trace[0].node_ids() | trace[0].value_ids()
    graph.insert_constant(3)
    trace.record("b", graph)
    assert trace[1].node_ids() - old


def test_text_round_trips_through_parse_ir():
    graph, trace = _traced()
    for step in trace:
        text = step.text()
        assert str(parse_ir(text)) == text


def test_text_with_blocks_and_subgraphs_matches_printer():
    source = """graph(%x : Tensor, %c : bool):
  %y : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::sin(%x)
      -> (%a)
    block1():
      -> (%x)
  %z : Tensor = prim::DifferentiableGraph_0(%y)
  return (%z)
with prim::DifferentiableGraph_0 = graph(%p : Tensor):
  %q : Tensor = aten::tanh(%p)
  return (%q)
"""
    graph = parse_ir(source)
    trace = PassTrace()
    step = trace.record("Input", graph)
    assert step.text() == str(graph)
    assert {n.kind for n in step.nodes()} >= {"aten::sin", "aten::tanh", "prim::If"}


def test_diff_between_steps():
    _, trace = _traced()
    dce = _step(trace, "EliminateDeadCode")
    diff = dce.diff(trace.previous(dce))
    assert diff.startswith("---") and "-  %dead : Tensor = aten::sin(%x)" in diff
    assert trace[1].diff(trace[0]) == ""


def test_annotations_are_plain():
    graph = parse_ir(SOURCE)
    trace = PassTrace()
    x = graph.inputs()[0]
    node = next(iter(graph.nodes()))
    step = trace.record(
        "Specialize", graph, which=GraphName.backward(0), annotations={"zero": {x: "Zero"}, "members": {node: 0}, "vjps": [1, 2]}
    )
    assert step.annotations == {"zero": {trace.id_of(x): "Zero"}, "members": {trace.id_of(node): 0}, "vjps": (1, 2)}


def test_disabled_trace_records_nothing():
    graph = parse_ir(SOURCE)
    off = PassTrace(enabled=False)
    assert off.record("x", graph) is None and len(off) == 0
    assert off.pipeline_recorder(graph) is None
    assert NULL_TRACE.record("x", graph) is None and len(NULL_TRACE) == 0


def test_save_load_round_trip(tmp_path):
    graph, trace = _traced()
    trace.record("Tagged", graph, which=GraphName.forward(1), annotations={"states": {3: "Nonzero"}, "n": [1, (2, 3)]})
    path = tmp_path / "t.json"
    trace.save(str(path))
    loaded = PassTrace.load(str(path))
    assert loaded == trace
    assert [s.text() for s in loaded] == [s.text() for s in trace]
    assert loaded[-1].which == GraphName.forward(1)
    # Sharing survives the round trip.
    assert loaded[1].graph.nodes[0] is loaded[0].graph.nodes[0]
    data = json.loads(path.read_text())
    assert data["format"] == "gradview-trace" and data["version"] == 2


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "invalid JSON"),
        ('{"format": "other"}', "not a gradview trace"),
        ('{"format": "gradview-trace", "version": 3, "records": [], "steps": []}', "unsupported trace version 3"),
        ('{"format": "gradview-trace", "version": 1, "records": []}', "missing field 'steps'"),
        ('{"format": "gradview-trace", "version": 1, "records": [["n", 1]], "steps": []}', "unknown shape"),
        (
            '{"format": "gradview-trace", "version": 1, "records": [], '
            '"steps": [{"pass": "x", "which": "main", "graph": 0, "changed": true, "seconds": 0}]}',
            "malformed trace",
        ),
    ],
)
def test_malformed_files(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(TraceFormatError) as info:
        PassTrace.load(str(path))
    text = str(info.value)
    assert "\n" not in text and str(path) in text and message in text
    assert isinstance(info.value, ValueError)


def test_autodiff_recorder():
    from gradview.autodiff import differentiate

    source = """graph(%x : Double(3, strides=[1], requires_grad=1, device=cpu)):
  %y : Double(3, strides=[1], requires_grad=1, device=cpu) = aten::tanh(%x)
  return (%y)
"""
    trace = PassTrace()
    differentiate(parse_ir(source), record=trace.autodiff_recorder(0))
    whiches = {s.which for s in trace}
    assert GraphName.forward(0) in whiches and GraphName.backward(0) in whiches
    assert "df_input_vjps" in trace[-1].annotations
    for step in trace:
        parse_ir(step.text())


def test_backward_pass_is_visible_before_lambda_lifting() -> None:
    """differentiate's early steps show the detached reverse block (the output
    gradients, then the forward values it reads), with ids stable across steps."""
    from gradview.autodiff import differentiate
    from gradview.ir import parse_ir

    text = (Path(__file__).resolve().parents[2] / "examples" / "mlp.ir").read_text()
    trace = PassTrace()
    differentiate(parse_ir(text), trace.autodiff_recorder(0))
    backward = [step for step in trace.steps if step.which == GraphName.backward(0)]
    names = [step.pass_name for step in backward]
    assert names[:2] == ["addReverseInline", "liftConstants"]
    assert "lambdaLiftReverse" in names
    first = backward[0]
    parse_ir(first.text())  # the reverse block prints as a graph that parses
    assert first.annotations["reads_from_forward"]
    grad_of_ids = {n.id for n in first.nodes() if n.kind == "prim::GradOf"}
    before_lift = backward[names.index("lambdaLiftReverse") - 1]
    assert grad_of_ids & {n.id for n in before_lift.nodes() if n.kind == "prim::GradOf"}


def test_lambda_lift_keeps_the_reverse_nodes_ids() -> None:
    from gradview.autodiff import differentiate
    from gradview.ir import parse_ir

    text = (Path(__file__).resolve().parents[2] / "examples" / "mlp.ir").read_text()
    trace = PassTrace()
    differentiate(parse_ir(text), trace.autodiff_recorder(0))
    backward = [step for step in trace.steps if step.which == GraphName.backward(0)]
    names = [step.pass_name for step in backward]
    lifted = backward[names.index("lambdaLiftReverse")]
    before = backward[names.index("lambdaLiftReverse") - 1]
    ids = lambda step: {n.id for n in step.nodes() if n.kind == "prim::GradOf"}  # noqa: E731
    assert ids(lifted) and ids(lifted) == ids(before)

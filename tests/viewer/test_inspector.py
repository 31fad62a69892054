"""inspector: what the panel says about a node or value, and each step's explanation."""

from __future__ import annotations

import pytest

from gradview.runtime import GraphName
from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.inspector import inspect_node, inspect_value, pass_doc
from gradview.viewer.model import View

from .graphs import exclusions_trace, producer_of, step_named


def said(lines: list[tuple[str, str]], label: str) -> str:
    return " | ".join(text for name, text in lines if name == label)


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("b", "leaves aten::clamp_min to eager autograd"),
        ("t", "aten::transpose is a view op"),
        ("zero", "a constant"),
    ],
)
def test_why_a_node_is_not_in_a_differentiable_graph(output: str, reason: str) -> None:
    trace = exclusions_trace()
    created = step_named(trace, "CreateAutodiffSubgraphs")
    node = producer_of(created.graph, output)
    text = said(inspect_node(trace, created.index, node.id), "DifferentiableGraph")
    assert text.startswith("not in one") and reason in text
    # The reason still holds at the end of the compilation.
    final = [s for s in trace if s.which == GraphName.main()][-1]
    assert reason in said(inspect_node(trace, final.index, node.id), "DifferentiableGraph")


def test_side_effects_are_a_reason() -> None:
    trace = exclusions_trace()
    created = step_named(trace, "CreateAutodiffSubgraphs")
    printer = next(n for n in created.graph.nodes if n.kind == "prim::Print")
    assert "side effects" in said(inspect_node(trace, created.index, printer.id), "DifferentiableGraph")


def test_a_small_group_inlined_back_says_so() -> None:
    trace = exclusions_trace()
    inlined = step_named(trace, "InlineAutodiffSubgraphs")
    for name in ("p.3", "q"):
        node = producer_of(inlined.graph, name)
        text = said(inspect_node(trace, inlined.index, node.id), "DifferentiableGraph")
        assert "fewer than the inline threshold 5" in text and "InlineAutodiffSubgraphs" in text


def test_node_facts(mlp_trace: PassTrace) -> None:
    relu = producer_of(mlp_trace[0].graph, "h")
    lines = inspect_node(mlp_trace, 0, relu.id)
    assert said(lines, "IR") in mlp_trace[0].text()
    assert said(lines, "shape %h") == "8 x 16"
    assert said(lines, "requires_grad %h") == "yes"
    assert said(lines, "uses of %h").startswith("aten::matmul")
    assert "CreateAutodiffSubgraphs runs at step 21" in said(lines, "DifferentiableGraph")


def test_membership_roles_and_grad_of(mlp_trace: PassTrace) -> None:
    packed = step_named(mlp_trace, "packGradient")
    relu = producer_of(packed.graph, "h.3")
    lines = inspect_node(mlp_trace, packed.index, relu.id)
    assert said(lines, "DifferentiableGraph").startswith("in DifferentiableGraph 0")
    roles = said(lines, "gradient role %h.3")
    assert "captured output 2" in roles and "a temporary" in roles and "vjp input 1" in roles
    assert said(lines, "gradient in").startswith("prim::GradOf")
    df = step_named(mlp_trace, "UpdateDifferentiableGraphRequiresGrad", GraphName.backward(0))
    grad_of = next(n for n in df.graph.nodes if n.kind == "prim::GradOf" and "relu" in dict(n.attrs)["name"])
    back = inspect_node(mlp_trace, df.index, grad_of.id, View.BACKWARD)
    assert said(back, "differentiates").startswith(f"aten::relu ({relu.id})")
    # Asked at a step of the main graph without naming the view, df is searched too.
    found = inspect_node(mlp_trace, packed.index, grad_of.id)
    assert said(found, "where") == "df of DifferentiableGraph 0"


def test_value_facts(mlp_trace: PassTrace) -> None:
    step = step_named(mlp_trace, "specializeAutogradZero", GraphName.backward_executor(0))
    undefined = step.graph.params[1]
    lines = inspect_value(mlp_trace, step.index, undefined.id)
    assert said(lines, f"AutogradZero %{undefined.name}").startswith("Zero")
    assert said(lines, "made by") == "input 1 of df of DifferentiableGraph 0, as its own executor compiles it"
    assert "vjp input 1" in said(lines, f"gradient role %{undefined.name}")
    assert inspect_value(mlp_trace, 0, 10**9) == []
    assert inspect_node(mlp_trace, 0, undefined.id) == []  # a value, not a node


def test_every_step_of_the_example_has_a_doc(mlp_trace: PassTrace) -> None:
    names = {step.pass_name for step in mlp_trace}
    missing = sorted(name for name in names if not pass_doc(name).strip())
    assert not missing
    assert "GradOf" in pass_doc("lower_grad_of") and "captured" in pass_doc("lambdaLiftReverse")
    assert pass_doc("NoSuchPass") == ""


def test_a_value_shows_the_name_users_know() -> None:
    """A compiled graph's parameter input: the name Dynamo read it under, the log's beside it."""
    from pathlib import Path

    from gradview.loaders.compiled_trace import load_compiled_trace

    log = Path(__file__).resolve().parents[1] / "data" / "torch_trace" / "conv_bn_relu.log"
    trace = load_compiled_trace(log).trace
    forward = next(step for step in trace if step.pass_name == "partition")
    weight = next(param for param in forward.graph.params if param.name == "primals_1")
    assert said(inspect_value(trace, forward.index, weight.id, View.FORWARD), "name") == "0.weight (primals_1)"
    unnamed = next(param for param in forward.graph.params if param.name == "primals_3")
    assert said(inspect_value(trace, forward.index, unnamed.id, View.FORWARD), "name") == ""

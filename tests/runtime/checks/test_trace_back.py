"""Trace a gradient back: the df ops that compute it and the forward ops they differentiate."""

from __future__ import annotations

from collections import Counter

from gradview.runtime.checks import gradient_path
from gradview.runtime.checks.trace_steps import backward_step, forward_step, gradient_notes
from gradview.runtime.gradient_wiring import gradient_wiring
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_records import walk_records

# examples/mlp.ir is relu(x @ w1 + b1) @ w2 + b2: the forward ops each input's gradient
# flows back through, by kind.
EXPECTED = {
    "b2": Counter({"aten::add": 1}),
    "w2": Counter({"aten::add": 1, "aten::matmul": 1}),
    "b1": Counter({"aten::add": 2, "aten::matmul": 1, "aten::relu": 1}),
    "w1": Counter({"aten::add": 2, "aten::matmul": 2, "aten::relu": 1}),
    "x": Counter({"aten::add": 2, "aten::matmul": 2, "aten::relu": 1}),
}


def _differentiated_step(trace: PassTrace) -> int:
    """The first step at which df exists and still has its GradOf blocks."""
    for step in trace:
        df = backward_step(trace, step.index, 0)
        has_grad_of = df is not None and any(n.kind == "prim::GradOf" for n in walk_records(df.graph))
        if has_grad_of and gradient_notes(trace, step.index, 0) is not None:
            return step.index
    raise AssertionError("no differentiated step in the trace")


def test_each_gradient_leads_back_to_the_forward_ops_it_differentiates(mlp_trace: PassTrace) -> None:
    index = _differentiated_step(mlp_trace)
    f = forward_step(mlp_trace, index, 0)
    df = backward_step(mlp_trace, index, 0)
    assert f is not None and df is not None
    wiring = gradient_wiring(f.graph, df.graph, gradient_notes(mlp_trace, index, 0) or {})
    names = {param.id: param.name.split(".")[0] for param in f.graph.params}
    kinds = {node.id: node.kind for node in walk_records(f.graph)}
    seen = {}
    for f_input, gradient in zip(wiring.vjp_outputs_f, wiring.vjp_outputs_df, strict=True):
        assert gradient is not None
        path = gradient_path(mlp_trace, index, 0, gradient)
        assert path is not None and path.f_input == f_input
        seen[names[f_input]] = Counter(kinds[n] for n in path.f_nodes)
        # The walk stops at df's inputs: the incoming gradient is always among them.
        assert path.df_inputs and path.df_nodes
    assert seen == {name: EXPECTED[name] for name in seen}
    assert set(seen) == set(EXPECTED)


def test_starting_at_a_node_and_at_something_else(mlp_trace: PassTrace) -> None:
    index = _differentiated_step(mlp_trace)
    df = backward_step(mlp_trace, index, 0)
    assert df is not None
    grad_of = next(n for n in walk_records(df.graph) if n.kind == "prim::GradOf")
    path = gradient_path(mlp_trace, index, 0, grad_of.id)
    assert path is not None and grad_of.id in path.df_nodes and len(path.f_nodes) >= 1
    assert gradient_path(mlp_trace, index, 0, -12345) is None
    assert gradient_path(mlp_trace, 0, 0, grad_of.id) is None  # no df at the first step

"""r and G on torch.compile's graphs read from a TORCH_TRACE log (runtime/checks/compiled_runs.py).

Every step of every compiled graph in the fixtures runs on inputs made from
the forward's annotated types, and G's backward gradients agree with finite
differences of the forward; the backward's gradients equal PyTorch's for the
same inputs where the test rebuilds the model (MLP, conv+batchnorm+relu, the
float64 function); an op gradview has no kernel for is one line naming it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F  # PyTorch's own spelling

from gradview.ir import parse_ir
from gradview.loaders.compiled_trace import compiled_trace
from gradview.loaders.targets import load_target
from gradview.loaders.torch_trace_log import load_torch_trace
from gradview.runtime import run_graph
from gradview.runtime.checks import check_step_gradient, run_step, step_feeds
from gradview.runtime.checks.compiled_runs import (
    backward_feed,
    compiled_group,
    gradients_by_input,
    joint_feed,
    primals,
    tangent_shapes,
    tangents,
)
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_types import GraphName, Note

FIXTURES = Path(__file__).parents[2] / "data" / "torch_trace"
# Known gaps outside the viewer, strict so each turns red once fixed (then its entry goes).
KNOWN_GAPS: dict[str, str] = {}
LOGS = [
    pytest.param(p, id=p.stem, marks=pytest.mark.xfail(reason=KNOWN_GAPS[p.stem], strict=True))
    if p.stem in KNOWN_GAPS else pytest.param(p, id=p.stem)
    for p in sorted(FIXTURES.glob("*.log"))
]


def _trace(name: str) -> PassTrace:
    return load_target(str(FIXTURES / name)).trace


def _gradients(trace: PassTrace, k: int) -> tuple[list[np.ndarray], dict[int, np.ndarray], list[np.ndarray]]:
    """Compiled graph k run as the viewer feeds it: primals, the backward's gradients by
    input, and the joint graph's outputs (tangents of ones throughout)."""
    forward = next(s for s in trace.steps if s.which.is_forward and s.which.index == k)
    group = compiled_group(trace, forward)
    f_inputs = primals(group)
    f_outputs = run_graph(parse_ir(group.forward.text()), [v.copy() if hasattr(v, "copy") else v for v in f_inputs])
    feed = backward_feed(group, f_inputs, f_outputs, tangents(tangent_shapes(group, f_outputs)))
    grads = gradients_by_input(group, run_graph(parse_ir(group.backward.text()), feed))
    assert group.joint is not None
    joint_inputs = joint_feed(group, [v.copy() if hasattr(v, "copy") else v for v in f_inputs], tangents(tangent_shapes(group)))
    return f_inputs, grads, run_graph(parse_ir(group.joint.text()), joint_inputs)


@pytest.mark.parametrize("log", LOGS)
def test_every_step_runs_and_its_gradients_match_finite_differences(log: Path) -> None:
    trace = load_target(str(log)).trace
    assert len(trace) >= 3
    for step in trace.steps:
        run = run_step(trace, step.index, None)  # a compiled session has no inputs of its own
        assert run.ok, f"{log.name} step {step.index}: {run.error or run.unavailable}"
        assert len(run.outputs) == len(step.graph.returns)
        params = {p.id for p in step.graph.params}
        assert params <= set(run.values), "every input is inspectable"
        assert len(run.values) > len(params), "and so is every value the step computes"
        check = check_step_gradient(trace, step.index, None, samples=12)
        assert check.status == "pass", check.message
        assert check.rows and all(row.verdict == "pass" for row in check.rows)


def test_the_inputs_note_says_where_they_come_from() -> None:
    trace = _trace("mlp.log")
    notes = [run_step(trace, i, None).inputs_note for i in range(3)]
    assert "tangents of ones" in notes[0]
    assert "seeded random inputs of the forward's annotated types" in notes[1]
    assert "forward step 1 saves" in notes[2]


@pytest.mark.parametrize("log", LOGS)
def test_the_joint_graph_gives_the_backward_gradients(log: Path) -> None:
    trace = load_target(str(log)).trace
    for k in sorted({s.which.index for s in trace.steps if s.which.is_forward}):
        f_inputs, grads, joint = _gradients(trace, k)
        real = len(joint) - len(f_inputs)
        for position, grad in grads.items():
            np.testing.assert_allclose(joint[real + position], grad, rtol=1e-5, atol=1e-6)


def _torch_grads(inputs: list[np.ndarray], positions: list[int], loss) -> dict[int, np.ndarray]:
    tensors = [torch.tensor(v, requires_grad=i in positions) for i, v in enumerate(inputs)]
    loss(*tensors).backward()
    return {i: tensors[i].grad.numpy() for i in positions}


def test_mlp_gradients_equal_pytorchs() -> None:
    f_inputs, grads, _ = _gradients(_trace("mlp.log"), 0)
    # primals: linear 1 weight and bias, x, linear 2 weight and bias (x needs no gradient).
    assert sorted(grads) == [0, 1, 3, 4]
    want = _torch_grads(
        f_inputs, [0, 1, 3, 4], lambda w1, b1, x, w2, b2: F.linear(torch.tanh(F.linear(x, w1, b1)), w2, b2).sum()
    )
    for position, grad in want.items():
        np.testing.assert_allclose(grads[position], grad, rtol=1e-4, atol=1e-5)  # float32


def test_conv_batchnorm_relu_gradients_equal_pytorchs() -> None:
    """The batch norm is _native_batch_norm_legit_functional in training mode."""
    f_inputs, grads, _ = _gradients(_trace("conv_bn_relu.log"), 0)
    # conv weight, conv bias, x, num_batches_tracked, running mean, running var, bn weight, bn bias.
    assert sorted(grads) == [0, 1, 6, 7]

    def loss(w, b, x, _, mean, var, gamma, beta):
        y = F.batch_norm(F.conv2d(x, w, b, padding=1), mean.clone(), var.clone(), gamma, beta, training=True)
        return torch.relu(y).sum()

    for position, grad in _torch_grads(f_inputs, [0, 1, 6, 7], loss).items():
        np.testing.assert_allclose(grads[position], grad, rtol=1e-4, atol=1e-4)


def test_float64_gradients_equal_pytorchs() -> None:
    f_inputs, grads, _ = _gradients(_trace("float64.log"), 0)
    assert all(v.dtype == np.float64 for v in f_inputs)
    want = _torch_grads(f_inputs, [0, 1], lambda x, w: torch.sin(x @ w).exp().mean(dim=1).sum())
    for position, grad in want.items():
        np.testing.assert_allclose(grads[position], grad, rtol=1e-12, atol=1e-12)


def test_a_run_leaves_the_inputs_the_next_run_reuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The forward writes num_batches_tracked and the running statistics with copy_; r on
    the backward runs it, then feeds the same primals to the backward: a run works on copies."""
    trace = _trace("conv_bn_relu.log")
    assert sum(n.kind == "aten::copy_" for n in trace[1].graph.nodes) == 3
    group = compiled_group(trace, trace[1])
    held = primals(group)
    kept = [v.copy() for v in held]
    monkeypatch.setattr(step_feeds, "primals", lambda *args, **kwargs: held)
    first = run_step(trace, 2, None)
    assert first.ok
    for value, before in zip(held, kept, strict=True):
        np.testing.assert_array_equal(value, before)
    assert run_step(trace, 2, None).values == first.values


def test_post_grad_steps_pair_with_the_latest_forward_and_backward() -> None:
    """Inductor's post-grad forward runs with the partition's backward before it, its
    post-grad backward on the post-grad forward's saved values."""
    trace = _trace("mlp_inductor.log")
    names = [(s.pass_name, s.which) for s in trace.steps]
    assert names[1:] == [
        ("partition", GraphName.forward(0)), ("partition", GraphName.backward(0)),
        ("inductor_post_grad_graph", GraphName.forward(0)), ("inductor_post_grad_graph", GraphName.backward(0)),
    ]
    group = compiled_group(trace, trace[4])
    assert group.forward is trace[1] and group.backward is trace[2] and group.joint is trace[0]
    assert group.pair(trace[0]) == (trace[1], trace[2])
    assert group.pair(trace[2]) == (trace[1], trace[2])
    assert group.pair(trace[3]) == (trace[3], trace[2])
    assert group.pair(trace[4]) == (trace[3], trace[4])
    assert run_step(trace, 3, None).ok  # the post-grad forward on the primals


def test_dynamic_shapes_take_the_values_dynamo_compiled_with() -> None:
    """Symbolic sizes (f32[s77, s27], Sym(s77)) bound to the log's create_symbol values, sizes
    computed with Python's operators (2*s77, s77//2 + 1) included."""
    trace = _trace("dynamic.log")
    notes = trace[1].annotations
    assert notes[Note.SYMBOLIC_SIZES]["primals_1"] == "s77" and notes[Note.SYMBOLIC_SIZES]["primals_2"] == "s27"
    s77, s27 = (notes[Note.SYMBOL_VALUES][s] for s in ("s77", "s27"))
    inputs = primals(compiled_group(trace, trace[1]))
    assert inputs[:2] == [s77, s27]
    assert [v.shape for v in inputs[2:]] == [(s77, s27), (s27, s77), (s77, s77)]
    for step in trace.steps:
        assert run_step(trace, step.index, None).ok
        assert check_step_gradient(trace, step.index, None, samples=12).status == "pass"
    del notes[Note.SYMBOLIC_SIZES]["primals_2"]
    run = run_step(trace, 1, None)
    assert run.unavailable is not None and "input %primals_2 of step 1 (int) is a symbolic size" in run.unavailable


def _with_op(log: str, old: str, new: str) -> PassTrace:
    """A fixture with one op renamed in every graph (the payload checksums would refuse an edited file)."""
    entries = [dataclasses.replace(e, payload=e.payload.replace(old, new)) for e in load_torch_trace(FIXTURES / log)]
    return compiled_trace(entries).trace


@pytest.mark.parametrize("op", ["aten.made_up_tanh.default", "prims.tanh.default", "mylib.fancy_tanh.default"])
def test_an_op_without_a_kernel_is_one_line_naming_it(op: str) -> None:
    trace = _with_op("mlp.log", "aten.tanh.default", op)
    kind = op.rsplit(".", 1)[0].replace(".", "::", 1)
    for step in trace.steps:
        run = run_step(trace, step.index, None)
        assert run.error is not None and "\n" not in run.error
        assert f"unknown operator {kind}" in run.error and "no kernel" in run.error
        check = check_step_gradient(trace, step.index, None)
        assert check.status == "fail" and "\n" not in check.message
        assert f"unknown operator {kind}" in check.message

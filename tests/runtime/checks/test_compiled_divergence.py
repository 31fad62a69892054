"""b on torch.compile's graphs (runtime/checks/compiled_divergence.py): each forward and backward
step against its joint graph; G on a compiled graph's gradients."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gradview.loaders.compiled_trace import compiled_trace
from gradview.loaders.targets import load_target
from gradview.loaders.torch_trace_log import load_torch_trace
from gradview.runtime.checks import CheckCancelled, check_step_gradient, find_divergence
from gradview.runtime.checks.compiled_runs import compiled_group, primals
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_types import GraphName, Note

from .test_compiled_runs import FIXTURES, LOGS


@pytest.mark.parametrize("log", LOGS)
def test_the_partition_computes_what_the_joint_graph_does(log) -> None:
    trace = load_target(str(log)).trace
    heard: list[str] = []
    result = find_divergence(trace, None, report=heard.append)
    assert result.status == "pass", result.message
    graphs = len({s.annotations["compile_id"] for s in trace.steps})
    assert sum("against its joint graph" in h for h in heard) == graphs
    # Then each forward and backward step, by name, before it runs.
    steps = [h for h in heard if "against the joint graph" in h]
    assert steps == [
        f"b: checking step {s.index} {s.pass_name} [{s.which}] against the joint graph…" for s in trace.steps if not s.which.is_main
    ]


def test_b_on_a_compiled_log_stops_between_steps_when_cancelled() -> None:
    trace = load_target(str(FIXTURES / "mlp.log")).trace
    heard: list[str] = []

    def report(text: str) -> None:
        heard.append(text)
        if len(heard) == 3:
            raise CheckCancelled(text)

    result = find_divergence(trace, None, report=report)
    assert result.status == "cancelled"
    assert result.message == "b: cancelled (checking step 2 partition [backward 0] against the joint graph)"


def _edited(key: str, old: str, new: str) -> PassTrace:
    """mlp.log with one graph of the log edited (the payload checksums would refuse an edited file)."""
    entries = [
        dataclasses.replace(e, payload=e.payload.replace(old, new)) if e.key == key else e
        for e in load_torch_trace(FIXTURES / "mlp.log")
    ]
    return compiled_trace(entries).trace


def test_a_forward_that_differs_is_named() -> None:
    trace = _edited("aot_forward_graph", "aten.tanh.default", "aten.sigmoid.default")
    result = find_divergence(trace, None)
    assert result.status == "fail"
    assert (result.step, result.graph, result.what) == (1, str(GraphName.forward(0)), "f output 0")
    assert result.message.startswith("b: first divergence at step 1 partition [forward 0]: f output 0:")


def test_a_backward_that_differs_is_named() -> None:
    trace = _edited("aot_backward_graph", "aten.tanh_backward.default", "aten.mul.Tensor")
    result = find_divergence(trace, None)
    assert result.status == "fail"
    assert (result.step, result.graph, result.what) == (2, str(GraphName.backward(0)), "grad %primals_1")
    failed = [row.name for row in result.rows if row.verdict == "FAIL"]
    assert failed == ["grad %primals_1", "grad %primals_2"]  # the second layer's are right


def test_a_step_that_cannot_run_is_one_line() -> None:
    trace = _edited("aot_backward_graph", "aten.tanh_backward.default", "mylib.tanh_backward.default")
    result = find_divergence(trace, None)
    # Nothing to compare is not a divergence: the step is named, the result is unavailable.
    assert result.status == "unavailable" and result.step == 2 and "\n" not in result.message
    assert "cannot run here: unknown operator mylib::tanh_backward" in result.message


def test_g_names_the_input_whose_compiled_gradient_is_scaled() -> None:
    # The bias's gradient as a mean over the batch instead of a sum: 1/8 of what it should be.
    trace = _edited("aot_backward_graph", "aten.sum.dim_IntList(tangents_1,", "aten.mean.dim(tangents_1,")
    fast = check_step_gradient(trace, 2, None)
    full = check_step_gradient(trace, 2, None, mode="elementwise")
    for result in (fast, full):
        assert result.status == "fail", result.message
        (bad,) = [row for row in result.rows if row.verdict == "FAIL"]
        assert bad.shape == (4,) and bad.name in result.message  # the second layer's bias, named
        assert sum(row.verdict == "pass" for row in result.rows) == 3
    assert check_step_gradient(load_target(str(FIXTURES / "mlp.log")).trace, 2, None).ok


def test_g_on_outputs_that_are_not_finite_says_so_instead_of_failing() -> None:
    trace = _edited("aot_forward_graph", "aten.tanh.default", "aten.log.default")  # log of negatives: NaN
    result = check_step_gradient(trace, 1, None)
    assert result.status == "unavailable", result.message
    assert "output 0 is not finite (NaN or inf) on these inputs" in result.message
    assert "seeded random inputs of the log's types" in result.message


def test_a_logs_running_variances_are_positive_and_weights_at_pytorchs_init_scale() -> None:
    """Seeded normal inputs where a model never has them would make G and r meaningless:
    a negative running variance gives NaN, unit-scale weights blow a deep net's outputs up."""
    trace = load_target(str(FIXTURES / "conv_bn_relu.log")).trace
    group = compiled_group(trace, trace[1])
    names = group.notes[Note.VALUE_NAMES]
    values = dict(zip((names.get(p.name, p.name) for p in group.forward.graph.params), primals(group), strict=True))
    assert (values["1.running_var"] >= 0.5).all()
    weight = values["0.weight"]  # a conv's, fan_in 3 * 3 * 3 = 27
    assert weight.std() == pytest.approx(1 / np.sqrt(27), rel=0.35)
    assert values["1.weight"].std() > 0.5 and values["1.running_mean"].min() < 0  # others as they were

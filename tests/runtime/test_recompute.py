"""The recomputation what-if: exact answers on small graphs, and invariants on every fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.loaders.targets import load_target
from gradview.runtime.recompute import RecomputeError, what_if_recomputed
from gradview.runtime.saved_values import INPUT, saved_values
from gradview.runtime.trace_records import walk_records

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "data" / "torch_trace"
_PACKING = {"prim::Constant", "prim::ListConstruct", "prim::ListUnpack", "prim::TupleConstruct",
            "prim::TupleUnpack", "aten::__getitem__", "prim::NumToTensor", "aten::detach", "aten::alias"}


def test_the_mlp_recomputing_tanh_reruns_the_first_layer_and_keeps_its_inputs() -> None:
    """Linear -> tanh -> Linear saves x, the second weight and tanh's output. Recomputing
    tanh's output frees its 1,024 bytes, reruns t, addmm and tanh, and needs the first
    layer's weight and bias (2,048 + 128 bytes) kept instead: the saved total grows."""
    trace = load_target(str(LOGS / "mlp.log")).trace
    [graph] = saved_values(trace)
    result = what_if_recomputed(trace, graph, ["tanh"])
    assert result.rerun_ops == ("aten::t", "aten::addmm", "aten::tanh")
    assert [(kept.name, kept.bytes) for kept in result.kept_inputs] == [("primals_1", 2048), ("primals_2", 128)]
    assert result.saved_bytes_before == graph.total_bytes == 2048
    assert result.saved_bytes_after == 2048 - 1024 + 2048 + 128
    assert result.bytes_freed == -(2048 + 128 - 1024)


def test_a_saved_input_cannot_be_recomputed() -> None:
    trace = load_target(str(LOGS / "mlp.log")).trace
    [graph] = saved_values(trace)
    with pytest.raises(RecomputeError, match="primals_3 is an input of the forward graph"):
        what_if_recomputed(trace, graph, ["primals_3"])
    with pytest.raises(RecomputeError, match="nothing is not a saved tensor"):
        what_if_recomputed(trace, graph, ["nothing"])


def test_a_torchscript_graph_says_which_sizes_it_does_not_know() -> None:
    trace = load_target(str(ROOT / "examples" / "mlp.ir")).trace
    [graph] = saved_values(trace)
    result = what_if_recomputed(trace, graph, ["h.3"])
    assert result.rerun_ops == ("aten::matmul", "aten::add", "aten::relu")
    assert [(kept.name, kept.bytes) for kept in result.kept_inputs] == [("b1", None)]
    assert result.sizes_unknown and result.saved_bytes_after == graph.total_bytes - 1024


@pytest.mark.parametrize("log", sorted(p.name for p in LOGS.glob("*.log")))
def test_every_saved_value_recomputes_from_what_is_left(log: str) -> None:
    """For each saved value made by an op: the ops rerun are exactly its forward ancestors up
    to what stays saved, every input they read is at hand (still saved, a kept input, made by
    a rerun op, or a constant), and the bytes add up."""
    trace = load_target(str(LOGS / log)).trace
    for graph in saved_values(trace):
        forward = trace[graph.forward_step].graph
        producer = {out.id: node for node in walk_records(forward, subgraphs=False) for out in node.outputs}
        kinds = {node.id: node.kind for node in walk_records(forward, subgraphs=False)}
        inputs = {param.id for param in forward.params}
        for value in graph.saved:
            if value.producer == INPUT:
                continue
            try:
                result = what_if_recomputed(trace, graph, [value.name])
            except RecomputeError as exc:
                # Only refused when it would rerun from an input the forward overwrites.
                assert "which the forward overwrites (aten::copy_)" in str(exc), exc
                continue
            still = {v.forward_value for v in graph.saved if v.name != value.name}
            kept = {k.value for k in result.kept_inputs}
            # The ancestors up to what stays saved, walked here independently.
            expected, stack = set(), [value.forward_value]
            while stack:
                node = producer.get(stack.pop())
                if node is None or node.id in expected or node.kind == "prim::Constant":
                    continue
                expected.add(node.id)
                stack.extend(used for used in node.inputs if used not in still and used not in inputs)
            counted = {n for n in expected if kinds[n] not in _PACKING}
            assert set(result.rerun_nodes) == counted, (log, value.name)
            made = {out.id for node in walk_records(forward, subgraphs=False) if node.id in expected for out in node.outputs}
            for node in walk_records(forward, subgraphs=False):
                if node.id in expected:
                    for used in node.inputs:
                        assert used in still or used in kept or used in made or producer[used].kind == "prim::Constant"
            assert kept <= inputs and not kept & still
            assert result.saved_bytes_after == graph.total_bytes - value.bytes + sum(k.bytes for k in result.kept_inputs)


def test_the_readmes_attention_example() -> None:
    """The README's numbers: recomputing view_2 of the attention fixture."""
    trace = load_target(str(LOGS / "attention.log")).trace
    [graph] = saved_values(trace)
    result = what_if_recomputed(trace, graph, ["view_2"])
    assert result.ops_to_rerun == 6
    assert result.rerun_ops == ("aten::t", "aten::addmm", "aten::view", "aten::split", "aten::bmm", "aten::view")
    assert [(kept.name, kept.bytes) for kept in result.kept_inputs] == [("primals_1", 3072), ("primals_2", 192)]
    assert (result.saved_bytes_before, result.saved_bytes_after) == (6656, 8896)


def test_rerunning_dropout_is_named_and_an_overwritten_input_refused() -> None:
    trace = load_target(str(LOGS / "transformer.log")).trace
    [graph] = saved_values(trace)
    result = what_if_recomputed(trace, graph, ["view_16"])
    assert "aten::native_dropout" in result.rerun_ops and result.random_ops == ("aten::native_dropout",)
    trace = load_target(str(LOGS / "conv_bn_relu.log")).trace
    [graph] = saved_values(trace)
    # Batch norm in training updates its running statistics in place (aten::copy_ into the inputs).
    with pytest.raises(RecomputeError, match="on the input primals_5, which the forward overwrites"):
        what_if_recomputed(trace, graph, ["getitem_1"])
    assert what_if_recomputed(trace, graph, ["convolution"]).rerun_ops == ("aten::convolution",)

"""The Saved tab's rows and words, without a terminal."""

from __future__ import annotations

from pathlib import Path

from gradview.runtime.recompute import KeptInput, Recomputation, what_if_recomputed
from gradview.runtime.saved_values import INPUT, saved_values
from gradview.viewer.saved_rows import (
    describe_what_if,
    heading_cells,
    joint_step,
    light_for,
    short_name,
)
from gradview.viewer.session import load_target

LOGS = Path(__file__).resolve().parents[2] / "tests" / "data" / "torch_trace"


def test_a_heading_lights_the_reruns_only_and_a_row_its_producer_and_readers() -> None:
    trace = load_target(str(LOGS / "graph_break.log")).trace
    graph = saved_values(trace)[1]
    made = next(v for v in graph.saved if v.producer != INPUT)
    what_if = what_if_recomputed(trace, graph, [made.name])
    heading = light_for(graph, None, what_if)
    assert heading.nodes == frozenset(what_if.rerun_nodes) and heading.dg == graph.dg == 1
    assert heading.step == joint_step(graph) == max(graph.forward_step, graph.backward_step)
    assert light_for(graph, None, None).nodes == frozenset()
    row = light_for(graph, made, None)
    assert row.focus[0] == made.producer_node and row.nodes == {made.producer_node, *made.consumer_nodes}
    assert row.values == {made.forward_value, made.backward_value}
    assert [str(cell) for cell in heading_cells(graph, what_if)[:3]] == [
        "graph 1/0", f"{what_if.saved_bytes_after:,}", f"{len(graph.saved)} saved, 1 ↻",
    ]
    assert short_name(graph) == "graph 1/0"


def test_the_what_if_words_say_more_when_keeping_inputs_costs_more_than_it_frees() -> None:
    graph = saved_values(load_target(str(LOGS / "layernorm_gelu.log")).trace)[0]
    costly = Recomputation(("view_1",), 1000, 1200, (1, 2), ("aten::t", "aten::addmm"), (
        KeptInput("primals_1", 1, 400), KeptInput("primals_9", 2, None),
    ))
    text = describe_what_if(graph, ["view_1"], costly).plain
    assert "saved 1,000 → 1,200 bytes + inputs of unknown size: 200 more" in text
    assert "the backward reruns 2 forward ops: aten::t, aten::addmm" in text
    assert "forward inputs now kept: primals_1 (400 bytes), primals_9 (size unknown)" in text
    assert "w: what if" in describe_what_if(graph, [], None).plain


def test_the_empty_tab_says_why(tmp_path: Path) -> None:
    from gradview.loaders.targets import load_target
    from gradview.viewer.saved_rows import empty_message

    from ..runtime.nn_modules import write_builder

    root = Path(__file__).resolve().parents[2]
    target = write_builder(tmp_path / "model.py", "ReLU")
    trace = load_target(target).trace
    assert empty_message(trace).startswith(
        "nothing is saved for backward: no DifferentiableGraph is left: "
        "InlineAutodiffSubgraphs pasted back DifferentiableGraph 0"
    )
    assert empty_message(trace).endswith("--inline-threshold 0 keeps them")
    assert empty_message(load_target(str(root / "examples" / "mlp.ir"), inputs="none").trace).startswith(
        "nothing is saved for backward: no DifferentiableGraph: the graph did not run, and the executor"
    )


def test_a_row_and_its_description_name_the_parameter() -> None:
    """A compiled graph's saved weight reads as the model's parameter, the log's name beside it."""
    from gradview.viewer.saved_rows import describe_value, value_cells

    graph = saved_values(load_target(str(LOGS / "conv_bn_relu.log")).trace)[0]
    weight = next(v for v in graph.saved if v.name == "primals_1")
    assert value_cells(weight, recomputed=False)[0].plain == "0.weight (primals_1)"
    assert describe_value(weight).plain.startswith("0.weight (primals_1) [8, 3, 3, 3] float32")


def test_the_what_if_names_the_parameters_it_would_keep() -> None:
    """Recomputing view_2 of the attention block keeps the projection's weight and bias: by name."""
    trace = load_target(str(LOGS / "attention.log")).trace
    graph = saved_values(trace)[0]
    text = describe_what_if(graph, ["view_2"], what_if_recomputed(trace, graph, ["view_2"])).plain
    assert "forward inputs now kept: qkv.weight (primals_1) (3,072 bytes), qkv.bias (primals_2) (192 bytes)" in text

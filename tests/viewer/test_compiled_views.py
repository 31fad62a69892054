"""torch.compile's graphs in the viewer's model: timeline groups, views, docs, joint-view edges."""

from __future__ import annotations

from pathlib import Path

from gradview.loaders.targets import load_target
from gradview.runtime.saved_values import saved_values
from gradview.viewer.model import View
from gradview.viewer.pass_docs import pass_doc
from gradview.viewer.timeline import summarize_steps
from gradview.viewer.views import available_views, draw_step

LOGS = Path(__file__).resolve().parents[1] / "data" / "torch_trace"


def test_each_compiled_graph_is_one_timeline_group() -> None:
    trace = load_target(str(LOGS / "graph_break.log")).trace
    groups = [(s.group, s.pass_name, s.which_text) for s in summarize_steps(trace)]
    assert groups == [
        ("compiled graph 0/0_1", "aot_joint_graph", ""),
        ("compiled graph 0/0_1", "partition", "f"),
        ("compiled graph 0/0_1", "partition", "df"),
        ("compiled graph 1/0", "aot_joint_graph", ""),
        ("compiled graph 1/0", "partition", "f"),
        ("compiled graph 1/0", "partition", "df"),
    ]


def test_every_step_has_its_explanation() -> None:
    trace = load_target(str(LOGS / "mlp_inductor.log")).trace
    for step in trace:
        assert len(pass_doc(step.pass_name)) > 200, step.pass_name


def test_the_joint_view_draws_each_saved_value_as_an_edge_from_f_to_df() -> None:
    trace = load_target(str(LOGS / "layernorm_gelu.log")).trace
    last = len(trace) - 1
    assert available_views(trace, last, 0) == list(View)
    drawing = draw_step(trace, last, View.JOINT, 0, ghosts=False)
    assert {c.title for c in drawing.clusters.values()} >= {
        "f: forward of compiled graph 0/0", "df: backward of compiled graph 0/0"
    }
    captured = {edge.value_id for edge in drawing.edges if edge.capture}
    [graph] = saved_values(trace)
    assert captured == {value.forward_value for value in graph.saved}


def test_exported_pictures_name_the_compiled_graph(tmp_path: Path) -> None:
    from gradview.viewer.export import export_trace_html

    trace = load_target(str(LOGS / "graph_break.log")).trace
    page = tmp_path / "steps.html"
    export_trace_html(trace, page, View.JOINT, 1)
    text = page.read_text(encoding="utf-8")
    assert "joint of compiled graph 1/0" in text and "DifferentiableGraph" not in text.replace("DifferentiableGraph_", "")


def test_the_inspector_places_a_node_in_its_compiled_graph() -> None:
    from gradview.viewer.inspector import inspect_node

    trace = load_target(str(LOGS / "mlp.log")).trace
    backward = trace[2]
    node = next(n for n in backward.graph.nodes if n.kind == "aten::tanh_backward")
    lines = dict(inspect_node(trace, 2, node.id, View.BACKWARD, 0))
    assert any("the backward graph of compiled graph 0/0" in text for text in lines.values()), lines

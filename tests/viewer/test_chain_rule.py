"""The inspector's chain-rule line (issue 23, point 2): each gradient df returns,
as an expression of df's ops with values named as the source names them."""

from __future__ import annotations

import re
from pathlib import Path

import numpy

from gradview.viewer.chain_rule import chain_rule_lines
from gradview.viewer.inspector import inspect_value
from gradview.viewer.marks import step_marks
from gradview.viewer.model import Mark, View
from gradview.viewer.session import load_target

TEACHING = Path(__file__).resolve().parents[2] / "examples" / "teaching"
SUMMED = " (terms summed back to their inputs' shapes)"


def test_sin_times_x_reads_as_the_product_rule_and_computes_its_gradient() -> None:
    trace = load_target(f"{TEACHING / 'sin_times_x.py'}:f").trace
    (line,) = chain_rule_lines(trace, 0)
    assert line == "grad_x = grad * sin_x + grad * x * cos(x)" + SUMMED
    # The expression is the gradient: evaluated on numbers it is d/dx (sin(x) * x) = sin(x) + x cos(x).
    x = numpy.linspace(-2.0, 2.0, 7)
    grad = numpy.full_like(x, 0.5)
    expression = line.partition(" = ")[2].removesuffix(SUMMED)
    value = eval(expression, {"__builtins__": {}}, {"grad": grad, "x": x, "sin_x": numpy.sin(x), "cos": numpy.cos})
    numpy.testing.assert_allclose(value, grad * (numpy.sin(x) + x * numpy.cos(x)))


def test_x_times_w_names_both_gradients() -> None:
    trace = load_target(f"{TEACHING / 'x_times_w.py'}:f", min_group_size=1).trace
    assert chain_rule_lines(trace, 0) == ["grad_x = grad * w" + SUMMED, "grad_w = grad * x" + SUMMED]


def test_the_inspector_shows_it_on_a_vjp_output() -> None:
    trace = load_target(f"{TEACHING / 'sin_times_x.py'}:f").trace
    step = [s for s in trace if s.which.is_backward][-1]
    marks = step_marks(trace, step.index, View.JOINT, 0)
    value = next(v for v, found in marks.values.items() if Mark.VJP_OUTPUT in found)
    lines = dict(inspect_value(trace, step.index, value, View.BACKWARD, 0))
    assert lines["formula"].startswith("grad_x = grad * sin_x + grad * x * cos(x)")


def test_a_loop_keeps_the_numbers_that_tell_its_values_apart() -> None:
    trace = load_target(f"{TEACHING / 'loop_if.py'}:f").trace
    first = chain_rule_lines(trace, 0)[0]
    assert first.startswith("grad_h.") and "tanh_backward(" in first


def test_pictures_name_the_incoming_gradients_as_the_chain_rule_line_does() -> None:
    from gradview.viewer.export import render_svg
    from gradview.viewer.layout import union_layout
    from gradview.viewer.plumbing import fold_step

    trace = load_target(f"{TEACHING / 'sin_times_x.py'}:f").trace
    index = len(trace) - 1
    graph = fold_step(trace, index, View.JOINT, 0).graph
    marks = step_marks(trace, index, View.JOINT, 0)
    inputs = {graph.nodes[i].label.split(" ")[0] for i in graph.nodes if Mark.VJP_INPUT in marks.nodes.get(i, ())}
    # %0, the gradient of f's unnamed output, reads as the line's "grad"; %1, of the temporary sin_x, "grad_sin_x".
    assert {"%grad", "%grad_sin_x"} <= inputs
    assert "grad * sin_x" in chain_rule_lines(trace, 0)[0]
    svg = render_svg(graph, marks, union_layout([graph]), theme="light")
    assert re.search(r">%grad_sin_x[ <]", svg) and re.search(r">%grad[ <]", svg)


def test_the_ir_level_keeps_the_graph_s_own_names() -> None:
    from gradview.viewer.views import draw_step

    trace = load_target(f"{TEACHING / 'sin_times_x.py'}:f").trace
    graph = draw_step(trace, len(trace) - 1, View.JOINT, 0)
    labels = {node.label.split(" ")[0] for node in graph.nodes.values()}
    assert "%0" in labels and "%grad" not in labels


def test_every_incoming_gradient_has_a_name_of_its_own() -> None:
    from gradview.viewer.chain_rule import picture_gradient_names
    from gradview.viewer.view_steps import view_steps

    # The MLP's f returns two unnamed values df gets gradients for: the loss (used) and sub's %9 (a Zero).
    trace = load_target(f"{TEACHING / 'mlp_mse.py'}:f").trace
    index = len(trace) - 1
    names = picture_gradient_names(trace, index, 0, view_steps(trace, index, View.JOINT, 0))
    assert len(set(names.values())) == len(names) >= 3
    assert "grad" in names.values() and "grad_9" in names.values()

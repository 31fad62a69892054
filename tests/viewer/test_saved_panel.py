"""The Saved tab (S): the table of ``gradview saved``, each row lit in its graph's
joint view, and the what-if of recomputing values (w), driven as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.recompute import RecomputeError, what_if_recomputed
from gradview.runtime.saved_values import INPUT, GraphSaved, SavedValue, saved_values
from gradview.viewer.app import GradviewApp
from gradview.viewer.model import Mark, NodeRole, View
from gradview.viewer.saved_panel import SavedPanel
from gradview.viewer.session import Session, load_target

from .driving import drive

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "data" / "torch_trace"


@pytest.fixture(scope="module")
def layernorm() -> Session:
    return load_target(str(LOGS / "layernorm_gelu.log"))


@pytest.fixture(scope="module")
def graph_break() -> Session:
    return load_target(str(LOGS / "graph_break.log"))


async def _open_saved(app: GradviewApp, pilot: Pilot) -> SavedPanel:
    """S, then wait for the worker that lists the saved values and for the joint view's layout."""
    await pilot.press("S")
    await app.workers.wait_for_complete()
    await pilot.pause()
    await app.wait_for_layouts()
    await pilot.pause()
    return app.saved.panel


async def _to_row(app: GradviewApp, pilot: Pilot, graph: int, name: str | None) -> None:
    """Move the table's cursor with the arrow keys onto a value's row (or a graph's heading)."""
    panel = app.saved.panel
    target = next(i for i, (g, value) in enumerate(panel._rows) if g == graph and (value and value.name) == name)
    while panel.table.cursor_row != target:
        await pilot.press("down" if panel.table.cursor_row < target else "up")
    await app.wait_for_layouts()
    await pilot.pause()


def _linked(app: GradviewApp) -> set[int]:
    """The nodes lit on the canvas (the selection's links and the Saved tab's row)."""
    return {node for node, marks in app.main.canvas.marks.nodes.items() if Mark.LINKED in marks}


def _detail(app: GradviewApp) -> str:
    return str(app.saved.panel.detail.render())


def _cells(panel: SavedPanel) -> list[tuple[str, str]]:
    """(name, bytes) of every row, as shown."""
    return [
        (str(row[0]).strip(), str(row[1]).strip()) for row in (panel.table.get_row_at(i) for i in range(panel.table.row_count))
    ]


def _same_rows(shown: list[tuple[str, str]], expected: list[tuple[str, str]]) -> bool:
    """Bytes in full; a name in full, or its head and tail around an ellipsis (a narrow column)."""

    def same_name(seen: str, name: str) -> bool:
        head, mark, tail = seen.partition("…")
        return seen == name or bool(mark) and name.startswith(head) and name.endswith(tail) and len(seen) < len(name)

    return len(shown) == len(expected) and all(
        same_name(s[0], e[0]) and s[1] == e[1] for s, e in zip(shown, expected, strict=True)
    )


def _expected_rows(graphs: list[GraphSaved]) -> list[tuple[str, str]]:
    rows = []
    for graph in graphs:
        rows.append((graph.name.removeprefix("compiled ").replace("DifferentiableGraph ", "DG "), f"{graph.total_bytes:,}"))
        rows.extend((value.display, f"{value.bytes:,}") for value in graph.saved)
    return rows


def _producer_and_readers(value: SavedValue) -> set[int]:
    made_by = value.forward_value if value.producer == INPUT else value.producer_node
    assert made_by is not None
    return {made_by, *value.consumer_nodes}


@pytest.mark.parametrize("target", ["layernorm", "graph_break", "mlp_session"])
def test_the_tab_lists_what_saved_values_lists(target: str, request: pytest.FixtureRequest) -> None:
    session: Session = request.getfixturevalue(target)
    graphs = saved_values(session.trace)
    assert graphs and all(graph.saved for graph in graphs)
    shown: list[list[tuple[str, str]]] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        panel = await _open_saved(app, pilot)
        assert app.main.details.active == "tab-saved" and app.focused is panel.table
        shown.append(_cells(panel))

    drive(session, script, (120, 40))
    assert _same_rows(shown[0], _expected_rows(graphs)), (shown[0], _expected_rows(graphs))


@pytest.mark.parametrize("target", ["layernorm", "graph_break", "mlp_session"])
def test_each_row_lights_exactly_its_producer_and_readers_in_the_joint_view(
    target: str, request: pytest.FixtureRequest
) -> None:
    session: Session = request.getfixturevalue(target)
    graphs = saved_values(session.trace)
    seen: list[str] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await _open_saved(app, pilot)
        for position, graph in enumerate(graphs):
            for value in graph.saved:
                await _to_row(app, pilot, position, value.name)
                assert (app.view, app.dg, app.index) == (View.JOINT, graph.dg, max(graph.forward_step, graph.backward_step))
                lit = _producer_and_readers(value)
                drawing = app.main.canvas.graph
                # At the ops level a reader that is plumbing (a size read) is folded into the
                # op that reads it: that box shows it, and is lit with it.
                picture = app.large.picture
                boxes = {picture.shown_as(node) for node in lit} if picture is not None else lit
                assert _linked(app) & set(drawing.nodes) == boxes, value.name
                assert lit <= _linked(app), value.name
                assert boxes <= set(drawing.nodes), value.name  # the producer and the readers both show
                if value.producer == INPUT:
                    assert drawing.nodes[value.forward_value].role is NodeRole.INPUT
                seen.append(value.name)
            await _to_row(app, pilot, position, None)  # a graph's heading lights nothing
            assert _linked(app) == set() and app.dg == graph.dg

    drive(session, script, (120, 40))
    assert seen == [value.name for graph in graphs for value in graph.saved]


def test_the_source_line_shows_for_a_compiled_graph(graph_break: Session) -> None:
    graphs = saved_values(graph_break.trace)
    with_source = [(p, v) for p, g in enumerate(graphs) for v in g.saved if v.source]
    without = [(p, v) for p, g in enumerate(graphs) for v in g.saved if not v.source]
    assert with_source and without  # the fixture has both: a graph input has no source line
    shown: dict[str, str] = {}

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await _open_saved(app, pilot)
        for position, value in with_source + without:
            await _to_row(app, pilot, position, value.name)
            shown[f"{position}:{value.name}"] = _detail(app).replace("\n", " ")

    drive(graph_break, script, (200, 50))
    for position, value in with_source:
        assert f"source: {value.source}" in shown[f"{position}:{value.name}"]
    for position, value in without:
        assert "source:" not in shown[f"{position}:{value.name}"]


def _what_if_words(trace: PassTrace, graph: GraphSaved, names: list[str]) -> tuple[str, str]:
    what_if = what_if_recomputed(trace, graph, names)
    ops = what_if.ops_to_rerun
    return (
        f"saved {what_if.saved_bytes_before:,} → {what_if.saved_bytes_after:,} bytes",
        f"the backward reruns {ops} forward op{'s' if ops != 1 else ''}: {', '.join(what_if.rerun_ops)}",
    )


def test_marking_values_as_recomputed_shows_the_trade_and_unmarking_restores(layernorm: Session) -> None:
    trace = layernorm.trace
    graph = saved_values(trace)[0]
    first, second = [v for v in graph.saved if v.producer != INPUT][:2]
    one = what_if_recomputed(trace, graph, [first.name])
    both = what_if_recomputed(trace, graph, [first.name, second.name])
    assert one.saved_bytes_after != graph.total_bytes and one.ops_to_rerun > 0

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        panel = await _open_saved(app, pilot)
        await _to_row(app, pilot, 0, first.name)
        await pilot.press("w")
        await app.wait_for_layouts()
        await pilot.pause()
        text = _detail(app)
        for words in _what_if_words(trace, graph, [first.name]):
            assert words in text.replace("\n", " ")
        assert _cells(panel)[0][1] == f"{one.saved_bytes_after:,}"  # the graph's heading: the total after
        assert _cells(panel)[1][0] == f"↻ {first.name}"  # the marked row
        assert _linked(app) == _producer_and_readers(first) | set(one.rerun_nodes)
        assert set(one.rerun_nodes) <= set(app.main.canvas.graph.nodes)

        await _to_row(app, pilot, 0, second.name)
        await pilot.press("w")
        await pilot.pause()
        for words in _what_if_words(trace, graph, [first.name, second.name]):
            assert words in _detail(app).replace("\n", " ")
        assert _cells(panel)[0][1] == f"{both.saved_bytes_after:,}"
        assert _linked(app) == _producer_and_readers(second) | set(both.rerun_nodes)

        for name in (second.name, first.name):  # unmark both: the table and the light as they were
            await _to_row(app, pilot, 0, name)
            await pilot.press("w")
            await pilot.pause()
        assert _same_rows(_cells(panel), _expected_rows([graph]))
        assert "what if recomputed" not in _detail(app)
        assert _linked(app) == _producer_and_readers(first)
        assert panel.marked == {0: []} and not panel.what_ifs

    drive(layernorm, script, (120, 40))


def test_marking_a_graph_input_is_refused_with_one_line(layernorm: Session) -> None:
    graph = saved_values(layernorm.trace)[0]
    saved_input = next(v for v in graph.saved if v.producer == INPUT)
    with pytest.raises(RecomputeError) as refused:
        what_if_recomputed(layernorm.trace, graph, [saved_input.name])

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        panel = await _open_saved(app, pilot)
        await _to_row(app, pilot, 0, saved_input.name)
        await pilot.press("w")
        await pilot.pause()
        assert str(refused.value) in _detail(app).replace("\n", " ")
        assert "Traceback" not in _detail(app)
        assert not panel.what_ifs and _same_rows(_cells(panel), _expected_rows([graph]))
        assert _linked(app) == _producer_and_readers(saved_input)

    drive(layernorm, script, (120, 40))


def test_the_torchscript_what_if_names_inputs_of_unknown_size(mlp_session: Session) -> None:
    trace = mlp_session.trace
    graph = saved_values(trace)[0]
    made = next(v for v in graph.saved if v.producer != INPUT)
    what_if = what_if_recomputed(trace, graph, [made.name])
    unknown = [kept.name for kept in what_if.kept_inputs if kept.bytes is None]
    assert unknown  # examples/mlp.ir leaves the bias's sizes open

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await _open_saved(app, pilot)
        await _to_row(app, pilot, 0, made.name)
        await pilot.press("w")
        await pilot.pause()
        text = _detail(app).replace("\n", " ")
        for words in _what_if_words(trace, graph, [made.name]):
            assert words in text
        assert "+ inputs of unknown size" in text
        for name in unknown:
            assert f"{name} (size unknown)" in text

    drive(mlp_session, script, (120, 40))


def test_unknown_sizes_show_one_line_instead_of_the_table(mlp_session: Session) -> None:
    """A TorchScript trace kept without the executor's measured sizes (saved before they were recorded)."""
    data = mlp_session.trace.to_json()
    data.pop("saved_measured", None)
    session = Session("mlp.json", PassTrace.from_json(data))
    shown: list[tuple[str, int]] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        panel = await _open_saved(app, pilot)
        shown.append((str(panel.status.render()), panel.table.row_count))
        assert not panel.table.display  # the line instead of the table
        await pilot.press("w")  # nothing to mark: no crash, nothing lit
        await pilot.pause()
        assert app.saved.light is None

    drive(session, script, (120, 40))
    status, rows = shown[0]
    assert rows == 0 and "is not known" in status and "\n" not in status.strip()


def test_w_before_the_tab_is_shown_opens_it_and_marks_nothing(layernorm: Session) -> None:
    async def script(app: GradviewApp, pilot: Pilot) -> None:
        assert app.main.details.active != "tab-saved"
        await pilot.press("w")
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = app.saved.panel
        assert app.main.details.active == "tab-saved" and panel.loaded and panel.table.row_count
        assert not any(panel.marked.values()) and not panel.what_ifs

    drive(layernorm, script, (120, 40))


def test_clicking_the_tab_lists_the_values_too(graph_break: Session) -> None:
    graphs = saved_values(graph_break.trace)

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        await pilot.click("#--content-tab-tab-saved")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert _same_rows(_cells(app.saved.panel), _expected_rows(graphs))
        first = graphs[0].saved[0]
        assert app.saved.light is not None and app.saved.light.nodes == _producer_and_readers(first)

    drive(graph_break, script, (120, 40))

"""The large-graph part (viewer/large_graph.py) works from what it is given: the
trace, the layout controller, what is on screen and the app's hooks; no app, no terminal."""

from __future__ import annotations

from typing import Any

from gradview.runtime import PassTrace
from gradview.viewer.controller import Controller, layout_key
from gradview.viewer.detail import Detail
from gradview.viewer.large_graph import LargeGraph
from gradview.viewer.screen_state import AppHooks, OnScreen


class _Recorded:
    """The hooks' calls: redraws and notices."""

    def __init__(self) -> None:
        self.redraws = 0
        self.notes: list[str] = []

    def redraw(self) -> None:
        self.redraws += 1

    def notify(self, text: str, **_options: Any) -> None:
        self.notes.append(text)


def _large_graph(trace: PassTrace, shown: OnScreen) -> tuple[LargeGraph, _Recorded]:
    seen = _Recorded()
    hooks = AppHooks(
        redraw=seen.redraw, notify=seen.notify, main=lambda: None,  # type: ignore[arg-type,return-value]
        post=lambda _message: None, run_worker=lambda *_a, **_k: None, jump_to_pass=lambda _index: None,
    )
    controller = Controller(trace, lambda _message: None, lambda _work: None)
    return LargeGraph(trace, controller, shown, hooks, Detail.IR), seen


def test_x_folds_the_differentiable_graph_holding_the_selection_into_its_box(mlp_trace: PassTrace) -> None:
    index = next(step.index for step in mlp_trace if step.pass_name == "CreateAutodiffSubgraphs")
    shown = OnScreen(index=index)
    large, seen = _large_graph(mlp_trace, shown)
    drawing = large.controller.draw(index, shown.view, shown.dg)
    group, inside = next((node.cluster, node.id) for node in drawing.nodes.values() if (node.cluster or "").startswith("dg"))
    shown.selected = inside
    large.collapse_group()
    base = layout_key(mlp_trace, index, shown.view, shown.dg)
    assert large.transforms.state(base).collapsed == frozenset({group})
    assert shown.selected == large.transforms.box_id(group), "the box stands for the folded selection"
    assert seen.redraws == 1 and not seen.notes


def test_keys_that_need_a_selection_say_so_and_change_nothing(mlp_trace: PassTrace) -> None:
    shown = OnScreen(index=0)
    large, seen = _large_graph(mlp_trace, shown)
    base = layout_key(mlp_trace, 0, shown.view, shown.dg)
    before = large.transforms.state(base)
    large.focus_mode()
    large.collapse_group()
    assert large.transforms.state(base) == before and seen.redraws == 0
    assert [note.split(" ")[0] for note in seen.notes] == ["select", "select"]


def test_l_and_o_change_every_view_and_redraw(mlp_trace: PassTrace) -> None:
    large, seen = _large_graph(mlp_trace, OnScreen())
    stubs = large.transforms.stubs
    large.toggle_stubs()
    large.next_detail()
    assert large.transforms.stubs != stubs and large.transforms.detail is not Detail.IR
    assert seen.redraws == 2 and len(seen.notes) == 2

"""The controller hands layouts to the layout service (the view on screen first) and
turns its results into LayoutReady messages: no layout is computed on the app's threads."""

from __future__ import annotations

from typing import Any

from gradview.viewer.controller import AHEAD_WHILE_LAYING_OUT, Controller, layout_key
from gradview.viewer.layout import Layout, union_layout
from gradview.viewer.layout_service import LayoutResult, LayoutService, union_members
from gradview.viewer.messages import LayoutReady
from gradview.viewer.model import View


class FakeService:
    """Records what the controller asks; results are handed back by the test."""

    def __init__(self) -> None:
        self.prepared = 0
        self.submitted: list[tuple[Any, bool]] = []
        self.callbacks: dict[Any, Any] = {}
        self.prioritized: list[Any] = []
        self.shut = False

    def prepare(self) -> None:
        self.prepared += 1

    def is_prepared(self) -> bool:
        return self.prepared > 0

    def submit_view(self, key, engine=None, callback=None, first=False):
        assert self.prepared, "the trace is packed before the first job"
        self.submitted.append((key, first))
        self.callbacks[key] = callback

    def prioritize(self, key) -> bool:
        self.prioritized.append(key)
        return True

    def shutdown(self) -> None:
        self.shut = True

    def busy(self) -> bool:
        return False  # nothing computes here: the controller may draw every step ahead at once


def _controller(trace, service) -> tuple[Controller, list]:
    posted: list = []

    def post(message) -> bool:
        posted.append(message)
        return True

    return Controller(trace, post, lambda work: work(), service=service), posted


def _all_keys(trace) -> list:
    keys = list(dict.fromkeys(("whole", step.which) for step in trace))
    return keys + [(v, 0) for v in ("forward", "backward", "joint")]


def test_the_view_on_screen_goes_first_then_every_other_layout(mlp_trace):
    service = FakeService()
    controller, _ = _controller(mlp_trace, service)
    on_screen = layout_key(mlp_trace, 0, View.JOINT, 0)
    controller.request(on_screen)
    assert service.submitted == [] and controller.busy()  # nothing before start (first paint)
    controller.start()
    assert service.submitted[0] == (on_screen, True)
    assert [key for key, _ in service.submitted] == [on_screen] + [
        key for key in _all_keys(mlp_trace) if key != on_screen
    ]
    assert not any(first for _, first in service.submitted[1:])
    # Switching view: a submitted layout is moved ahead in the service, not submitted again.
    forward = layout_key(mlp_trace, 0, View.FORWARD, 0)
    controller.request(forward)
    assert service.prioritized == [forward]
    assert len(service.submitted) == len(_all_keys(mlp_trace))
    controller.stop()
    assert service.shut


def test_results_become_messages_with_geometry_or_the_error(mlp_trace):
    service = FakeService()
    controller, posted = _controller(mlp_trace, service)
    controller.start()
    keys = [key for key, _ in service.submitted]
    good, bad = keys[0], keys[1]
    other = next(key for key in keys if key[0] != "whole" and key != good)
    whole = next(key for key in keys if key[0] == "whole" and key not in (good, bad))
    controller.request(good)  # the view on screen
    layout = union_layout(union_members(mlp_trace, good), "layered")
    service.callbacks[good](LayoutResult(good, layout, None, 0.1, "layered"))
    service.callbacks[bad](LayoutResult(bad, None, "dot failed: syntax error in line 3", 0.1, "dot"))
    other_layout = union_layout(union_members(mlp_trace, other), "layered")
    service.callbacks[other](LayoutResult(other, other_layout, None, 0.1, "layered"))
    service.callbacks[whole](LayoutResult(whole, Layout(), None, 0.1, "layered"))
    ready = [m for m in posted if isinstance(m, LayoutReady)]
    assert [m.key for m in ready] == [good, bad, other, whole]
    assert ready[0].layout is layout and ready[0].geometry is not None and ready[0].error is None
    assert ready[1].layout is None and ready[1].error == "dot failed: syntax error in line 3"
    # Neither on screen nor a whole view (which step keys move between): no geometry
    # built in the app's process (the canvas builds it when the view is shown).
    assert ready[2].layout is other_layout and ready[2].geometry is None and ready[2].error is None
    assert ready[3].geometry is not None
    for message in posted:
        controller.accept(message)
    assert controller.layouts == {good: layout, other: other_layout, whole: ready[3].layout}
    assert controller.layout_errors == {bad: "dot failed: syntax error in line 3"}
    assert controller.busy(), "the other layouts are still on their way"
    for key in [key for key in keys if key not in (good, bad, other, whole)]:
        service.callbacks[key](LayoutResult(key, Layout(), None, 0.0, "layered"))
        controller.accept(posted[-1])
    assert not controller.busy()
    prioritized = list(service.prioritized)
    controller.request(good)  # known: nothing to do
    assert service.prioritized == prioritized and len(service.submitted) == len(keys)


def test_steps_are_drawn_ahead_from_the_one_on_screen(mlp_trace):
    posted: list = []
    spawned: list = []
    controller = Controller(mlp_trace, lambda m: posted.append(m) or True, spawned.append, service=FakeService())
    controller.start()
    here = len(mlp_trace) // 2
    controller.draw(here, View.WHOLE, 0)  # the UI thread shows step ``here``
    (work,) = spawned
    work()  # the thread worker (here on this thread, after the UI's draw)
    drawn = [index for index, view, _ in controller._drawings if view is View.WHOLE]
    assert drawn == [here, *range(here + 1, len(mlp_trace)), *range(here)]
    assert not controller._running


def test_while_layouts_compute_only_the_next_steps_are_drawn_ahead(mlp_trace):
    drawn_while_busy: list[set[int]] = []

    class BusyService(FakeService):
        def busy(self) -> bool:  # busy for the first looks, then done
            drawn_while_busy.append({index for index, _, _ in controller._drawings})
            return len(drawn_while_busy) <= AHEAD_WHILE_LAYING_OUT + 5

    spawned: list = []
    controller = Controller(mlp_trace, lambda m: True, spawned.append, service=BusyService())
    controller.start()
    controller.draw(2, View.WHOLE, 0)
    spawned[0]()
    assert len(mlp_trace) > 3 + AHEAD_WHILE_LAYING_OUT
    assert drawn_while_busy[AHEAD_WHILE_LAYING_OUT + 4] == set(range(2, 3 + AHEAD_WHILE_LAYING_OUT))
    assert {index for index, _, _ in controller._drawings} == set(range(len(mlp_trace)))


def test_the_app_gets_the_union_of_every_distinct_graph(mlp_trace):
    """Through real worker processes: the layouts equal the service's union of the
    distinct drawings (no edge of a graph with the same nodes is lost)."""
    posted: list = []
    service = LayoutService(workers=1, engine="layered", trace=mlp_trace)
    controller = Controller(mlp_trace, lambda m: posted.append(m) or True, lambda work: work(), service=service)
    try:
        controller.start()
        assert service.wait(120)
    finally:
        controller.stop()
    ready = {m.key: m for m in posted if isinstance(m, LayoutReady)}
    assert set(ready) == set(_all_keys(mlp_trace))
    for key in [("joint", 0), ("backward", 0)]:
        expected = union_layout(union_members(mlp_trace, key), "layered")
        assert ready[key].error is None, ready[key].error
        assert ready[key].layout.boxes == expected.boxes
        assert ready[key].layout.edges == expected.edges

"""The viewer's controller: the caches (layouts, drawings, run results, failures)
and the layout worker that fills them.

Threads: the layout worker runs in a thread and hands every result back as a
message (:class:`~gradview.viewer.messages.LayoutReady`, ``StepFailed``),
which the app passes to :meth:`Controller.accept` on the UI thread. The only
state both threads touch (the queue of wanted layouts and the drawing cache)
lives behind one lock; ``layouts``, ``layout_errors``, ``run_results`` and
``failures`` are written on the UI thread only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from textual.message import Message

from gradview.runtime.pass_trace import PassTrace

from . import views
from .canvas import CanvasGeometry
from .formatting import lint_problem
from .layout import DotMissingError, Layout, union_layout
from .messages import LayoutReady, StepFailed
from .model import DrawGraph, View

__all__ = ["Controller", "layout_key"]

LayoutKey = tuple[str, Any]
_DRAWINGS_KEPT = 512


def layout_key(trace: PassTrace, index: int, view: View, dg: int) -> LayoutKey:
    """Which union layout draws ``view`` of step ``index``: one per graph of the
    whole view, one per DifferentiableGraph and view otherwise."""
    if view is View.WHOLE:
        return ("whole", trace[index].which)
    return (view.value, dg)


class Controller:
    """Owns the caches; ``post`` delivers worker messages to the app, ``spawn``
    runs a callable in a thread worker."""

    def __init__(self, trace: PassTrace, post: Callable[[Message], object], spawn: Callable[[Callable[[], None]], object]) -> None:
        self.trace = trace
        self._post = post
        self._spawn = spawn
        self.layouts: dict[LayoutKey, Layout] = {}
        self.layout_errors: dict[LayoutKey, str] = {}
        self.run_results: dict[int, Any] = {}
        self.failures: dict[int, str] = {}
        # Shared with the worker, under the lock.
        self._lock = threading.Lock()
        self._pending: list[LayoutKey] = []
        self._done: set[LayoutKey] = set()  # computed, maybe not yet accepted
        self._drawings: dict[tuple[int, View, int], DrawGraph] = {}
        self._undelivered = 0  # messages posted by the worker, not yet accepted
        self._running = False
        self._started = False
        self._zoom = 1.0
        self._stop = threading.Event()

    # -- drawings ------------------------------------------------------------------------
    def draw(self, index: int, view: View, dg: int) -> DrawGraph:
        """The drawing of one view of one step, cached (either thread may ask)."""
        key = (index, view, dg)
        with self._lock:
            graph = self._drawings.get(key)
        if graph is None:
            graph = views.draw_step(self.trace, index, view, dg)
            with self._lock:
                if len(self._drawings) > _DRAWINGS_KEPT:
                    self._drawings.clear()
                self._drawings[key] = graph
        return graph

    # -- layouts ---------------------------------------------------------------------------
    def set_zoom(self, zoom: float) -> None:
        """The canvas zoom the worker builds geometries for."""
        with self._lock:
            self._zoom = zoom

    def start(self) -> None:
        """Queue every layout (after the first paint: the worker competes with it)."""
        keys: list[LayoutKey] = []
        for step in self.trace:
            key = ("whole", step.which)
            if key not in keys:
                keys.append(key)
        for dg in range(views.differentiable_graph_count(self.trace)):
            keys += [(View.FORWARD.value, dg), (View.BACKWARD.value, dg), (View.JOINT.value, dg)]
        with self._lock:
            self._started = True
        for key in keys:
            self.request(key)
        self._wake()

    def request(self, key: LayoutKey) -> None:
        """Compute ``key``'s layout soon, unless it is known or queued."""
        if key in self.layouts or key in self.layout_errors:
            return
        with self._lock:
            if key in self._pending or key in self._done:
                return
            self._pending.append(key)
        self._wake()

    def _wake(self) -> None:
        with self._lock:
            if self._running or not self._started or not self._pending:
                return
            self._running = True
        self._spawn(self._work)

    def stop(self) -> None:
        """Let the worker end at its next step (the app is closing)."""
        self._stop.set()

    def busy(self) -> bool:
        """True while layouts are queued or their results are on their way."""
        with self._lock:
            return not self._started or self._running or bool(self._pending) or self._undelivered > 0

    def accept(self, message: Message) -> None:
        """A worker's message, on the UI thread: store what it carries."""
        if isinstance(message, LayoutReady):
            if message.layout is not None:
                self.layouts[message.key] = message.layout
            else:
                self.layout_errors[message.key] = message.error or "layout failed"
        elif isinstance(message, StepFailed):
            self.failures.setdefault(message.index, message.error)
        with self._lock:
            self._undelivered -= 1

    def _send(self, message: Message) -> None:
        with self._lock:
            self._undelivered += 1
        if not self._post(message):
            with self._lock:
                self._undelivered -= 1

    def _next(self) -> LayoutKey | None:
        with self._lock:
            return self._pending[0] if self._pending else None

    def _work(self) -> None:
        """The worker: queued layouts first; between them, when none is queued,
        draw the whole view of every step ahead of the user and lint its graph
        (a broken one is reported as failed)."""
        ahead = 0
        while not self._stop.is_set():
            key = self._next()
            if key is not None:
                self._send(self._layout(key))
                with self._lock:
                    self._pending.remove(key)
                    self._done.add(key)
                continue
            if ahead >= len(self.trace):
                with self._lock:
                    if not self._pending:
                        self._running = False
                        return
                continue
            self._draw_ahead(ahead)
            ahead += 1
        with self._lock:
            self._running = False

    def _layout(self, key: LayoutKey) -> LayoutReady:
        try:
            graphs = self._union_members(key)
            layout = union_layout(graphs) if graphs else Layout()
            with self._lock:
                zoom = self._zoom
            return LayoutReady(key, layout, None, CanvasGeometry.build(layout, zoom))
        except DotMissingError as exc:
            return LayoutReady(key, None, str(exc))
        except Exception as exc:  # noqa: BLE001 - shown in the canvas, never a crash
            return LayoutReady(key, None, f"layout failed: {type(exc).__name__}: {exc}")

    def _draw_ahead(self, index: int) -> None:
        step = self.trace[index]
        problem = lint_problem(step)
        if problem is not None:
            self._send(StepFailed(index, problem))
        try:
            self.draw(index, View.WHOLE, 0)
        except Exception as exc:  # noqa: BLE001 - shown as the step's failure
            self._send(StepFailed(index, f"cannot draw: {type(exc).__name__}: {exc}"))

    def _union_members(self, key: LayoutKey) -> list[DrawGraph]:
        kind, which_or_dg = key
        if kind == "whole":
            # A step that changed nothing shows its predecessor's graph again:
            # only the first step of the graph and the changing ones add to the union.
            members = []
            for step in self.trace:
                if step.which == which_or_dg and (step.changed or not members):
                    members.append(views.draw_step(self.trace, step.index, View.WHOLE, 0, ghosts=False))
            return members
        view = View(kind)
        members = []
        seen: set[tuple[int, ...]] = set()
        for step in self.trace:
            if views.view_unavailable_reason(self.trace, step.index, view, which_or_dg):
                continue
            graph = views.draw_step(self.trace, step.index, view, which_or_dg, ghosts=False)
            signature = tuple(sorted(graph.nodes))
            if signature not in seen:
                seen.add(signature)
                members.append(graph)
        return members

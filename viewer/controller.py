"""The viewer's controller: the caches (layouts, drawings, run results, failures)
and the workers that fill them.

Layouts run in worker processes (:class:`~gradview.viewer.layout_service.LayoutService`),
so a step key never waits for one. A thread worker packs the trace for them
(:meth:`LayoutService.prepare`, in a forked child where it can), hands them every wanted layout (the view on
screen first), then draws and lints the steps ahead of the user (from the
step on screen on, so the next step key finds its drawing made; only the
next few until the layouts are in, to leave the cores to the layout processes). Each result
comes back on a pool thread, which builds its canvas geometry (for the view on
screen and the whole views: the canvas builds the others when they are
shown) and posts a
:class:`~gradview.viewer.messages.LayoutReady`; the app passes every message
to :meth:`Controller.accept` on the UI thread.

Threads: the state the UI thread, the thread worker and the pool's threads
share (the wanted layouts, the counts of results on their way, the drawing
cache, the zoom) lives behind one lock; ``layouts``, ``layout_errors``,
``run_results`` and ``failures`` are written on the UI thread only.
"""

from __future__ import annotations

import bisect
import contextlib
import threading
from collections.abc import Callable
from typing import Any

from textual.message import Message

from gradview.runtime import PassTrace

from . import views
from .canvas import CanvasGeometry
from .formatting import lint_problem
from .layout import Layout
from .layout_service import LayoutResult, LayoutService
from .marks import base_marks
from .messages import LayoutReady, StepFailed
from .minimap import MinimapPicture
from .model import DrawGraph, Marks, View
from .ui_priority import step_aside
from .view_registry import DEFAULT_VIEW, VIEWS, view_spec

__all__ = ["Controller", "layout_key"]

LayoutKey = tuple[str, Any]
_DRAWINGS_KEPT = 512
AHEAD_WHILE_LAYING_OUT = 12  # steps after the one on screen drawn before the layouts are in


def layout_key(trace: PassTrace, index: int, view: View, dg: int) -> LayoutKey:
    """Which union layout draws ``view`` of step ``index``: one per graph of the
    whole view, one per DifferentiableGraph and view otherwise."""
    return (view.value, dg) if view_spec(view).differentiated else (view.value, trace[index].which)


class Controller:
    """Owns the caches and the layout service; ``post`` delivers results to the
    app (from any thread), ``spawn`` runs a callable in a thread worker."""

    def __init__(
        self,
        trace: PassTrace,
        post: Callable[[Message], object],
        spawn: Callable[[Callable[[], None]], object],
        service: LayoutService | None = None,
    ) -> None:
        self.trace = trace
        self._post = post
        self._spawn = spawn
        self.service = service if service is not None else LayoutService(trace=trace)
        self.layouts: dict[LayoutKey, Layout] = {}
        self.layout_errors: dict[LayoutKey, str] = {}
        self.run_results: dict[int, Any] = {}
        self.failures: dict[int, str] = {}
        # Called by the draw-ahead thread with each whole-view drawing and its
        # layout key: the app makes the picture it will show (stubs) ahead too.
        self.make_ahead: Callable[[DrawGraph, LayoutKey], None] | None = None
        # Shared between threads, under the lock.
        self._lock = threading.Lock()
        self._pending: list[LayoutKey] = []  # wanted, not yet handed to the service
        self._submitted: set[LayoutKey] = set()
        self._wanted: LayoutKey | None = None  # the view on screen
        self._outstanding = 0  # handed to the service, result not yet posted
        self._undelivered = 0  # messages posted, not yet accepted
        self._drawings: dict[tuple[int, View, int], DrawGraph] = {}
        self._marks: dict[tuple[int, View, int], Marks] = {}  # without a selection (marks.base_marks)
        # Steps not yet drawn and linted ahead of the user, in order; the next
        # one drawn is the first at or after the step the UI last drew.
        self._ahead = list(range(len(trace)))
        self._pictures_ahead: list[int] = []  # drawn while layouts computed, picture still to make (sorted)
        self._cursor = 0
        self._thread: threading.Thread | None = None  # the thread worker, while it runs
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
            if threading.current_thread() is not self._thread:
                self._cursor = index  # the user is here: draw the steps after it first
        if graph is None:
            graph = views.draw_step(self.trace, index, view, dg)
            with self._lock:
                if len(self._drawings) > _DRAWINGS_KEPT:
                    self._drawings.clear()
                self._drawings[key] = graph
        return graph

    def marks(self, index: int, view: View, dg: int) -> Marks:
        """The marks of one view of one step without a selection, cached (a
        step key at 5,000 ops spent about 50 ms on them); never marked further
        by callers (they mark a :meth:`Marks.copy`)."""
        key = (index, view, dg)
        with self._lock:
            marks = self._marks.get(key)
        if marks is None:
            marks = base_marks(self.trace, index, view, dg, drawing=self.draw(index, view, dg))
            with self._lock:
                if len(self._marks) > _DRAWINGS_KEPT:
                    self._marks.clear()
                self._marks[key] = marks
        return marks

    # -- layouts ---------------------------------------------------------------------------
    def set_zoom(self, zoom: float) -> None:
        """The canvas zoom the geometries are built for."""
        with self._lock:
            self._zoom = zoom

    def view_keys(self) -> list[LayoutKey]:
        """The plain layout key of every view: the whole graph of each graph, then
        forward, backward and joint of each DifferentiableGraph."""
        keys = list(dict.fromkeys((DEFAULT_VIEW.value, step.which) for step in self.trace))
        for dg in range(views.differentiable_graph_count(self.trace)):
            keys += [(spec.view.value, dg) for spec in VIEWS if spec.differentiated]
        return keys

    def start(self, plain: bool = True) -> None:
        """Start the workers (after the first paint: packing the trace competes
        with it); with ``plain``, want every plain layout (else only those asked for)."""
        keys = self.view_keys() if plain else []
        with self._lock:
            self._started = True
            for key in keys:
                if key not in self._submitted and key not in self._pending:
                    self._pending.append(key)
        self._wake()

    def request(self, key: LayoutKey) -> None:
        """The view on screen needs ``key``: compute it next, unless it is known."""
        if key in self.layouts or key in self.layout_errors:
            return
        with self._lock:
            self._wanted = key
            submitted = key in self._submitted
            if not submitted:
                if key in self._pending:
                    self._pending.remove(key)
                self._pending.insert(0, key)
        if submitted:
            self.service.prioritize(key)  # waiting in the service: next; running or done: as is
        else:
            self._wake()

    def request_custom(self, key: LayoutKey, build: Callable[[], DrawGraph]) -> None:
        """Lay out a drawing the caller builds (a collapsed or focused view), once:
        ``build`` runs in a thread worker, the layout comes back as a LayoutReady."""
        if key in self.layouts or key in self.layout_errors:
            return
        with self._lock:
            if key in self._submitted:
                return
            self._submitted.add(key)
            self._outstanding += 1

        def work() -> None:
            try:
                self.service.submit(key, build(), callback=self._layout_done, first=True)
            except Exception as exc:  # shown in the view bar, never a crash
                self._send(LayoutReady(key, None, f"layout failed: {type(exc).__name__}: {exc}"), outstanding=1)

        self._spawn(work)

    def request_custom_later(self, jobs: list[tuple[LayoutKey, Callable[[], DrawGraph]]]) -> None:
        """Lay out drawings the caller builds, one after another in one thread
        worker, behind what the screen asks for: a key the screen asked for
        meanwhile (:meth:`request_custom`) is not built twice."""

        def work() -> None:
            for key, build in jobs:
                if self._stop.is_set():
                    return
                with self._lock:
                    if key in self._submitted or key in self.layouts or key in self.layout_errors:
                        continue
                    self._submitted.add(key)
                    self._outstanding += 1
                try:
                    self.service.submit(key, build(), callback=self._layout_done, first=False)
                except Exception as exc:  # shown in the view bar, never a crash
                    self._send(LayoutReady(key, None, f"layout failed: {type(exc).__name__}: {exc}"), outstanding=1)

        if jobs:
            self._spawn(work)

    def _wake(self) -> None:
        with self._lock:
            if self._running or not self._started or self._stop.is_set():
                return
            if not self._pending and not self._ahead:
                return
            self._running = True
        self._spawn(self._work)

    def stop(self) -> None:
        """The app is closing: end the thread worker at its next step, stop and reap
        the layout processes (without it, exit waits for the running layouts)."""
        self._stop.set()
        self.service.shutdown()

    def busy(self) -> bool:
        """True until every layout wanted so far is computed and its message accepted."""
        with self._lock:
            return (
                not self._started
                or self._running
                or bool(self._pending)
                or self._outstanding > 0
                or self._undelivered > 0
            )

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

    def _send(self, message: Message, outstanding: int = 0) -> None:
        with self._lock:
            self._undelivered += 1
            self._outstanding -= outstanding
        if not self._post(message):
            with self._lock:
                self._undelivered -= 1

    def _next(self) -> tuple[LayoutKey, bool] | None:
        with self._lock:
            if not self._pending:
                return None
            key = self._pending.pop(0)
            self._submitted.add(key)
            self._outstanding += 1
            return key, key == self._wanted

    def _work(self) -> None:
        """The thread worker: pack the trace for the layout processes, hand them
        the wanted layouts; when none is left, draw the whole view of every step
        ahead of the user and lint its graph (a broken one is reported as failed)."""
        self._thread = threading.current_thread()
        try:
            self._work_loop()
        finally:
            self._thread = None

    def _work_loop(self) -> None:
        # Packing waits seconds for a child process at 5,000 ops: meanwhile
        # this thread draws the steps after the one on screen.
        threading.Thread(target=self.service.prepare, name="gradview-pack", daemon=True).start()
        while not self._stop.is_set():
            prepared = self.service.is_prepared()
            job = self._next() if prepared else None
            if job is not None:
                key, first = job
                try:
                    self.service.submit_view(key, callback=self._layout_done, first=first)
                except RuntimeError:  # shut down meanwhile: the app is closing
                    with self._lock:
                        self._outstanding -= 1
                continue
            laying_out = not prepared or self.service.busy()
            with self._lock:
                if not self._ahead and not self._pending and prepared and not self._pictures_ahead:
                    self._running = False
                    return
                index = self._next_ahead(laying_out)
                picture = _nearest(self._pictures_ahead, self._cursor) if index is None and not laying_out else None
            if index is not None:
                self._draw_ahead(index, picture_now=not laying_out)
            elif picture is not None:
                self._make_picture(picture)
            else:
                self._stop.wait(0.05)
        with self._lock:
            self._running = False

    def _next_ahead(self, laying_out: bool) -> int | None:
        """The next step to draw ahead (the lock held): the first at or after
        the one on screen; while layouts compute, only one of the next few
        (the workers need the cores: at 5,000 ops drawing every step is 20 s of CPU)."""
        if not self._ahead:
            return None
        position = bisect.bisect_left(self._ahead, self._cursor)
        position = position if position < len(self._ahead) else 0
        near = 0 <= self._ahead[position] - self._cursor <= AHEAD_WHILE_LAYING_OUT
        return self._ahead.pop(position) if near or not laying_out else None

    def _make_picture(self, index: int) -> None:
        step_aside()
        if self.make_ahead is not None:
            # What fails here fails again on the UI thread when the step is shown, and is reported there.
            with contextlib.suppress(Exception):
                self.make_ahead(self.draw(index, DEFAULT_VIEW, 0), layout_key(self.trace, index, DEFAULT_VIEW, 0))

    def _layout_done(self, result: LayoutResult) -> None:
        """On a pool thread: the result as a message, with the canvas geometry
        built here for the view on screen and the whole views (a step key
        moves between those). Building one is pure Python in the app's
        process, proportional to the edges' length: at 5,000 ops 1 to 2 s per
        whole view but about 45 s for the joint view, which no step key should
        compete with unless the view is asked for (the canvas builds it then)."""
        message = LayoutReady(result.key, None, result.error or "layout failed")
        if result.layout is not None:
            with self._lock:
                zoom = self._zoom
                wanted = result.key == self._wanted or result.key[0] == DEFAULT_VIEW.value
            try:
                geometry = CanvasGeometry.build(result.layout, zoom) if wanted else None
                minimap = MinimapPicture.build(result.layout) if wanted else None
                message = LayoutReady(result.key, result.layout, None, geometry, minimap)
            except Exception as exc:  # shown in the canvas, never a crash
                message = LayoutReady(result.key, None, f"layout failed: {type(exc).__name__}: {exc}")
        self._send(message, outstanding=1)

    def _draw_ahead(self, index: int, picture_now: bool = True) -> None:
        """Draw step ``index`` (and lint it) before the user gets there; its
        picture too (stubs, the edge set) unless layouts are being computed:
        then the pictures wait (``_pictures_ahead``), so the drawings stay ahead of the user."""
        step_aside()  # a step key on the UI thread goes first
        step = self.trace[index]
        problem = lint_problem(step)
        if problem is not None:
            self._send(StepFailed(index, problem))
        try:
            drawing = self.draw(index, DEFAULT_VIEW, 0)
            self.marks(index, DEFAULT_VIEW, 0)
            if self.make_ahead is not None and picture_now:
                self.make_ahead(drawing, layout_key(self.trace, index, DEFAULT_VIEW, 0))
            elif self.make_ahead is not None:
                with self._lock:
                    bisect.insort(self._pictures_ahead, index)
        except Exception as exc:  # shown as the step's failure
            self._send(StepFailed(index, f"cannot draw: {type(exc).__name__}: {exc}"))


def _nearest(indices: list[int], cursor: int) -> int | None:
    """Remove and return the first of the sorted ``indices`` at or after ``cursor`` (else the first)."""
    if not indices:
        return None
    position = bisect.bisect_left(indices, cursor)
    return indices.pop(position if position < len(indices) else 0)

"""Union layouts in worker processes, so a step key never waits for one.

A view's layout is the layout of the union of its steps' drawings
(:func:`view_union` draws each distinct graph of the view once, straight into
one union); a pool of *spawned* worker processes draws it, runs ``dot`` or
the layered layout and sends the :class:`Layout` back. Nothing here imports
Textual.

    service = LayoutService(trace=session.trace)   # workers start on first submit
    service.prepare()                              # packs the trace: call it in a thread worker
    service.submit_view(("whole", which), callback=on_done, first=True)  # the view on screen
    service.submit_view(("joint", 0))              # on_done runs in a background thread:
    ...                                            # hand it on with call_from_thread,
    service.poll()                                 # or poll from a timer
    service.shutdown()                             # cancels, stops and reaps every worker

Each worker gets a copy of the trace's steps once, when it starts: drawing
the views is pure Python (at 5,000 ops about 6 s of CPU for the seven views,
as much as laying them out) that would otherwise hold the app's GIL. The
steps are pickled in a forked child where the system has ``fork``, so the
app's process does not pickle them either (3.5 s at 5,000 ops). Workers
freeze the trace out of the garbage collector: its full collections were
half of a job's time. ``submit(key, graphs)`` lays out drawings made by the caller.

Jobs wait in the service's own queue, at most one per worker is handed to the
pool at a time, so :meth:`LayoutService.prioritize` (the view on screen first)
and :meth:`LayoutService.cancel` work on everything not yet running.
"""

from __future__ import annotations

import contextlib
import gc
import io
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import resource_tracker
from typing import Any

from .layout import DotMissingError, Layout, LayoutError, box_size, lay_out_sized, union_graph
from .model import Cluster, DrawEdge, DrawGraph, DrawNode, View

__all__ = [
    "LayoutResult",
    "LayoutService",
    "union_members",
    "view_union",
    "shown_steps",
    "layout_in_process",
    "default_workers",
]

WORKER_NICENESS = 10
_WORKER_GC_THRESHOLDS = (100_000, 50, 100)
Callback = Callable[["LayoutResult"], object]


@dataclass(frozen=True)
class LayoutResult:
    """One finished job: a layout, or a one-line error (dot missing, dot failed, a bug)."""

    key: Any
    layout: Layout | None
    error: str | None
    seconds: float  # in the worker
    engine: str  # the engine asked for
    cpu_seconds: float = 0.0  # the worker's CPU time (the wall time grows with the machine's load)


def default_workers() -> int:
    """One worker per core, at most four: workers run at a lower priority
    (``nice``), so the app's process still gets a core when a key is pressed."""
    return max(1, min(4, os.cpu_count() or 1))


# -- what a job carries ------------------------------------------------------------------------
# A union of 60,000 nodes is 14 MB as pickled DrawGraph objects; as flat tuples
# of what a layout reads (ids, box sizes, clusters, edges) it is a fraction of
# that and crosses the process boundary several times faster.
_Packed = tuple[
    list[tuple[int, float, float, str | None]], list[tuple[int, int, int]], list[tuple[str, str, str | None]], bool
]


def _pack(union: DrawGraph) -> _Packed:
    nodes = [(i, *box_size(n.label), n.cluster) for i, n in union.nodes.items()]
    edges = [(e.source, e.target, e.value_id) for e in union.edges]
    clusters = [(c.key, c.title, c.parent) for c in union.clusters.values()]
    return nodes, edges, clusters, union.compact_ranks


def _unpack(packed: _Packed) -> tuple[DrawGraph, dict[int, tuple[float, float]]]:
    nodes, edges, clusters, compact_ranks = packed
    union = DrawGraph(compact_ranks=compact_ranks)
    sizes = {}
    for node_id, width, height, cluster in nodes:
        # A label of the box's size: layouts read sizes from ``sizes`` only.
        union.nodes[node_id] = DrawNode(node_id, "", cluster=cluster)
        sizes[node_id] = (width, height)
    union.edges = [DrawEdge(s, t, v) for s, t, v in edges]
    union.clusters = {key: Cluster(key, title, parent) for key, title, parent in clusters}
    return union, sizes


_TRACE: Any = None  # in a worker: its copy of the trace, for view jobs


def _work(packed: _Packed | None, engine: str, view: Any = None) -> tuple[Layout | None, str | None, float, float]:
    """In a worker: lay the union out (``packed``, or the union of the drawings
    of layout key ``view`` of the worker's trace); errors come back as one line,
    never raised; then the wall and CPU seconds it took."""
    start, cpu = time.perf_counter(), time.process_time()
    layout, error = _attempt(packed, engine, view)
    return layout, error, time.perf_counter() - start, time.process_time() - cpu


def _attempt(packed: _Packed | None, engine: str, view: Any) -> tuple[Layout | None, str | None]:
    try:
        if packed is None:
            if _TRACE is None:
                raise RuntimeError("this worker has no trace to draw views from")
            union = view_union(_TRACE, view)
            sizes = {node_id: box_size(node.label) for node_id, node in union.nodes.items()}
        else:
            union, sizes = _unpack(packed)
        return lay_out_sized(union, sizes, engine), None
    except (DotMissingError, LayoutError) as exc:
        return None, str(exc)
    except Exception as exc:  # reported in the canvas, never a crash
        return None, f"layout failed: {type(exc).__name__}: {exc}"


def _worker_init(steps: bytes | None) -> None:
    # Terminating a worker raises SystemExit in it, so subprocess.run kills a
    # running dot on the way out instead of leaving it behind.
    signal.signal(signal.SIGTERM, _exit_now)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the app's to handle
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(WORKER_NICENESS)  # a key press in the app comes before a layout
    global _TRACE
    # A worker holds the trace (millions of records) for its whole life and
    # allocates drawings and layouts by the hundred thousand: with the
    # collector's defaults, full collections rescanning the trace took half
    # of a 5,000-op job's CPU time. The trace is frozen out of the collector
    # and the thresholds raised (the process is ours alone).
    gc.disable()
    if steps is not None:
        _TRACE = _unpack_trace(steps)
    gc.freeze()
    gc.set_threshold(*_WORKER_GC_THRESHOLDS)
    gc.enable()


def _pack_trace(trace: Any, pause: bool = True) -> bytes | None:
    """The trace's steps as bytes a worker rebuilds the trace from; None when
    they cannot be pickled (then views are drawn in the caller's process).

    One step per ``dump`` of one pickler: records shared between steps are
    written once (the memo lives across dumps), and the app's other threads
    get the GIL between steps instead of waiting seconds for one big dump."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        pickler.dump(len(trace.steps))
        for step in trace.steps:
            pickler.dump(step)
            if pause:
                time.sleep(0)  # let the UI thread run
    except (RecursionError, pickle.PicklingError, TypeError, AttributeError):
        return None
    return out.getvalue()


def _pack_trace_apart(trace: Any) -> bytes | None:
    """:func:`_pack_trace` in a forked child, so the app's process never holds
    its GIL for it (at 5,000 ops 3.5 s of pickling, in slices of up to a
    second: a step key waited that long). The child has a copy-on-write view
    of the trace, pickles it into a pipe and leaves with ``os._exit``: it runs
    no other code of the app's, takes no lock and flushes nothing. Falls back
    to packing here (between steps the GIL is free) where there is no ``fork``
    (Windows) or where it is unsafe with the system's libraries (macOS), or
    when the child fails."""
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return _pack_trace(trace)
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return _pack_trace(trace)
    if pid == 0:  # the child: pickle, write, leave
        status = 1
        try:
            gc.disable()  # no finalizer of the app's runs here
            os.close(read_end)
            packed = _pack_trace(trace, pause=False)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(b"" if packed is None else packed)
            status = 0 if packed is not None else 2
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        packed = pipe.read()
    _, wait_status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(wait_status)
    if code == 2:
        return None  # the trace cannot be pickled
    return packed if code == 0 else _pack_trace(trace)


def _unpack_trace(steps: bytes) -> Any:
    from gradview.runtime import PassTrace

    unpickler = pickle.Unpickler(io.BytesIO(steps))
    trace = PassTrace()
    trace.steps.extend(unpickler.load() for _ in range(unpickler.load()))
    return trace


def _manager_of(pool: ProcessPoolExecutor) -> tuple[threading.Thread | None, Any]:
    """The pool's manager thread and the write end of its result pipe (internals of
    concurrent.futures, looked up with getattr: missing ones are None)."""
    queue = getattr(pool, "_result_queue", None)
    return getattr(pool, "_executor_manager_thread", None), getattr(queue, "_writer", None)


def _end_manager_thread(manager: threading.Thread | None, writer: Any, timeout: float) -> None:
    """After the pool's processes are gone: let its manager thread end.

    A worker stopped in the middle of sending a result (a big layout is
    megabytes) leaves the pool's manager thread waiting for the rest of the
    message. This process holds the write end of that pipe too, so the read
    never sees its end, and the interpreter joins the thread at exit: the
    app would hang on quit. Closing our write end (no worker writes any more)
    ends the read; the thread then finds the pool broken and stops."""
    if manager is None or not manager.is_alive():
        return
    if writer is not None:
        with contextlib.suppress(OSError):
            writer.close()
    manager.join(timeout)


def _exit_now(_signum: int, _frame: Any) -> None:
    # The pool catches what a job raises and goes on waiting for work: the
    # next SIGTERM, with the default action, ends the process.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise SystemExit(0)


def layout_in_process(graphs: Sequence[DrawGraph], engine: str = "auto") -> LayoutResult:
    """What a worker would compute for ``graphs``, here (tests compare the two)."""
    layout, error, seconds, cpu = _work(_pack(union_graph(graphs)), engine)
    return LayoutResult(None, layout, error, seconds, engine, cpu)


# -- the service ---------------------------------------------------------------------------------
@dataclass
class _Job:
    key: Any
    packed: _Packed | None  # None: draw the view ``key`` from the workers' trace
    engine: str
    callback: Callback | None
    future: Future[LayoutResult]


class LayoutService:
    """A pool of spawned worker processes computing union layouts.

    Thread-safe: submit from any thread; callbacks run in a background thread
    of this process (the pool's), so a Textual app hands them on with
    ``call_from_thread`` or posts a message (and never calls
    :meth:`shutdown` from one). Results also stay readable through
    :meth:`result` and :meth:`poll`. Call :meth:`shutdown` when the app
    closes: at interpreter exit the pool would otherwise wait for the
    running layouts.
    """

    def __init__(self, workers: int | None = None, engine: str = "auto", trace: Any = None) -> None:
        self.workers = workers or default_workers()
        self.engine = engine
        self.trace = trace
        self._steps: bytes | None = None  # the trace for the workers, packed when they start
        self._trace_packed = False
        self._packed_event = threading.Event()
        self._lock = threading.RLock()
        self._retired: list[Any] = []  # processes of pools that broke, reaped at shutdown
        self._retired_pools: list[ProcessPoolExecutor] = []
        self._managers: dict[ProcessPoolExecutor, tuple[threading.Thread | None, Any]] = {}  # pool -> _manager_of(pool)
        self._queue: list[_Job] = []  # waiting, first is next
        self._running: dict[Any, _Job] = {}
        self._results: dict[Any, LayoutResult] = {}
        self._unpolled: list[LayoutResult] = []
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False
        # Spawning a worker starts multiprocessing's resource tracker, which passes on
        # sys.stderr's file descriptor: under a running Textual app stderr is captured
        # and has none ("bad value(s) in fds_to_keep"), so start it now, before the app runs.
        with contextlib.suppress(OSError, ValueError):
            resource_tracker.ensure_running()

    # -- jobs ------------------------------------------------------------------------------------
    def submit(
        self,
        key: Any,
        graphs: Sequence[DrawGraph] | DrawGraph,
        engine: str | None = None,
        callback: Callback | None = None,
        first: bool = False,
    ) -> Future[LayoutResult]:
        """Queue the union layout of ``graphs`` (the members of one view, or the
        union itself) under ``key``; ``first`` puts it ahead of the queue.
        A key already queued or running keeps its job (its future is returned);
        a finished one is computed again (the caller caches layouts)."""
        union = graphs if isinstance(graphs, DrawGraph) else union_graph(graphs)
        self._prepare()
        return self._submit(key, _pack(union), engine, callback, first)

    def submit_view(
        self, key: tuple[str, Any], engine: str | None = None, callback: Callback | None = None, first: bool = False
    ) -> Future[LayoutResult]:
        """Queue the layout of the view ``key`` of the service's trace (the
        app's layout keys: ``("whole", which)``, ``(view name, dg)``); a worker
        draws the view's steps itself. Where the trace cannot be sent to
        workers, the drawings are made here first."""
        if self.trace is None:
            raise ValueError("submit_view needs a LayoutService(trace=...)")
        self._prepare()
        if self._steps is None:
            return self.submit(key, view_union(self.trace, key), engine, callback, first)
        return self._submit(key, None, engine, callback, first)

    def prepare(self) -> None:
        """Pack the trace for the workers (once; seconds at 5,000 ops, in
        small slices that leave the GIL to other threads). The first submit
        does it if nobody did: call it from a worker thread to keep it off the UI thread."""
        with self._lock:
            if self.trace is None or self._trace_packed:
                return
            self._trace_packed = True
        try:
            self._steps = _pack_trace_apart(self.trace)
        finally:
            self._packed_event.set()

    def is_prepared(self) -> bool:
        """True once the trace is packed for the workers (or there is none)."""
        return self.trace is None or self._packed_event.is_set()

    def _prepare(self) -> None:
        self.prepare()
        if self.trace is not None:
            self._packed_event.wait()  # another thread may be packing it

    def _submit(
        self, key: Any, packed: _Packed | None, engine: str | None, callback: Callback | None, first: bool
    ) -> Future[LayoutResult]:
        with self._lock:
            if self._closed:
                raise RuntimeError("the layout service is shut down")
            for job in [*self._queue, *self._running.values()]:
                if job.key == key:
                    if first:
                        self._move_first(key)
                    return job.future
            future: Future[LayoutResult] = Future()
            job = _Job(key, packed, engine or self.engine, callback, future)
            if first:
                self._queue.insert(0, job)
            else:
                self._queue.append(job)
            taken = self._take()
        self._hand_over(taken)
        return future

    def prioritize(self, key: Any) -> bool:
        """Run ``key`` next if it is waiting (the view on screen); False if not waiting."""
        with self._lock:
            return self._move_first(key)

    def cancel(self, key: Any) -> bool:
        """Drop ``key`` if it has not started; a running job finishes (its result is kept)."""
        with self._lock:
            for position, job in enumerate(self._queue):
                if job.key == key:
                    del self._queue[position]
                    job.future.cancel()
                    return True
        return False

    def result(self, key: Any) -> LayoutResult | None:
        """The finished result for ``key``, or None while waiting, running or unknown."""
        with self._lock:
            return self._results.get(key)

    def poll(self) -> list[LayoutResult]:
        """Results finished since the previous poll, in the order they finished."""
        with self._lock:
            done, self._unpolled = self._unpolled, []
        return done

    def pending(self) -> list[Any]:
        """Keys running or waiting, running ones first."""
        with self._lock:
            return [*self._running, *(job.key for job in self._queue)]

    def busy(self) -> bool:
        with self._lock:
            return bool(self._queue or self._running)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no job is waiting or running (tests, scripts, benchmarks); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.busy():
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    # -- shutting down --------------------------------------------------------------------------
    def shutdown(self, timeout: float = 2.0) -> None:
        """Cancel waiting jobs, stop the workers (a running dot with them) and
        reap them: no process this service started outlives this call."""
        with self._lock:
            self._closed = True
            queued, self._queue = self._queue, []
            executor, self._executor = self._executor, None
            running = list(self._running.values())
            self._running.clear()
        for job in queued + running:
            job.future.cancel()
        # The pool's own shutdown waits for running jobs (a dot may take
        # minutes): its processes are terminated instead, then joined.
        with self._lock:
            processes = list(self._retired)
            pools = [*self._retired_pools, executor] if executor is not None else list(self._retired_pools)
            # The pools' own shutdown forgets these: keep them first.
            managers = [self._managers.get(pool) or _manager_of(pool) for pool in pools]
        if executor is not None:
            started = getattr(executor, "_processes", None) or {}
            executor.shutdown(wait=False, cancel_futures=True)  # waits for a worker being started
            processes += list(started.values())
        for process in processes:
            if process.is_alive():
                process.terminate()  # an idle worker exits; a busy one stops its job (and dot)
        for process in processes:
            process.join(0.2)
            if process.is_alive():
                process.terminate()  # the job stopped: now the default action ends it
        deadline = time.monotonic() + timeout
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
        for manager, writer in managers:
            _end_manager_thread(manager, writer, timeout)
        if executor is not None:
            executor.shutdown(wait=True)

    def __enter__(self) -> LayoutService:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.shutdown()

    # -- inside (the lock held) ---------------------------------------------------------------------
    def _move_first(self, key: Any) -> bool:
        for position, job in enumerate(self._queue):
            if job.key == key:
                self._queue.insert(0, self._queue.pop(position))
                return True
        return False

    def _take(self) -> list[_Job]:
        """The waiting jobs free workers can take now, marked running (the lock
        held); the caller hands them over with :meth:`_hand_over` once it has
        released the lock."""
        taken = []
        while self._queue and len(self._running) < self.workers and not self._closed:
            job = self._queue.pop(0)
            self._running[job.key] = job
            taken.append(job)
        return taken

    def _hand_over(self, jobs: list[_Job]) -> None:
        """Give ``jobs`` to the pool, without the lock: a submit may start a
        worker process, and starting one waits until the new process has read
        the packed trace (a second or more at 5,000 ops). Under the lock that
        wait blocked every call here, among them the UI thread's prioritize on
        a step key (2.4 s measured)."""
        for job in jobs:
            with self._lock:
                if self._closed or self._running.get(job.key) is not job:
                    continue  # shut down meanwhile (its future is cancelled)
                if self._executor is None:
                    self._executor = ProcessPoolExecutor(
                        self.workers,
                        mp_context=multiprocessing.get_context("spawn"),
                        initializer=_worker_init,
                        initargs=(self._steps,),
                    )
                executor = self._executor
                packed, job.packed = job.packed, None  # the pool has it now
            try:
                inner = executor.submit(_work, packed, job.engine, job.key)
            except RuntimeError as exc:  # BrokenProcessPool (a worker died or failed to start), or shut down
                # This job fails with the reason; the next one gets a fresh pool.
                with self._lock:
                    if self._executor is executor:
                        self._retire(executor)
                        self._executor = None
                inner = Future()
                inner.set_exception(exc)
            else:
                with self._lock:
                    self._managers.setdefault(executor, _manager_of(executor))
            inner.add_done_callback(lambda done, job=job: self._finished(job, done))

    def _retire(self, executor: ProcessPoolExecutor) -> None:
        """(the lock held) A broken pool: its processes are reaped at shutdown."""
        self._retired += list((getattr(executor, "_processes", None) or {}).values())
        self._retired_pools.append(executor)
        executor.shutdown(wait=False, cancel_futures=True)

    def _finished(self, job: _Job, inner: Future[Any]) -> None:
        try:
            layout, error, seconds, cpu = inner.result()
        except CancelledError:
            return
        except BaseException as exc:  # a worker died or was stopped (SystemExit): say so
            layout, error, seconds, cpu = None, f"layout worker failed: {type(exc).__name__}: {exc}", 0.0, 0.0
        result = LayoutResult(job.key, layout, error, seconds, job.engine, cpu)
        with self._lock:
            if self._running.get(job.key) is not job:
                return  # shut down meanwhile
            del self._running[job.key]
            self._results[job.key] = result
            self._unpolled.append(result)
            taken = self._take()
        self._hand_over(taken)
        if not job.future.done():
            job.future.set_result(result)
        if job.callback is not None:
            job.callback(result)


# -- what each view's union is made of -----------------------------------------------------------
def union_members(trace: Any, key: tuple[str, Any]) -> list[DrawGraph]:
    """The drawings whose union is the layout ``key`` (``("whole", which)`` or
    ``(view name, dg)``, the app's layout keys): each distinct graph once
    (:func:`shown_steps`)."""
    from . import views  # the drawing code; imported late: workers never need it

    return [views.draw_step(trace, index, view, dg, ghosts=False) for index, view, dg in shown_steps(trace, key)]


def view_union(trace: Any, key: tuple[str, Any]) -> DrawGraph:
    """``union_graph(union_members(trace, key))`` for a layout, drawn in one go
    (:func:`gradview.viewer.views.draw_union`: no tooltips, no arrow labels):
    at 5,000 ops the joint view's 13 drawings of up to 60,000 boxes took 4 s
    one by one and take under 1 s so."""
    from . import views

    return views.draw_union(trace, shown_steps(trace, key))


def shown_steps(trace: Any, key: tuple[str, Any]) -> list[tuple[int, View, int]]:
    """(step index, view, DifferentiableGraph) of each distinct drawing of layout ``key``.

    A step that changed nothing shows the same graph as the previous step of
    its graph, so a view's drawing at step i depends only on the latest
    changing step (or the first) of each graph it shows: one drawing per
    distinct combination, instead of one per step (at 5,000 ops 21 instead of
    81 drawings of up to 60,000 nodes each)."""
    from .view_steps import view_steps

    kind, which_or_dg = key
    representative: dict[int, int] = {}  # step index -> latest changing step of its graph
    latest: dict[Any, int] = {}
    for step in trace:
        if step.changed or step.which not in latest:
            latest[step.which] = step.index
        representative[step.index] = latest[step.which]
    if kind == "whole":
        return [
            (step.index, View.WHOLE, 0)
            for step in trace
            if step.which == which_or_dg and representative[step.index] == step.index
        ]
    view = View(kind)
    shown_list = []
    seen: set[tuple[int, ...]] = set()
    for step in trace:
        shown = tuple(representative[s.index] for s in view_steps(trace, step.index, view, which_or_dg))
        if shown and shown not in seen:
            seen.add(shown)
            shown_list.append((step.index, view, which_or_dg))
    return shown_list

"""The layout service: worker processes give the layouts the app's process would, and leave nothing behind."""

from __future__ import annotations

import multiprocessing
import shutil
import threading
import time

import pytest

from gradview.runtime import GraphName
from gradview.viewer import views
from gradview.viewer.layout import box_size, lay_out_sized, union_graph, union_layout
from gradview.viewer.layout_service import (
    LayoutService,
    layout_in_process,
    union_members,
    view_union,
)
from gradview.viewer.model import View

from .graphs import exclusions_trace, loop_and_if_trace
from .graphs_for_tests import evolve, random_dag

ENGINES = ["layered", pytest.param("dot", marks=pytest.mark.skipif(not shutil.which("dot"), reason="no dot"))]


def _same(a, b) -> None:
    assert a.boxes == b.boxes
    assert a.edges == b.edges
    assert a.clusters == b.clusters
    assert (a.width, a.height, a.engine) == (b.width, b.height, b.engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_results_equal_the_in_process_layout(engine):
    first = random_dag(60, seed=3, cluster_every=7)
    graphs = [first, evolve(first)]
    with LayoutService(workers=2) as service:
        future = service.submit("k", graphs, engine=engine)
        result = future.result(timeout=60)
    assert result.error is None and result.key == "k"
    _same(result.layout, union_layout(graphs, engine))
    _same(layout_in_process(graphs, engine).layout, result.layout)


def test_callback_poll_and_result():
    seen = []
    done = threading.Event()
    graphs = {name: [random_dag(20 + i, seed=i)] for i, name in enumerate("abc")}
    with LayoutService(workers=1, engine="layered") as service:
        for name, members in graphs.items():
            service.submit(name, members, callback=lambda r: (seen.append(r.key), done.set()))
        assert service.wait(60)
        polled = service.poll()
        assert [r.key for r in polled] == ["a", "b", "c"]  # one worker: in order
        assert service.poll() == []  # drained
        assert seen == ["a", "b", "c"]
        _same(service.result("b").layout, union_layout(graphs["b"], "layered"))
        assert service.result("zzz") is None and service.pending() == [] and not service.busy()


def test_prioritize_and_cancel_reorder_the_waiting_jobs():
    with LayoutService(workers=1, engine="layered") as service:
        service.submit("big", [random_dag(1500, seed=1)])  # keeps the one worker busy
        for name in "xyz":
            service.submit(name, [random_dag(10, seed=2)])
        assert service.pending() == ["big", "x", "y", "z"]
        assert service.prioritize("z") and not service.prioritize("nope")
        assert service.cancel("x") and not service.cancel("x")
        assert service.pending() == ["big", "z", "y"]
        again = service.submit("y", [random_dag(10, seed=2)], first=True)
        assert service.pending() == ["big", "y", "z"]
        assert again.result(timeout=60).key == "y"
        assert service.wait(60)
        assert [r.key for r in service.poll()] == ["big", "y", "z"]


def test_an_error_comes_back_as_one_line():
    with LayoutService(workers=1) as service:
        result = service.submit("bad", [random_dag(5)], engine="nonsense").result(timeout=60)
    assert result.layout is None
    assert result.error == "layout failed: ValueError: unknown layout engine 'nonsense' (use auto, dot or layered)"


def test_shutdown_leaves_no_child_processes():
    before = {p.pid for p in multiprocessing.active_children()}
    service = LayoutService(workers=2, engine="layered")
    futures = [service.submit(i, [random_dag(2000, seed=i)]) for i in range(4)]
    assert {p.pid for p in multiprocessing.active_children()} - before  # workers are running
    service.shutdown()
    # Reaped: on a loaded machine a terminated worker may take a moment to exit, so wait
    # (bounded) for the processes to be gone rather than sample them once.
    deadline = time.monotonic() + 30
    while {p.pid for p in multiprocessing.active_children()} - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert {p.pid for p in multiprocessing.active_children()} - before == set()
    assert all(f.cancelled() or f.done() for f in futures)
    with pytest.raises(RuntimeError, match="shut down"):
        service.submit("late", [random_dag(5)])
    service.shutdown()  # twice is fine


def test_union_members_draw_each_distinct_graph_once(mlp_trace):
    for which in dict.fromkeys(step.which for step in mlp_trace):
        members = union_members(mlp_trace, ("whole", which))
        changing = [s for s in mlp_trace if s.which == which]
        expected = [s for i, s in enumerate(changing) if i == 0 or s.changed]
        assert len(members) == len(expected)
    for view in (View.FORWARD, View.BACKWARD, View.JOINT):
        members = union_members(mlp_trace, (view.value, 0))
        every = [
            views.draw_step(mlp_trace, s.index, view, 0, ghosts=False)
            for s in mlp_trace
            if views.view_unavailable_reason(mlp_trace, s.index, view, 0) is None
        ]
        assert members and len(members) <= len(every)
        # The same union as drawing every step: nothing is lost by drawing fewer.
        full, few = union_graph(every), union_graph(members)
        assert set(full.nodes) == set(few.nodes)
        assert {(e.source, e.target, e.value_id) for e in full.edges} == {
            (e.source, e.target, e.value_id) for e in few.edges
        }
        assert set(full.clusters) == set(few.clusters)


def _layout_keys(trace):
    keys = list(dict.fromkeys(("whole", step.which) for step in trace))
    for dg in range(views.differentiable_graph_count(trace)):
        keys += [(view.value, dg) for view in (View.FORWARD, View.BACKWARD, View.JOINT)]
    return keys


@pytest.mark.parametrize("name", ["mlp", "loop_and_if", "exclusions"])
def test_view_union_is_the_union_of_the_members(name, mlp_trace):
    """The union drawn in one go has the union_graph of the drawings' boxes,
    arrows and frames, in the same order (layouts depend on the order)."""
    trace = {"mlp": mlp_trace, "loop_and_if": loop_and_if_trace(), "exclusions": exclusions_trace()}[name]
    keys = _layout_keys(trace)
    assert len(keys) > (3 if name == "mlp" else 0)
    for key in keys:
        expected, union = union_graph(union_members(trace, key)), view_union(trace, key)
        assert union.nodes and list(union.nodes) == list(expected.nodes), key
        for node_id, node in expected.nodes.items():
            drawn = union.nodes[node_id]
            assert (drawn.label, drawn.role, drawn.cluster) == (node.label, node.role, node.cluster)
        assert [(e.source, e.target, e.value_id, e.capture) for e in union.edges] == [
            (e.source, e.target, e.value_id, e.capture) for e in expected.edges
        ], key
        assert union.clusters == expected.clusters


def test_view_jobs_draw_in_the_workers_as_the_caller_would(mlp_trace):
    keys = [("whole", mlp_trace[0].which), ("joint", 0)]
    with LayoutService(workers=2, engine="layered", trace=mlp_trace) as service:
        futures = {key: service.submit_view(key) for key in keys}
        for key, future in futures.items():
            result = future.result(timeout=120)
            assert result.error is None, result.error
            _same(result.layout, lay_out_sized(view_union(mlp_trace, key), _sizes(mlp_trace, key), "layered"))


def _sizes(trace, key):
    return {i: box_size(n.label) for i, n in view_union(trace, key).nodes.items()}


def test_view_jobs_fall_back_to_drawing_here_when_the_trace_cannot_be_sent(mlp_trace, monkeypatch):
    from gradview.viewer import layout_service

    monkeypatch.setattr(layout_service, "_pack_trace", lambda trace, pause=True: None)
    key = ("forward", 0)
    with LayoutService(workers=1, engine="layered", trace=mlp_trace) as service:
        result = service.submit_view(key).result(timeout=120)
    _same(result.layout, union_layout(union_members(mlp_trace, key), "layered"))
    _same(result.layout, lay_out_sized(view_union(mlp_trace, key), _sizes(mlp_trace, key), "layered"))
    with pytest.raises(ValueError, match="trace="):
        LayoutService().submit_view(key)


def _dot_processes() -> list[int]:
    import subprocess

    table = subprocess.run(["ps", "-eo", "pid,comm"], capture_output=True, text=True, check=True).stdout
    return [int(line.split()[0]) for line in table.splitlines()[1:] if line.split()[-1] == "dot"]


@pytest.mark.skipif(not shutil.which("dot") or not shutil.which("ps"), reason="needs dot and ps")
def test_shutdown_stops_a_running_dot():
    import time

    before = set(_dot_processes())
    service = LayoutService(workers=1, engine="dot")
    future = service.submit("big", [random_dag(2500, seed=1)])
    deadline = time.monotonic() + 60
    while not set(_dot_processes()) - before and not future.done() and time.monotonic() < deadline:
        time.sleep(0.05)
    started = set(_dot_processes()) - before
    service.shutdown()
    assert multiprocessing.active_children() == [] or all(p.pid not in started for p in multiprocessing.active_children())
    for _ in range(100):  # the kill is sent; the process table may take a moment
        if not started & set(_dot_processes()):
            break
        time.sleep(0.05)
    assert started & set(_dot_processes()) == set()


class _Unloadable:
    """Pickles fine, fails to unpickle: a worker's start fails."""

    def __reduce__(self):
        return (int, ("not a number",))


class _BrokenTrace:
    steps = [_Unloadable()]


def test_a_worker_that_cannot_start_fails_its_jobs_with_a_reason():
    before = {p.pid for p in multiprocessing.active_children()}
    service = LayoutService(workers=1, trace=_BrokenTrace())
    futures = [service.submit_view(("whole", GraphName.main())), service.submit_view(("forward", 0))]
    assert service.wait(120)
    for future in futures:
        result = future.result(timeout=1)
        assert result.layout is None
        assert result.error.startswith("layout worker failed: BrokenProcessPool")
    service.shutdown()
    assert {p.pid for p in multiprocessing.active_children()} - before == set()


def test_the_trace_packed_in_a_child_process_is_the_trace(mlp_trace):
    from gradview.viewer import layout_service

    packed = layout_service._pack_trace_apart(mlp_trace)
    assert packed is not None
    copy = layout_service._unpack_trace(packed)
    assert [(s.pass_name, s.which, s.text()) for s in copy] == [(s.pass_name, s.which, s.text()) for s in mlp_trace]
    # Records shared between steps stay shared in the copy (pickled once).
    assert copy[0].graph.nodes[0] is copy[1].graph.nodes[0] or mlp_trace[0].graph.nodes[0] is not mlp_trace[1].graph.nodes[0]


def _quit_while_a_result_is_sent_script(marker: str) -> str:
    return f'''
import os, sys, time
from gradview.viewer.layout_service import LayoutService
from gradview.viewer.model import DrawGraph, DrawNode

def huge(marker, delay):
    # A result that takes a while to pickle and send, and a SIGTERM (what
    # shutdown sends) while it is on its way: the worker dies mid-delivery.
    import signal, threading

    def stop():
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Timer(delay, stop).start()
    return bytes(300_000_000)

if __name__ == "__main__":
    graph = DrawGraph()
    graph.add_node(DrawNode(1, "a"))
    # Where the result is when the signal lands depends on the machine's
    # speed: several moments, one service each, all in this process.
    for delay in (0.3, 0.5, 0.7, 0.9, 1.2):
        service = LayoutService(workers=1, engine="layered")
        service.submit("small", [graph]).result(timeout=120)  # the pool and its worker are up
        if os.path.exists({marker!r}):
            os.remove({marker!r})
        service._executor.submit(huge, {marker!r}, delay)
        while not os.path.exists({marker!r}):
            time.sleep(0.01)
        time.sleep(0.5)
        service.shutdown()
    print("shut down")
'''


def test_quitting_while_a_worker_sends_a_result_does_not_hang_the_exit(tmp_path):
    """A worker stopped mid-send left the pool's manager thread reading forever,
    and the interpreter joins it at exit: the app hung on quit while layouts were
    being delivered. The process must end (the limit only detects a hang)."""
    import subprocess
    import sys

    script = tmp_path / "quit.py"
    script.write_text(_quit_while_a_result_is_sent_script(str(tmp_path / "sending")))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "shut down" in done.stdout

"""The viewer on big graphs: open until the first paint, a step key until the repaint.

For a synthetic graph of N differentiable ops (1,000 and 5,000 by default,
benchmarks/graphs.py) traced through the GraphExecutor as one training step:

* load: building the session (compile phases, autodiff, one forward and
  backward run, every pass recorded) — before the app starts;
* open: from ``run_test`` entering until the first screen is painted (the
  canvas says "laying out…" until its layout arrives from the worker);
* layouts: until every view's union layout is in the app (computed by the
  worker processes, its message accepted), and until the app has also drawn
  and linted every step ahead of the user (its thread worker);
* step: a step key's handler (new marks, same layout) plus painting every
  visible canvas row, median and worst over consecutive steps, measured
  inside the app so Textual's pilot delays do not count: ten steps 50 ms
  apart right after the first paint (while the layouts compute), and the
  last 30 steps once everything is ready;
* real key presses through Textual's pilot: CPU time (the app's and
  Textual's work, compositing included) and wall time.

Targets from the issue (acceptance 4, at 5,000 ops): all layouts ready under
30 s; a step under 100 ms median and 150 ms worst, also while layouts compute.
The machine's load changes every wall time: run ``uptime`` beside it.

``--layouts-only`` measures the layout service without the app: every
view's union (the layout keys the app asks for) drawn and laid out by
``LayoutService``'s worker processes from their copy of the trace, until the
last one is back; this process's share (packing the trace), and per view its
size, the engine and the worker's seconds. ``--draw-here`` draws the views in
this process instead and sends the unions.

    .venv/bin/python benchmarks/viewer.py [--nodes 1000 5000] [--layouts-only [--workers N] [--draw-here]]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graphs import chain_text

from gradview.ir import parse_ir
from gradview.viewer import views
from gradview.viewer.layout_service import LayoutService, default_workers, view_union
from gradview.viewer.session import Session, example_inputs_for, trace_executor


def build_session(n_nodes: int) -> tuple[Session, float]:
    start = time.perf_counter()
    graph = parse_ir(chain_text(n_nodes, pass_fodder=True))
    inputs = example_inputs_for(graph)
    assert inputs is not None
    trace = trace_executor(graph, inputs)
    session = Session(f"chain of {n_nodes} ops", trace, graph, inputs, [v.debug_name() for v in graph.inputs()])
    return session, time.perf_counter() - start


def layout_keys(trace) -> list[tuple[str, object]]:
    """Every layout the app asks for: one per graph of the whole view, three per DifferentiableGraph."""
    keys: list[tuple[str, object]] = list(dict.fromkeys(("whole", step.which) for step in trace))
    for dg in range(views.differentiable_graph_count(trace)):
        keys += [("forward", dg), ("backward", dg), ("joint", dg)]
    return keys


def measure_service(session: Session, workers: int, draw_here: bool) -> None:
    """All layouts through the service, without the app; prints the figures.

    By default the workers draw each view from their copy of the trace
    (``submit_view``); ``draw_here`` draws in this process and sends the unions."""
    keys = layout_keys(session.trace)
    start = time.perf_counter()
    cpu = time.process_time()
    sizes = {}
    with LayoutService(workers=workers, trace=None if draw_here else session.trace) as service:
        for key in keys:
            if draw_here:
                union = view_union(session.trace, key)
                sizes[key] = (len(union.nodes), len(union.edges), len(union.clusters))
                service.submit(key, union)
            else:
                service.submit_view(key)
        handed = time.perf_counter() - start
        service.wait()
        ready = time.perf_counter() - start
        cpu = time.process_time() - cpu
        results = service.poll()
    where = "this process" if draw_here else "the workers"
    print(f"  all layouts ready      : {ready * 1e3:8.0f} ms   (target < 30000 ms; {workers} worker processes, "
          f"drawings made in {where})")
    print(f"  this process           : {handed * 1e3:8.0f} ms until every job was handed over, "
          f"{cpu * 1e3:.0f} ms CPU in all (the app's share)")
    for result in results:
        layout = result.layout
        size = f"{len(layout.boxes):6} nodes {len(layout.edges):6} edges {len(layout.clusters):5} clusters" if layout else ""
        engine = layout.engine if layout is not None else result.error
        print(f"    {str(result.key):42} {size}  {engine:8} {result.seconds:6.2f} s in the worker "
              f"({result.cpu_seconds:.2f} s CPU)")
    cpu_total = sum(result.cpu_seconds for result in results)
    print(f"  workers' CPU in all    : {cpu_total * 1e3:8.0f} ms   (the work itself, whatever the machine's load)")


async def measure(session: Session, steps: int = 30) -> dict[str, float]:
    from gradview.viewer.app import GradviewApp
    from gradview.viewer.canvas import GraphCanvas

    app = GradviewApp(session)
    start = time.perf_counter()
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        opened = time.perf_counter() - start
        canvas = app.query_one(GraphCanvas)
        busy = []  # step keys while the layouts are still being computed in the background
        for index in range(1, min(len(session.trace), 11)):
            t0 = time.perf_counter()
            app.show_step(index)
            for row in range(canvas.size.height):
                canvas.render_line(row)
            busy.append(time.perf_counter() - t0)
            await asyncio.sleep(0.05)
        wanted = set(layout_keys(session.trace))
        controller = app.controller
        while not wanted <= set(controller.layouts) | set(controller.layout_errors):
            await asyncio.sleep(0.05)
        layouts = time.perf_counter() - start
        await app.wait_for_layouts()
        drawn_ahead = time.perf_counter() - start
        timings = []
        first = max(0, len(session.trace) - steps - 1)
        app.show_step(first)
        await pilot.pause()
        for index in range(first + 1, min(len(session.trace), first + 1 + steps)):
            t0 = time.perf_counter()
            app.show_step(index)
            for row in range(canvas.size.height):
                canvas.render_line(row)
            timings.append(time.perf_counter() - t0)
        # Real key presses through Textual: CPU time is the app's and Textual's
        # work (compositing included); wall time adds the pilot's wait for idle.
        walls, cpus = [], []
        for _ in range(10):
            c0, w0 = time.process_time(), time.perf_counter()
            await pilot.press("k")
            cpus.append(time.process_time() - c0)
            walls.append(time.perf_counter() - w0)
    return {
        "open": opened,
        "layouts": layouts,
        "drawn_ahead": drawn_ahead,
        "step_median": statistics.median(timings),
        "step_worst": max(timings),
        "pilot_wall": statistics.median(walls),
        "pilot_cpu": statistics.median(cpus),
        "busy_median": statistics.median(busy) if busy else 0.0,
        "busy_worst": max(busy) if busy else 0.0,
    }


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000])
    cli.add_argument("--layouts-only", action="store_true", help="the layout service alone, without the app")
    cli.add_argument("--workers", type=int, default=default_workers(), help="layout worker processes")
    cli.add_argument("--draw-here", action="store_true", help="with --layouts-only: draw the views in this process")
    args = cli.parse_args()
    for n in args.nodes:
        session, load = build_session(n)
        if args.layouts_only:
            print(f"{n} ops: {len(session.trace)} steps; load (trace) {load:.2f} s")
            measure_service(session, args.workers, args.draw_here)
            continue
        result = asyncio.run(measure(session))
        print(f"{n} ops: {len(session.trace)} steps; load (trace) {load:.2f} s")
        print(f"  open until first paint : {result['open'] * 1e3:8.0f} ms   (target < 2000 ms)")
        print(f"  all layouts ready      : {result['layouts'] * 1e3:8.0f} ms   (target < 30000 ms; worker processes)")
        print(f"  every step drawn ahead : {result['drawn_ahead'] * 1e3:8.0f} ms   (the app's thread worker)")
        print(f"  step key -> repaint    : {result['step_median'] * 1e3:8.1f} ms median, "
              f"{result['step_worst'] * 1e3:.1f} ms worst   (target < 100 ms median, < 150 ms worst)")
        print(f"  step while laying out  : {result['busy_median'] * 1e3:8.1f} ms median, "
              f"{result['busy_worst'] * 1e3:.1f} ms worst   (same targets; layouts still computing)")
        print(f"  real key press (pilot) : {result['pilot_cpu'] * 1e3:8.0f} ms CPU median, "
              f"{result['pilot_wall'] * 1e3:.0f} ms wall (the wall time includes the pilot's wait for idle)")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        print(f"  peak memory so far     : {peak:8.0f} MiB   (this process: the app, its drawings and geometries)")


if __name__ == "__main__":
    main()

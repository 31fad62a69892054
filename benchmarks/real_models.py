"""The viewer on real models: how soon a picture, how fast a step (issue 21, acceptance 1).

Targets: the builders in ``examples/`` (ResNet-18 written out as torchvision's
layers, a 12-layer ``nn.TransformerEncoder`` with d_model 256, a 2-layer LSTM)
and the TORCH_TRACE logs of a training step of the first two, made here with
``torch.compile(backend="aot_eager")`` (tests/real_model_logs.py; the time
torch takes is printed, not counted). For each target, in a headless app of
``--size`` cells:

* build: ``load_target`` (the session the viewer opens: the executor's
  training step for a builder, the compiled graphs for a log), before the app;
* first picture: from starting the app until the canvas shows the first
  step's drawing laid out (a layout on the canvas, not the "laying out…"
  placeholder); goal under 2 s;
* layouts: until the last layout the app asked for by itself reached it
  (each arrives as a ``LayoutReady`` message, whatever its key), i.e. every
  layout of the default level; goal under 10 s;
* settled: until the app has nothing left to do (``wait_for_layouts``: the
  layouts, and every step drawn ahead of the user);
* step: ``show_step`` plus painting every canvas row, measured inside the app
  (Textual's pilot delays do not count), over ``--steps`` consecutive steps
  from the first once everything is settled; goal under 100 ms median.

Every figure is wall time on a shared machine: ``uptime`` is printed beside them.

    .venv/bin/python benchmarks/real_models.py [--only resnet18 lstm ...] [--size 120x40] [--steps 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # tests.real_model_logs makes the TORCH_TRACE logs

from gradview.loaders.targets import Session, load_target  # noqa: E402

GOAL_FIRST_PICTURE = 2.0  # seconds from launch, once the trace is built
GOAL_STEP_MEDIAN = 0.100
GOAL_LAYOUTS = 10.0

# name -> (what it is, the builder, or the key of tests.real_model_logs.BUILDERS for a log)
TARGETS: dict[str, tuple[str, str]] = {
    "resnet18": ("ResNet-18 (builder)", "examples/resnet18.py:build"),
    "transformer_encoder": ("TransformerEncoder x12 (builder)", "examples/transformer_encoder.py:build"),
    "lstm": ("LSTM x2 (builder)", "examples/lstm.py:build"),
    "resnet18_log": ("ResNet-18 TORCH_TRACE", "resnet18"),
    "transformer_encoder_log": ("TransformerEncoder x12 TORCH_TRACE", "transformer_encoder"),
}


@dataclass
class Figures:
    """One target's figures in seconds; None where it did not happen within the timeout."""

    build: float
    first_picture: float | None = None
    picture_nodes: int = 0
    packed: float | None = None  # the trace handed to the layout worker processes (none before)
    layouts: float | None = None  # the last layout the app asked for before it settled
    layout_count: int = 0
    settled: float | None = None
    step_median: float | None = None
    step_worst: float | None = None


def load(name: str, scratch: Path) -> tuple[Session, float, str]:
    """The session of target ``name``, the seconds ``load_target`` took and a note on its making."""
    _, source = TARGETS[name]
    note = ""
    target = str(ROOT / source) if source.endswith(":build") else ""
    if not target:
        from tests.real_model_logs import BUILDERS, make_torch_trace  # only logs need torch.compile

        start = time.perf_counter()
        log = make_torch_trace(BUILDERS[source], scratch / source)
        note = f"log made by torch.compile in {time.perf_counter() - start:.1f} s ({log.stat().st_size / 1e6:.1f} MB)"
        target = str(log.parent)  # the directory, as TORCH_TRACE=DIR leaves it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's tracer warnings are not the viewer's
        start = time.perf_counter()
        session = load_target(target)
        built = time.perf_counter() - start
    return session, built, note


async def _until(done: Callable[[], bool], start: float, timeout: float) -> float | None:
    """Seconds from ``start`` until ``done()``, polling while the app runs; None after ``timeout``."""
    while not done():
        if time.perf_counter() - start > timeout:
            return None
        await asyncio.sleep(0.01)
    return time.perf_counter() - start


async def measure(session: Session, built: float, size: tuple[int, int], steps: int, timeout: float) -> Figures:
    from gradview.viewer.app import GradviewApp  # after the session: imports are not load time
    from gradview.viewer.canvas import GraphCanvas
    from gradview.viewer.messages import LayoutReady

    figures = Figures(build=built)
    app = GradviewApp(session)
    layouts_done: list[float] = []  # when each layout reached the app, from launch

    def watch(message: object) -> None:
        # Whatever layouts the app wants (their keys change with the viewer), each arrives as a LayoutReady.
        if isinstance(message, LayoutReady):
            layouts_done.append(time.perf_counter() - start)

    start = time.perf_counter()
    async with app.run_test(size=size, message_hook=watch) as pilot:
        canvas = app.query_one(GraphCanvas)
        service = app.controller.service

        def pictured() -> bool:
            if figures.packed is None and service.is_prepared():
                figures.packed = time.perf_counter() - start
            return canvas.layout_data is not None

        figures.first_picture = await _until(pictured, start, timeout)
        figures.picture_nodes = len(canvas.graph.nodes) if figures.first_picture is not None else 0
        try:
            await asyncio.wait_for(app.wait_for_layouts(), max(1.0, timeout - (time.perf_counter() - start)))
        except TimeoutError:
            return figures  # stepping now would measure the background work, not a step
        figures.settled = time.perf_counter() - start
        figures.layouts = max(layouts_done, default=figures.first_picture)
        figures.layout_count = len(layouts_done)
        app.show_step(0)
        await pilot.pause()
        timings = []
        for index in range(1, min(len(session.trace), steps + 1)):
            t0 = time.perf_counter()
            app.show_step(index)
            for row in range(canvas.size.height):
                canvas.render_line(row)
            timings.append(time.perf_counter() - t0)
        if timings:
            figures.step_median, figures.step_worst = statistics.median(timings), max(timings)
    return figures


def _seconds(value: float | None, goal: float | None = None, scale: float = 1.0, unit: str = "s") -> str:
    if value is None:
        return "timed out"
    text = f"{value * scale:.2f} {unit}" if unit == "s" else f"{value * scale:.0f} {unit}"
    return text if goal is None else f"{text} {'ok' if value < goal else 'OVER'}"


def report(title: str, session: Session, figures: Figures, note: str) -> list[str]:
    """Printed lines for one target; returns its summary-table row."""
    graph = session.graph
    nodes = f"{sum(1 for _ in graph.nodes())} nodes, {len(graph.inputs())} inputs; " if graph is not None else ""
    print(f"{title}: {nodes}{len(session.trace)} steps" + (f"; {note}" if note else ""))
    print(f"  build (load_target)    : {_seconds(figures.build)}")
    print(f"  first picture          : {_seconds(figures.first_picture, GOAL_FIRST_PICTURE)}   "
          f"(goal < {GOAL_FIRST_PICTURE:.0f} s from launch; {figures.picture_nodes} boxes drawn)")
    packed = "after the first picture" if figures.packed is None else _seconds(figures.packed)
    print(f"  trace packed for the layout workers: {packed}")
    print(f"  default-level layouts  : {_seconds(figures.layouts, GOAL_LAYOUTS)}   "
          f"(goal < {GOAL_LAYOUTS:.0f} s; {figures.layout_count} layouts)")
    print(f"  settled (drawn ahead)  : {_seconds(figures.settled)}")
    print(f"  step (median, worst)   : {_seconds(figures.step_median, GOAL_STEP_MEDIAN, 1e3, 'ms')}, "
          f"{_seconds(figures.step_worst, None, 1e3, 'ms')}   (goal < {GOAL_STEP_MEDIAN * 1e3:.0f} ms median)")
    return [title, _seconds(figures.build), _seconds(figures.first_picture), _seconds(figures.layouts),
            _seconds(figures.step_median, None, 1e3, "ms") + " / " + _seconds(figures.step_worst, None, 1e3, "ms")]


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--only", nargs="+", choices=list(TARGETS), default=list(TARGETS), metavar="NAME",
                     help=f"targets to measure (default: all of {', '.join(TARGETS)})")
    cli.add_argument("--size", default="120x40", help="terminal size, COLUMNSxROWS")
    cli.add_argument("--steps", type=int, default=30, help="consecutive steps timed from the first")
    cli.add_argument("--timeout", type=float, default=180.0, help="seconds before a phase is given up")
    args = cli.parse_args()
    columns, _, rows = args.size.partition("x")
    size = (int(columns), int(rows))
    print(f"{args.size} terminal; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    start = time.perf_counter()
    import torch  # noqa: F401 - once, so the first builder's build time is not torch's import

    from gradview.viewer.app import GradviewApp  # noqa: F401 - and the viewer's, not the first launch's

    print(f"importing torch and the viewer: {time.perf_counter() - start:.1f} s (not counted below)")
    table = []
    with tempfile.TemporaryDirectory(prefix="gradview-real-models-") as scratch:
        for name in args.only:
            session, built, note = load(name, Path(scratch))
            figures = asyncio.run(measure(session, built, size, args.steps, args.timeout))
            table.append(report(TARGETS[name][0], session, figures, note))
    print("\n| target | build | first picture | layouts | step median / worst |\n| --- | --- | --- | --- | --- |")
    for row in table:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()

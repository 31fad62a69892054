"""Layout and SVG export of one big step: the union layout once, then one SVG.

For a synthetic autodiff-like step of N nodes (deep and narrow, about 1.5
edges per node; tests/viewer/graphs_for_tests.py) and a view of five steps
(each pass removes and adds 3% of the nodes), prints:

* dot layout: ``union_layout`` of the five steps with Graphviz's dot;
* layered layout: the same with the pure-Python fallback;
* SVG export: one step drawn at the union's positions (``render_svg``:
  building the DOT text, then ``neato -n2``), and the DOT part alone;
* the HTML stepper of a chain of 450 differentiable ops (benchmarks/graphs.py,
  traced through the GraphExecutor: 81 steps), every step in the whole view:
  its size, and the time to write it.

Targets from the issue: the SVG export of a 1,000-node step under 3 s; the
450-node chain's stepper under 5 MB.

    .venv/bin/python benchmarks/viewer_export.py [--nodes 1000 2500] [--stepper-nodes 450]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # timing.py; the tests' graph generator

from graphs import chain_text  # noqa: E402
from timing import best_time  # noqa: E402

from gradview.ir import parse_ir  # noqa: E402
from gradview.viewer.export import export_trace_html, render_svg  # noqa: E402
from gradview.viewer.layout import union_layout  # noqa: E402
from gradview.viewer.model import Marks  # noqa: E402
from gradview.viewer.session import example_inputs_for, trace_executor  # noqa: E402
from gradview.viewer.svg_dot import step_dot  # noqa: E402
from tests.viewer.graphs_for_tests import evolve, random_dag  # noqa: E402

TARGET_SECONDS = 3.0
TARGET_STEPPER_BYTES = 5_000_000


def measure(nodes: int) -> None:
    steps = [random_dag(nodes, seed=nodes, cluster_every=100)]
    for seed in range(4):
        steps.append(evolve(steps[-1], seed=seed))
    union_nodes = len({node_id for graph in steps for node_id in graph.nodes})
    step = steps[-1]
    print(f"{nodes} nodes per step, {union_nodes} in the union of {len(steps)} steps")

    layout = union_layout(steps, engine="dot")
    dot_time = best_time(lambda: union_layout(steps, engine="dot"), repeat=2)
    layered_time = best_time(lambda: union_layout(steps, engine="layered"), repeat=3)
    export_time = best_time(lambda: render_svg(step, Marks(), layout), repeat=5)
    dot_text_time = best_time(lambda: step_dot(step, Marks(), layout), repeat=5)
    verdict = "ok" if export_time < TARGET_SECONDS else "OVER TARGET"
    print(f"  dot union layout      {dot_time:8.3f} s")
    print(f"  layered union layout  {layered_time:8.3f} s")
    print(f"  SVG export, one step  {export_time:8.3f} s  (DOT text {dot_text_time:.3f} s; target < {TARGET_SECONDS:.0f} s: {verdict})")


def measure_stepper(nodes: int) -> None:
    graph = parse_ir(chain_text(nodes, pass_fodder=True))
    trace = trace_executor(graph, example_inputs_for(graph))
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        page = export_trace_html(trace, Path(folder) / "chain.html")
        seconds = time.perf_counter() - start
        size = page.stat().st_size
    verdict = "ok" if size < TARGET_STEPPER_BYTES else "OVER TARGET"
    print(f"HTML stepper, chain of {nodes} ops, {len(trace)} steps (whole view)")
    print(f"  size {size / 1e6:8.2f} MB  (target < {TARGET_STEPPER_BYTES / 1e6:.0f} MB: {verdict}); written in {seconds:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000])
    parser.add_argument("--stepper-nodes", type=int, default=450, help="the chain for the stepper size (0: skip)")
    args = parser.parse_args()
    for nodes in args.nodes:
        measure(nodes)
    if args.stepper_nodes:
        measure_stepper(args.stepper_nodes)


if __name__ == "__main__":
    main()

"""Layout and SVG export of one big step: the union layout once, then one SVG.

For a synthetic autodiff-like step of N nodes (deep and narrow, about 1.5
edges per node; tests/viewer/graphs_for_tests.py) and a view of five steps
(each pass removes and adds 3% of the nodes), prints:

* dot layout: ``union_layout`` of the five steps with Graphviz's dot;
* layered layout: the same with the pure-Python fallback;
* SVG export: one step drawn at the union's positions (``render_svg``:
  building the DOT text, then ``neato -n2``), and the DOT part alone.

Target from the issue: the SVG export of a 1,000-node step under 3 s.

    .venv/bin/python benchmarks/viewer_export.py [--nodes 1000 2500]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # timing.py; the tests' graph generator

from timing import best_time  # noqa: E402

from gradview.viewer.export import render_svg  # noqa: E402
from gradview.viewer.layout import union_layout  # noqa: E402
from gradview.viewer.model import Marks  # noqa: E402
from gradview.viewer.svg_dot import step_dot  # noqa: E402
from tests.viewer.graphs_for_tests import evolve, random_dag  # noqa: E402

TARGET_SECONDS = 3.0


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000])
    args = parser.parse_args()
    for nodes in args.nodes:
        measure(nodes)


if __name__ == "__main__":
    main()

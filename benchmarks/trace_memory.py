"""Memory of a pass trace: a 5,000-node graph recorded through ~40 steps.

Builds a random chain graph of mul/add/sin/tanh/mm/sigmoid (with some dead
nodes and duplicated constants, so DCE and constant pooling change it), runs
the generic pipelines (required passes, runOptimization, runNondiffOptimization)
recording a snapshot after every pass, then differentiates it recording every
autodiff step (forward and backward graphs). Prints the number of steps and
the tracemalloc peak of the whole run in MB against the target (300 MB), and
the size the trace alone keeps.

    .venv/bin/python benchmarks/trace_memory.py [--nodes 5000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

from graphs import chain_text  # benchmarks/ is on sys.path when run as a script

from gradview.ir import parse_ir
from gradview.loaders.targets import trace_pipelines as trace_graph

TARGET_MB = 300.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--no-autodiff", action="store_true")
    args = parser.parse_args()

    text = chain_text(args.nodes, pass_fodder=True)
    tracemalloc.start()
    start = time.perf_counter()
    graph = parse_ir(text)
    base, _ = tracemalloc.get_traced_memory()
    trace = trace_graph(graph)  # what `gradview trace FILE.ir --inputs none` records
    pipeline_steps = len(trace)
    note = ""
    if not args.no_autodiff:
        try:
            from gradview.autodiff import differentiate

            differentiate(graph.copy(), record=trace.autodiff_recorder(0))
        except Exception as exc:  # report and go on: the pipelines still count
            note = f" (autodiff failed: {type(exc).__name__}: {exc})"
    elapsed = time.perf_counter() - start
    current, peak = tracemalloc.get_traced_memory()
    del graph
    import gc

    gc.collect()
    kept, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    nodes = sum(1 for _ in trace[0].nodes())
    print(f"graph: {nodes} nodes; steps: {len(trace)} ({pipeline_steps} pipeline, {len(trace) - pipeline_steps} autodiff){note}")
    print(f"time: {elapsed:.2f} s")
    print(f"tracemalloc peak: {peak / 2**20:.1f} MB (target < {TARGET_MB:.0f} MB) "
          f"{'OK' if peak / 2**20 < TARGET_MB else 'OVER TARGET'}")
    print(f"after parse: {base / 2**20:.1f} MB; at end: {current / 2**20:.1f} MB; "
          f"kept by the trace alone (graph freed): {kept / 2**20:.1f} MB")


if __name__ == "__main__":
    main()

"""Time ``gradview.autodiff.differentiate`` against ``torch._C._jit_differentiate``.

Random chain graphs of mul/add/sin/tanh/mm/sigmoid over 64x64 float64
tensors, each op reading values among the last 8 produced, at 1,000, 4,000,
8,000 and 16,000 nodes. Both differentiate the same text in one run; the
script prints each time and the ratios: torch / gradview per size, and
gradview's own growth from 8,000 to 16,000 nodes (near-linear means about 2x).
Targets: faster than torch at 4,000 nodes, at least 10x faster at 8,000, and
16,000 nodes no more than 2.5x the 8,000-node time.

    .venv/bin/python benchmarks/differentiate.py [--sizes 1000 4000 8000 16000] [--torch-max 8000]
"""

from __future__ import annotations

import argparse

from graphs import chain_text  # benchmarks/ is on sys.path when run as a script
from timing import best_time  # benchmarks/ is on sys.path when run as a script

from gradview.autodiff import differentiate
from gradview.ir import parse_ir


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 8000, 16000])
    cli.add_argument("--torch-max", type=int, default=8000, help="largest size also given to torch (slow above)")
    args = cli.parse_args()
    try:
        import torch
    except ImportError:
        torch = None

    ours_by_size: dict[int, float] = {}
    print(f"{'nodes':>7}{'gradview':>12}{'torch':>12}{'torch/gradview':>16}")
    for size in args.sizes:
        text = chain_text(size)
        graph = parse_ir(text)  # parsing is not part of what is timed
        ours = best_time(lambda graph=graph: differentiate(graph))
        ours_by_size[size] = ours
        theirs_text = "-"
        ratio_text = "-"
        if torch is not None and size <= args.torch_max:
            torch_graph = torch._C.parse_ir(text)
            theirs = best_time(lambda g=torch_graph: torch._C._jit_differentiate(g))
            theirs_text = f"{theirs:.2f}s"
            ratio_text = f"{theirs / ours:.1f}x"
        print(f"{size:>7}{ours:>11.2f}s{theirs_text:>12}{ratio_text:>16}")
    if 8000 in ours_by_size and 16000 in ours_by_size:
        growth = ours_by_size[16000] / ours_by_size[8000]
        print(f"gradview growth 8,000 -> 16,000 nodes: {growth:.2f}x (target <= 2.5x)")


if __name__ == "__main__":
    main()

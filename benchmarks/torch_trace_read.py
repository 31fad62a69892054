"""Time reading a TORCH_TRACE log of a big compiled graph, against Python parsing its code.

A synthetic AOTAutograd pair in the log's own format (envelopes with their
checksums, the FX code as ``print_readable`` writes it, every value annotated):
a forward chain of N tanh ops whose every result is saved, and a backward of N
``tanh_backward`` ops reading them, at 2,500, 5,000 and 10,000 ops per graph.
For each size the script times gradview's whole reading (``load_compiled_trace``:
envelopes, FX text, translation to gradview's IR, the pass trace) and then
``saved_values``, and as the reference Python's own ``ast.parse`` of the same two
graphs' code, the least any reader of this text must do. It prints the times,
the ratio gradview / ast.parse per size, and gradview's growth from the
smallest to the largest size (linear means 4x for 4x the ops). No target is
asserted: the figures say what a 10,000-op graph costs.

    .venv/bin/python benchmarks/torch_trace_read.py [--sizes 2500 5000 10000]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import tempfile
from pathlib import Path

from timing import best_time  # benchmarks/ is on sys.path when run as a script

from gradview.loaders.compiled_trace import load_compiled_trace
from gradview.runtime.saved_values import saved_values

_TYPE = '"f32[8, 16][16, 1]cpu"'


def _entry(key: str, payload: str) -> str:
    digest = hashlib.md5(payload.encode("utf-8")).hexdigest()  # the log's own checksum
    envelope = f'{{"{key}": {{}}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "{digest}"}}'
    return "V1127 00:00:00.000000 1 bench.py:1] " + envelope + "\n" + "".join("\t" + line + "\n" for line in payload.split("\n"))


def graphs(ops: int) -> tuple[str, str]:
    """The forward's and the backward's code: a tanh chain saving every result, and its backward."""
    saved = [f"tanh_{i}" for i in range(ops)]
    forward = ["class GraphModule(torch.nn.Module):", "    def forward(", "        self,",
               f"        primals_1: {_TYPE},  # PlainAOTInput(idx=0)", "    ):"]
    previous = "primals_1"
    for name in saved:
        forward.append(f"        {name}: {_TYPE} = torch.ops.aten.tanh.default({previous})")
        previous = name
    forward += ["        return (", f"            {previous},  # PlainAOTOutput(idx=0)"]
    forward += [f"            {name},  # SavedForBackwardsAOTOutput(idx={i})" for i, name in enumerate(saved)]
    forward.append("        )")
    backward = ["class GraphModule(torch.nn.Module):", "    def forward(", "        self,"]
    backward += [f"        {name}: {_TYPE}," for name in saved]
    backward += [f"        tangents_1: {_TYPE},  # TangentAOTInput(output=PlainAOTOutput(idx=0))", "    ):"]
    gradient = "tangents_1"
    for i in reversed(range(ops)):
        backward.append(f"        tb_{i}: {_TYPE} = torch.ops.aten.tanh_backward.default({gradient}, tanh_{i})")
        gradient = f"tb_{i}"
    backward += ["        return (", f"            {gradient},  # GradAOTOutput(grad_of=PlainAOTInput(idx=0))", "        )"]
    return "\n".join(forward), "\n".join(backward)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--sizes", type=int, nargs="+", default=[2500, 5000, 10000])
    args = cli.parse_args()
    times = {}
    with tempfile.TemporaryDirectory() as directory:
        for ops in args.sizes:
            forward, backward = graphs(ops)
            log = Path(directory) / f"bench_{ops}.log"
            log.write_text(_entry("aot_forward_graph", forward) + _entry("aot_backward_graph", backward), encoding="utf-8")
            read = best_time(lambda log=log: load_compiled_trace(log), repeat=2)
            trace = load_compiled_trace(log).trace
            listed = best_time(lambda trace=trace: saved_values(trace), repeat=2)
            reference = best_time(lambda f=forward, b=backward: (ast.parse(f), ast.parse(b)), repeat=2)
            times[ops] = read + listed
            print(
                f"{ops:>6} ops per graph: read {read:6.2f} s, saved_values {listed:5.2f} s, "
                f"ast.parse {reference:5.2f} s; gradview / ast.parse {(read + listed) / reference:5.1f}x"
            )
    small, large = min(times), max(times)
    print(f"growth {small} -> {large} ops ({large / small:.0f}x the ops): {times[large] / times[small]:.1f}x the time")


if __name__ == "__main__":
    main()

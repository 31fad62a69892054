"""Time ``G`` (viewer/check_gradient.py) on a ResNet-18's backward, against references.

Issue 21 asks that ``G`` on the backward step of a ResNet-18's TORCH_TRACE log
finish in under 30 s with progress shown. The script makes that log
(``examples/resnet18.py:build_train``, a training step in train mode, through
``--compile``'s torch.compile child, about 5 s; needs PyTorch), then prints:

* ``G`` (gradcheck's fast mode: one random direction per input) on the
  backward step: its time, the inputs checked, the progress reports heard,
  and the verdict;
* the reference on the same function: ``torch.autograd.gradcheck(fast_mode=True)``
  on the ResNet's forward in float64 with the same parameters as inputs (PyTorch's
  own kernels), and the ratio gradview / torch;
* the forward runs each mode makes on the ResNet (fast: one base run and two per
  input; elementwise at 64 sampled elements per input, the check ``G`` made before:
  two per element), and on a smaller graph (the ``transformer`` fixture log's
  backward: a TransformerEncoderLayer) both modes timed and their ratio.

No target is asserted here; the figures go in the README.

    .venv/bin/python benchmarks/gradient_check.py
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from pathlib import Path

from gradview.loaders.compile_model import compile_and_trace
from gradview.loaders.targets import load_target
from gradview.runtime.checks import check_step_gradient

ROOT = Path(__file__).resolve().parent.parent
RESNET = ROOT / "examples" / "resnet18.py"
SMALL = ROOT / "tests" / "data" / "torch_trace" / "transformer.log"


def _backward_index(trace: object) -> int:
    return next(s.index for s in trace.steps if s.which.is_backward)  # type: ignore[attr-defined]


def _timed_g(trace: object, index: int, **options: object) -> tuple[float, object, list[str]]:
    heard: list[str] = []
    start = time.perf_counter()
    result = check_step_gradient(trace, index, None, report=heard.append, **options)  # type: ignore[arg-type]
    return time.perf_counter() - start, result, heard


def _torch_gradcheck_seconds() -> float:
    """torch.autograd.gradcheck(fast_mode=True) on the ResNet's forward in float64,
    every parameter an input (the function G checks: the forward's gradient per parameter)."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("resnet18_bench", RESNET)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, (x,) = module.build_train()
    model = model.double()
    names = [n for n, p in model.named_parameters()]
    params = tuple(p.detach().clone().requires_grad_(True) for p in model.parameters())
    x = x.double()

    def forward(*weights: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(model, dict(zip(names, weights, strict=True)), (x,))

    start = time.perf_counter()
    torch.autograd.gradcheck(forward, params, fast_mode=True)
    return time.perf_counter() - start


def main() -> None:
    if not RESNET.is_file():
        sys.exit(f"{RESNET} is missing: the ResNet-18 example is needed")
    with tempfile.TemporaryDirectory(prefix="gradview-bench-") as log_dir:
        compile_and_trace(f"{RESNET}:build_train", log_dir)
        trace = load_target(log_dir).trace
        index = _backward_index(trace)
        seconds, result, heard = _timed_g(trace, index)
    inputs = [row for row in result.rows if row.verdict != "skipped"]  # type: ignore[attr-defined]
    elementwise_runs = 1 + 2 * sum(min(64, math.prod(row.shape)) for row in inputs)
    print(f"G on the ResNet-18's backward (step {index} of its TORCH_TRACE log), gradcheck's fast mode:")
    print(f"  {seconds:6.1f} s for {len(inputs)} inputs, {len(heard)} progress reports; {result.status}")  # type: ignore[attr-defined]
    print(f"  {result.message}")  # type: ignore[attr-defined]
    print(f"  forward runs: fast {1 + 2 * len(inputs)}, elementwise at 64 elements per input {elementwise_runs}")
    torch_seconds = _torch_gradcheck_seconds()
    print(f"torch.autograd.gradcheck(fast_mode=True) on the same forward (float64, PyTorch's kernels): {torch_seconds:.1f} s")
    print(f"  ratio gradview G / torch gradcheck: {seconds / torch_seconds:.1f}x (goal: G under 30 s)")
    small = load_target(str(SMALL)).trace
    small_index = _backward_index(small)
    fast, fast_result, _ = _timed_g(small, small_index)
    full, full_result, _ = _timed_g(small, small_index, mode="elementwise", samples=64)
    print(f"{SMALL.name} backward ({len(fast_result.rows)} inputs): fast {fast:.2f} s ({fast_result.status}), elementwise on 64 sampled elements "  # type: ignore[attr-defined]
          f"per input {full:.2f} s ({full_result.status}): elementwise / fast = {full / fast:.1f}x")  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()

"""GPU check of the CuPy backend, run on a lent device machine (see the device tool).

1. Correctness: on the same seeded inputs, the NumPy and CuPy backends agree on
   graphs that exercise the generated code's direct calls and buffer reuse
   (``out=`` into dying arrays), and on a GraphExecutor training step (forward,
   DifferentiableGraph backward, gradients).
2. The device boundary (issue 11, point 4): Tensors coming out of
   ``GraphExecutor.run`` and the gradients autograd gives hold CuPy arrays
   (nothing went to the host mid-graph; CuPy itself refuses implicit
   conversions, so a crossing inside raises); ``run_graph`` gives host arrays.
3. Speed (issue 11, point 4): one MLP training step (forward, backward, SGD)
   in float32, batch N and widths D-D-D-1 (tanh, tanh, sigmoid, mean squared
   error), at N x D = 64 x 256 and 4096 x 4096: gradview's GraphExecutor on
   CuPy against the same step written by hand in CuPy, PyTorch eager on CUDA
   and torch.jit.script on CUDA. Targets: gradview at most 1.2x CuPy by hand at
   both sizes, faster than TorchScript at the small one. Contenders that cannot
   run here (no torch with CUDA) are named and left out.

Prints one line per check and exits non-zero on a correctness mismatch (timing
targets are reported, not enforced). ``--cpu-dry-run`` runs every code path on
the CPU (NumPy for CuPy, torch on the CPU, small sizes) to check the script
itself on a machine without a GPU.

    python3 scripts/device_check.py [--sizes 64x256,4096x4096] [--rounds 5] [--cpu-dry-run]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gradview.ir import parse_ir
from gradview.runtime import GraphExecutor, Tensor, run_graph
from gradview.runtime.autograd import grad

MLP = """graph(%x : Double(64, 32), %w1 : Double(32, 32), %b1 : Double(32), %w2 : Double(32, 1), %b2 : Double(1)):
  %one : int = prim::Constant[value=1]()
  %m1 : Double(64, 32) = aten::matmul(%x, %w1)
  %s1 : int[] = aten::size(%m1)
  %a1 : Double(64, 32) = aten::add(%m1, %b1, %one)
  %h1 : Double(64, 32) = aten::tanh(%a1)
  %m2 : Double(64, 1) = aten::matmul(%h1, %w2)
  %a2 : Double(64, 1) = aten::add(%m2, %b2, %one)
  %y : Double(64, 1) = aten::sigmoid(%a2)
  %e : Double(64, 1) = aten::exp(%y)
  %none : NoneType = prim::Constant()
  %loss : Double() = aten::mean(%e, %none)
  return (%loss, %s1)
"""

# The training step's loss, as benchmarks/executor.py's MLP (any dtype, any size).
MLP_LOSS = (Path(__file__).resolve().parents[1] / "examples" / "mlp_loss.ir").read_text()
LR = 1e-3


@dataclass
class Device:
    """What the checks run on: CuPy on the GPU, or NumPy for a dry run on the CPU."""

    xp: Any
    backend: str
    torch_device: str
    sync: Callable[[], None]
    to_host: Callable[[Any], np.ndarray]
    array_type: type
    free: Callable[[], None]


def open_device(dry_run: bool) -> Device:
    if dry_run:
        return Device(np, "numpy", "cpu", lambda: None, np.asarray, np.ndarray, lambda: None)
    import cupy  # GPU machines only

    pool = cupy.get_default_memory_pool()
    return Device(
        cupy, "cupy", "cuda", cupy.cuda.Device().synchronize, cupy.asnumpy, cupy.ndarray, pool.free_all_blocks
    )


# -- 1 and 2: correctness and the device boundary ------------------------------------
def check_correctness(device: Device) -> int:
    xp = device.xp
    rng = np.random.default_rng(0)
    shapes = [(64, 32), (32, 32), (32,), (32, 1), (1,)]
    inputs = [rng.standard_normal(s) * 0.3 for s in shapes]
    failures = 0

    graph = parse_ir(MLP)
    ours_np = run_graph(graph, [a.copy() for a in inputs])
    ours_dev = run_graph(graph, [xp.asarray(a) for a in inputs], backend=device.backend)
    same = np.allclose(ours_np[0], ours_dev[0], rtol=1e-12) and ours_np[1] == ours_dev[1]
    print(f"forward with buffer reuse, numpy vs {device.backend}: {'ok' if same else 'MISMATCH'} ({float(ours_np[0])!r})")
    failures += not same
    on_host = isinstance(ours_dev[0], np.ndarray)
    print(f"run_graph gives host arrays at the user's edge: {'ok' if on_host else 'NO: ' + type(ours_dev[0]).__name__}")
    failures += not on_host

    grads = {}
    for backend in ("numpy", device.backend):
        to = (lambda a: xp.asarray(a)) if backend == device.backend else (lambda a: a.copy())
        tensors = [Tensor(to(a), requires_grad=True) for a in inputs]
        executor = GraphExecutor(parse_ir(MLP), backend=backend)
        for _ in range(3):  # the plan cache hits after the first run
            for t in tensors:
                t.grad = None
            loss, _ = executor.run(tensors)
            loss.backward()
        if backend == device.backend:
            kept = all(isinstance(v, device.array_type) for v in [loss.data, *(t.grad.data for t in tensors)])
            print(f"{backend}: the loss and the gradients stay {device.array_type.__module__} arrays: "
                  f"{'ok' if kept else 'NO'}")
            failures += not kept
        grads[backend] = [device.to_host(t.grad.data) for t in tensors]
        print(f"{backend}: executor plan cache hits {executor.cache_hits}, misses {executor.cache_misses}")
    for index, (a, b) in enumerate(zip(grads["numpy"], grads[device.backend], strict=True)):
        ok = np.allclose(a, b, rtol=1e-10, atol=1e-12)
        failures += not ok
        print(f"gradient of input {index}: {'ok' if ok else 'MISMATCH'} (max |diff| {np.max(np.abs(a - b)):.3g})")
    return failures


# -- 3: the MLP training step, every contender -----------------------------------------
def mlp_problem(xp: Any, n: int, d: int) -> list[Any]:
    """x, target, w1, b1, w2, b2, w3, b3 in float32, seeded, on ``xp``."""
    rng = np.random.default_rng(0)
    scale = 1.0 / np.sqrt(d)
    host = [rng.standard_normal((n, d)), rng.uniform(size=(n, 1))]
    host += [rng.standard_normal(s) * scale for s in ((d, d), (d,), (d, d), (d,), (d, 1), (1,))]
    return [xp.asarray(a.astype(np.float32)) for a in host]


def by_hand_step(xp: Any, values: list[Any]) -> Callable[[], Any]:
    """The step written by hand on ``xp`` (forward, backward, in-place SGD)."""
    x, target, *params = values

    def step() -> list[Any]:
        w1, b1, w2, b2, w3, b3 = params
        h1 = xp.tanh(x @ w1 + b1)
        h2 = xp.tanh(h1 @ w2 + b2)
        y = 1.0 / (1.0 + xp.exp(-(h2 @ w3 + b3)))
        d = y - target
        g_a3 = (2.0 / d.size) * d * y * (1.0 - y)
        g_w3, g_b3 = h2.T @ g_a3, g_a3.sum(0)
        g_a2 = (g_a3 @ w3.T) * (1.0 - h2 * h2)
        g_w2, g_b2 = h1.T @ g_a2, g_a2.sum(0)
        g_a1 = (g_a2 @ w2.T) * (1.0 - h1 * h1)
        g_w1, g_b1 = x.T @ g_a1, g_a1.sum(0)
        grads = [g_w1, g_b1, g_w2, g_b2, g_w3, g_b3]
        for p, g in zip(params, grads, strict=True):
            p -= LR * g
        return grads

    return step


def gradview_step(device: Device, values: list[Any]) -> Callable[[], Any]:
    executor = GraphExecutor(parse_ir(MLP_LOSS), backend=device.backend)
    tensors = [Tensor(v, requires_grad=i >= 2) for i, v in enumerate(values)]
    params = tensors[2:]

    def step() -> list[Any]:
        (loss,) = executor.run(tensors)
        grads = grad([loss], params)
        for p, g in zip(params, grads, strict=True):  # optimizer.step()
            p.data -= LR * g.data
        return [g.data for g in grads]

    return step


def torch_step(device: Device, values: list[Any], scripted: bool) -> Callable[[], Any]:
    import torch

    def mlp_loss(x: torch.Tensor, target: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor,
                 w2: torch.Tensor, b2: torch.Tensor, w3: torch.Tensor, b3: torch.Tensor) -> torch.Tensor:
        h1 = torch.tanh(x @ w1 + b1)
        h2 = torch.tanh(h1 @ w2 + b2)
        y = torch.sigmoid(h2 @ w3 + b3)
        return ((y - target) * (y - target)).mean()

    fn = torch.jit.script(mlp_loss) if scripted else mlp_loss
    tensors = [torch.as_tensor(device.to_host(v), device=device.torch_device) for v in values]
    params = [t.requires_grad_(True) for t in tensors[2:]]

    def step() -> list[Any]:
        grads = torch.autograd.grad(fn(*tensors), params)
        with torch.no_grad():
            for p, g in zip(params, grads, strict=True):
                p -= LR * g
        return list(grads)

    return step


def torch_available(device: Device) -> str | None:
    """Why the torch contenders cannot run here, or None."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if device.torch_device == "cuda" and not torch.cuda.is_available():
        return "torch has no CUDA here"
    return None


def time_step(device: Device, step: Callable[[], Any], steps: int, rounds: int, warmup: int = 5) -> float:
    """Seconds per step: the best of ``rounds`` rounds of ``steps`` synchronized steps."""
    for _ in range(warmup):  # plans compiled, TorchScript's profiling runs done, pools filled
        step()
    device.sync()
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        device.sync()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        device.sync()
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def check_step_gradients(device: Device, n: int, d: int) -> int:
    """One step's gradients, gradview against CuPy by hand (float32)."""
    ours = gradview_step(device, mlp_problem(device.xp, n, d))()
    theirs = by_hand_step(device.xp, mlp_problem(device.xp, n, d))()
    worst = max(
        float(np.max(np.abs(device.to_host(a) - device.to_host(b))) / (np.max(np.abs(device.to_host(b))) + 1e-30))
        for a, b in zip(ours, theirs, strict=True)
    )
    ok = worst < 1e-4
    print(f"training step {n}x{d}: gradients of gradview = CuPy by hand: {'ok' if ok else 'MISMATCH'} "
          f"(worst relative diff {worst:.2g})")
    return 0 if ok else 1


def time_sizes(device: Device, sizes: list[tuple[int, int]], rounds: int) -> None:
    missing = torch_available(device)
    if missing:
        print(f"PyTorch eager and TorchScript contenders left out: {missing}")
    for index, (n, d) in enumerate(sizes):
        steps = max(3, min(100, int(2e10 / (6 * n * d * d))))  # about a second a round
        figures: dict[str, float] = {}
        contenders: dict[str, Callable[[list[Any]], Callable[[], Any]]] = {
            "gradview": lambda v: gradview_step(device, v),
            "CuPy by hand" if device.backend == "cupy" else "NumPy by hand": lambda v: by_hand_step(device.xp, v),
        }
        if not missing:
            contenders["PyTorch eager"] = lambda v: torch_step(device, v, scripted=False)
            contenders["TorchScript"] = lambda v: torch_step(device, v, scripted=True)
        for name, make in contenders.items():
            figures[name] = time_step(device, make(mlp_problem(device.xp, n, d)), steps, rounds)
            device.free()
        line = ", ".join(f"{name} {_format(t)}" for name, t in figures.items())
        print(f"MLP training step {n}x{d}x{d}x{d} float32 ({device.torch_device}): {line}")
        by_hand = figures[next(k for k in figures if k.endswith("by hand"))]
        ratio = figures["gradview"] / by_hand
        print(f"    gradview / by hand: {ratio:.2f}x (target <= 1.2x: {'met' if ratio <= 1.2 else 'NOT met'})")
        if "TorchScript" in figures:
            versus = figures["TorchScript"] / figures["gradview"]
            target = f" (target > 1x at the small size: {'met' if versus > 1 else 'NOT met'})" if index == 0 else ""
            print(f"    gradview {versus:.2f}x as fast as TorchScript{target}")


def _format(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} us"


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--sizes", default=None, help="N x D sizes, e.g. 64x256,4096x4096")
    cli.add_argument("--rounds", type=int, default=5)
    cli.add_argument("--cpu-dry-run", action="store_true", help="NumPy for CuPy, torch on the CPU, small sizes")
    args = cli.parse_args()
    default = "16x32,64x64" if args.cpu_dry_run else "64x256,4096x4096"
    sizes = [tuple(int(v) for v in s.split("x")) for s in (args.sizes or default).split(",")]
    device = open_device(args.cpu_dry_run)
    failures = check_correctness(device)
    failures += check_step_gradients(device, *sizes[0])
    time_sizes(device, sizes, args.rounds)  # type: ignore[arg-type]
    print("FAILED" if failures else "all device checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

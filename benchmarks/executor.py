"""One MLP training step through GraphExecutor, against hand-written NumPy,
PyTorch eager and torch.jit.script, single-threaded, in one run.

MLP: batch 64, 256-256-256-1, tanh, tanh, sigmoid, mean squared error; a
step is forward, backward and an SGD update. Prints microseconds per step
and the ratios. Targets: at most 1.2x the NumPy time, faster than TorchScript.
Each contender is timed in fresh processes of its own (see main).

    .venv/bin/python benchmarks/executor.py [--steps N]
"""

from __future__ import annotations

import os

# Single-threaded BLAS for every contender (set before NumPy/torch load).
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
from timing import best_time  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

from gradview.ir import parse_ir  # noqa: E402
from gradview.runtime import Tensor  # noqa: E402
from gradview.runtime.executor import GraphExecutor  # noqa: E402

SIZES = [(256, 256), (256,), (256, 256), (256,), (256, 1), (1,)]
LR = 1e-3
LOSS_GRAPH = """graph(%x : Tensor, %target : Tensor, %w1 : Tensor, %b1 : Tensor, %w2 : Tensor, %b2 : Tensor,
      %w3 : Tensor, %b3 : Tensor):
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %m1 : Tensor = aten::matmul(%x, %w1)
  %a1 : Tensor = aten::add(%m1, %b1, %one)
  %h1 : Tensor = aten::tanh(%a1)
  %m2 : Tensor = aten::matmul(%h1, %w2)
  %a2 : Tensor = aten::add(%m2, %b2, %one)
  %h2 : Tensor = aten::tanh(%a2)
  %m3 : Tensor = aten::matmul(%h2, %w3)
  %a3 : Tensor = aten::add(%m3, %b3, %one)
  %y : Tensor = aten::sigmoid(%a3)
  %d : Tensor = aten::sub(%y, %target, %one)
  %sq : Tensor = aten::mul(%d, %d)
  %loss : Tensor = aten::mean(%sq, %none)
  return (%loss)
"""


def numpy_step(x: np.ndarray, target: np.ndarray, params: list[np.ndarray]) -> float:
    w1, b1, w2, b2, w3, b3 = params
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    y = 1.0 / (1.0 + np.exp(-(h2 @ w3 + b3)))
    d = y - target
    loss = float(np.mean(d * d))
    g_y = 2.0 * d / d.size
    g_a3 = g_y * y * (1.0 - y)
    g_w3, g_b3 = h2.T @ g_a3, g_a3.sum(0)
    g_a2 = (g_a3 @ w3.T) * (1.0 - h2 * h2)
    g_w2, g_b2 = h1.T @ g_a2, g_a2.sum(0)
    g_a1 = (g_a2 @ w2.T) * (1.0 - h1 * h1)
    g_w1, g_b1 = x.T @ g_a1, g_a1.sum(0)
    for p, g in zip(params, (g_w1, g_b1, g_w2, g_b2, g_w3, g_b3), strict=True):
        p -= LR * g
    return loss


def contender(name: str) -> Callable[[], object]:
    """One training step of contender ``name`` on the shared seeded problem."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256))
    target = rng.uniform(size=(64, 1))
    init = [rng.standard_normal(s) * 0.05 for s in SIZES]
    if name == "numpy":
        np_params = [p.copy() for p in init]
        return lambda: numpy_step(x, target, np_params)
    if name == "gradview":
        executor = GraphExecutor(parse_ir(LOSS_GRAPH))
        params = [Tensor(p.copy(), requires_grad=True) for p in init]
        tx, tt = Tensor(x), Tensor(target)

        def gradview_step() -> None:
            (loss,) = executor.run([tx, tt, *params])
            loss.backward()
            for p in params:  # optimizer.step()
                p.data -= LR * p.grad.data
            for p in params:  # optimizer.zero_grad(set_to_none=True)
                p.grad = None

        return gradview_step
    import torch

    torch.set_num_threads(1)
    t_params = [torch.tensor(p.copy(), requires_grad=True) for p in init]
    t_x, t_target = torch.tensor(x), torch.tensor(target)

    def mlp_loss(x, target, w1, b1, w2, b2, w3, b3):  # noqa: ANN001, ANN202, PLR0913
        h1 = torch.tanh(x @ w1 + b1)
        h2 = torch.tanh(h1 @ w2 + b2)
        y = torch.sigmoid(h2 @ w3 + b3)
        return ((y - target) * (y - target)).mean()

    fn = torch.jit.script(mlp_loss) if name == "script" else mlp_loss

    def torch_step() -> None:
        loss = fn(t_x, t_target, *t_params)
        loss.backward()
        with torch.no_grad():
            for p in t_params:
                p -= LR * p.grad
        for p in t_params:
            p.grad = None

    return torch_step


def run_one(name: str, steps: int, rounds: int) -> float:
    """Seconds per step of ``name``, the best of ``rounds`` rounds, in this process."""
    step = contender(name)
    for _ in range(3):
        step()  # warm-up: plans compile, scripted functions optimize
    return best_time(step, repeat=rounds, number=steps)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--steps", type=int, default=30, help="steps per round")
    cli.add_argument("--rounds", type=int, default=5, help="rounds per process")
    cli.add_argument("--processes", type=int, default=4, help="fresh processes per contender, taking turns")
    cli.add_argument("--one", metavar="NAME", help=argparse.SUPPRESS)  # internal: time one contender
    cli.add_argument("--keep-freed", action="store_true", help=argparse.SUPPRESS)  # internal: see below
    args = cli.parse_args()
    if args.one:
        if args.keep_freed:
            keep_freed_memory()
        print(json.dumps(run_one(args.one, args.steps, args.rounds)))
        return
    names = ["numpy", "gradview"]
    try:
        import torch  # noqa: F401 - only to learn whether the PyTorch contenders can run
    except ImportError:
        pass
    else:
        names += ["eager", "script"]
    # Each contender runs in fresh processes of its own, the contenders taking
    # turns: timing them in one process measured the heap each left to the
    # next (and whatever importing torch does to it) as much as the steps.
    # Two allocator settings: glibc's default, which hands big freed blocks
    # back to the kernel (a step then pays page faults for fresh memory), and
    # one that keeps freed memory for reuse. Merely importing torch made the
    # NumPy step 1.5x faster, and keeping freed memory has the same effect.
    for keep_freed in (False, True):
        best = dict.fromkeys(names, float("inf"))
        for _ in range(args.processes):
            for name in names:
                command = [sys.executable, __file__, "--one", name, "--steps", str(args.steps), "--rounds", str(args.rounds)]
                if keep_freed:
                    command.append("--keep-freed")
                done = subprocess.run(command, capture_output=True, text=True, check=True)
                best[name] = min(best[name], json.loads(done.stdout.strip().splitlines()[-1]))
        ours, ours_numpy = best["gradview"], best["numpy"]
        setting = "freed memory kept for reuse" if keep_freed else "glibc's default allocator"
        print(f"one training step, MLP batch 64, 256-256-256-1, single thread, {setting} "
              f"(best of {args.processes} fresh processes x {args.rounds} rounds of {args.steps} steps)")
        print(f"  hand-written NumPy : {ours_numpy * 1e6:8.0f} us")
        print(f"  gradview executor  : {ours * 1e6:8.0f} us   {ours / ours_numpy:.2f}x NumPy (target <= 1.2x)")
        if "eager" in best:
            eager, scripted = best["eager"], best["script"]
            print(f"  PyTorch eager      : {eager * 1e6:8.0f} us   gradview is {eager / ours:.2f}x its speed")
            print(f"  torch.jit.script   : {scripted * 1e6:8.0f} us   gradview is {scripted / ours:.2f}x its speed"
                  " (target > 1)")


def keep_freed_memory() -> None:
    """Ask glibc to keep freed blocks for reuse instead of returning them to the kernel."""
    import ctypes  # noqa: PLC0415

    libc = ctypes.CDLL("libc.so.6")
    m_trim_threshold, m_mmap_threshold = -1, -3
    libc.mallopt(m_mmap_threshold, 64 << 20)
    libc.mallopt(m_trim_threshold, 256 << 20)


if __name__ == "__main__":
    main()

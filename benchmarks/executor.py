"""One MLP training step through GraphExecutor, against hand-written NumPy,
PyTorch eager and torch.jit.script, single-threaded, in one run.

MLP: batch 64, 256-256-256-1, tanh, tanh, sigmoid, mean squared error; a
step is forward, backward and an SGD update. Prints microseconds per step
and the ratios. Targets: at most 1.2x the NumPy time, faster than TorchScript.

    .venv/bin/python benchmarks/executor.py [--steps N]
"""

from __future__ import annotations

import os

# Single-threaded BLAS for every contender (set before NumPy/torch load).
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
from timing import best_times_interleaved  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

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


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--steps", type=int, default=20, help="steps per round")
    cli.add_argument("--rounds", type=int, default=10)
    args = cli.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256))
    target = rng.uniform(size=(64, 1))
    init = [rng.standard_normal(s) * 0.05 for s in SIZES]

    np_params = [p.copy() for p in init]
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

    contenders: dict[str, Callable[[], object]] = {
        "numpy": lambda: numpy_step(x, target, np_params),
        "gradview": gradview_step,
    }
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        t_params = [torch.tensor(p.copy(), requires_grad=True) for p in init]
        t_x, t_target = torch.tensor(x), torch.tensor(target)

        def mlp_loss(x, target, w1, b1, w2, b2, w3, b3):  # noqa: ANN001, ANN202, PLR0913
            h1 = torch.tanh(x @ w1 + b1)
            h2 = torch.tanh(h1 @ w2 + b2)
            y = torch.sigmoid(h2 @ w3 + b3)
            return ((y - target) * (y - target)).mean()

        def torch_step(fn: Callable[..., torch.Tensor]) -> Callable[[], None]:
            def step() -> None:
                loss = fn(t_x, t_target, *t_params)
                loss.backward()
                with torch.no_grad():
                    for p in t_params:
                        p -= LR * p.grad
                for p in t_params:
                    p.grad = None

            return step

        contenders["eager"] = torch_step(mlp_loss)
        contenders["script"] = torch_step(torch.jit.script(mlp_loss))
    times = best_times_interleaved(contenders, rounds=args.rounds, number=args.steps)
    ours, ours_numpy = times["gradview"], times["numpy"]
    print("one training step, MLP batch 64, 256-256-256-1, single thread "
          f"(best of {args.rounds} interleaved rounds of {args.steps} steps)")
    print(f"  hand-written NumPy : {ours_numpy * 1e6:8.0f} us")
    print(f"  gradview executor  : {ours * 1e6:8.0f} us   {ours / ours_numpy:.2f}x NumPy (target <= 1.2x)")
    if torch is None:
        return
    eager, scripted = times["eager"], times["script"]
    print(f"  PyTorch eager      : {eager * 1e6:8.0f} us   gradview is {eager / ours:.2f}x its speed")
    print(f"  torch.jit.script   : {scripted * 1e6:8.0f} us   gradview is {scripted / ours:.2f}x its speed"
          " (target > 1)")


if __name__ == "__main__":
    main()

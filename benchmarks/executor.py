"""One training step through GraphExecutor, against hand-written NumPy, PyTorch
eager and torch.jit.script, single-threaded, float64, every contender in one run.

Three models; a step is forward, backward and an SGD update:

- mlp: batch 64, 256-256-256-1, tanh, tanh, sigmoid, mean squared error.
  Targets: gradview faster than torch.jit.script, and at most 1.1x the
  hand-written NumPy step with freed memory kept for reuse.
- lstm: two stacked nn.LSTMCell (256 -> 256 -> 256), batch 64, one time step,
  mean squared error of the top hidden state (figures only).
- conv: Conv2d(3, 16, 3) ReLU MaxPool2d Conv2d(16, 32, 3) ReLU MaxPool2d
  Linear(2048, 10), cross-entropy, batch 32 of 3x32x32 (figures only: NumPy
  has no fast convolution).

gradview runs the lstm and conv modules through ``from_torch`` (traced) and
GraphExecutor. Each contender is timed in fresh processes of its own, the
contenders taking turns, under the settings a user gets: gradview's runtime
keeps freed memory for reuse when it loads (gradview.runtime.allocator);
"gradview, allocator left alone" sets GRADVIEW_KEEP_FREED_MEMORY=0 to show
what that buys; NumPy runs under glibc's default and with the same setting.

    .venv/bin/python benchmarks/executor.py [--models mlp,lstm,conv] [--processes N]
"""

from __future__ import annotations

import os

# Single-threaded BLAS for every contender (set before NumPy/torch load).
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

# Nothing from gradview is imported at module level: importing gradview.runtime
# changes the allocator, and the NumPy and torch contenders must run without it.

LR = 1e-3
MLP_SIZES = [(256, 256), (256,), (256, 256), (256,), (256, 1), (1,)]
# The training step's loss, shared with scripts/device_check.py.
MLP_GRAPH = (Path(__file__).resolve().parents[1] / "examples" / "mlp_loss.ir").read_text()

# (label, how it runs, extra environment) per contender; "how" is the step builder's key.
NUMPY_DEFAULT = "NumPy by hand, glibc's default allocator"
NUMPY_KEPT = "NumPy by hand, freed memory kept"
GRADVIEW = "gradview executor"
GRADVIEW_ALONE = "gradview, allocator left alone"
EAGER = "PyTorch eager"
SCRIPT = "torch.jit.script"
CONTENDERS: dict[str, tuple[str, dict[str, str]]] = {
    NUMPY_DEFAULT: ("numpy", {}),
    NUMPY_KEPT: ("numpy-kept", {}),
    GRADVIEW: ("gradview", {}),
    GRADVIEW_ALONE: ("gradview", {"GRADVIEW_KEEP_FREED_MEMORY": "0"}),
    EAGER: ("eager", {}),
    SCRIPT: ("script", {}),
}
MODELS: dict[str, list[str]] = {
    "mlp": [NUMPY_DEFAULT, NUMPY_KEPT, GRADVIEW, GRADVIEW_ALONE, EAGER, SCRIPT],
    "lstm": [GRADVIEW, EAGER, SCRIPT],
    "conv": [GRADVIEW, EAGER, SCRIPT],
}
TITLES = {
    "mlp": "MLP, batch 64, 256-256-256-1",
    "lstm": "2-layer LSTM cell, batch 64, 256-256-256, one time step",
    "conv": "conv net, batch 32, 3x32x32, conv16-pool-conv32-pool-linear10",
}


# -- the models in PyTorch (for eager, script, and from_torch) ---------------------------------
def torch_model(model: str) -> tuple[Any, tuple[Any, ...]]:
    """A seeded float64 module whose forward returns the loss, and its inputs."""
    import torch
    from torch import nn

    class TwoLayerLSTMCell(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cell1 = nn.LSTMCell(256, 256)
            self.cell2 = nn.LSTMCell(256, 256)

        def forward(self, x, h1, c1, h2, c2, target):
            h1, c1 = self.cell1(x, (h1, c1))
            h2, c2 = self.cell2(h1, (h2, c2))
            return nn.functional.mse_loss(h2, target)

    class ConvNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
            self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
            self.fc = nn.Linear(32 * 8 * 8, 10)

        def forward(self, x, target):
            x = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
            x = nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
            return nn.functional.cross_entropy(self.fc(torch.flatten(x, 1)), target)

    torch.manual_seed(0)
    if model == "lstm":
        randn = [torch.randn(64, 256, dtype=torch.float64) for _ in range(6)]
        return TwoLayerLSTMCell().double(), tuple(randn)
    x = torch.randn(32, 3, 32, 32, dtype=torch.float64)
    return ConvNet().double(), (x, torch.randint(0, 10, (32,)))


def export_for_gradview(model: str, folder: Path) -> None:
    """from_torch once in the parent: the gradview processes then never import torch."""
    from gradview.ir import from_torch

    module, inputs = torch_model(model)
    graph, values = from_torch(module, inputs, how="trace")
    (folder / f"{model}.ir").write_text(str(graph))
    np.savez(folder / f"{model}.npz", *[np.asarray(v) for v in values])
    (folder / f"{model}.json").write_text(json.dumps({"inputs": len(inputs)}))


# -- the steps -----------------------------------------------------------------------------------
def numpy_mlp_step(x: np.ndarray, target: np.ndarray, params: list[np.ndarray]) -> float:
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


def mlp_problem() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256))
    target = rng.uniform(size=(64, 1))
    return x, target, [rng.standard_normal(s) * 0.05 for s in MLP_SIZES]


def gradview_step(graph_text: str, values: list[Any], n_inputs: int) -> Callable[[], None]:
    """run, backward, SGD on every parameter (the graph inputs after the first ``n_inputs``)."""
    from gradview.ir import parse_ir
    from gradview.runtime import Tensor
    from gradview.runtime.executor import GraphExecutor

    executor = GraphExecutor(parse_ir(graph_text))
    tensors = [Tensor(np.array(v), requires_grad=i >= n_inputs) for i, v in enumerate(values)]
    params = tensors[n_inputs:]

    def step() -> None:
        (loss,) = executor.run(tensors)
        loss.backward()
        for p in params:  # optimizer.step()
            p.data -= LR * p.grad.data
        for p in params:  # optimizer.zero_grad(set_to_none=True)
            p.grad = None

    return step


def torch_step(fn: Any, inputs: tuple[Any, ...], params: list[Any]) -> Callable[[], None]:
    import torch

    def step() -> None:
        loss = fn(*inputs)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= LR * p.grad
        for p in params:
            p.grad = None

    return step


def contender(model: str, how: str, folder: Path) -> Callable[[], object]:
    """One training step of ``how`` on ``model``'s seeded problem."""
    if how in ("numpy", "numpy-kept"):
        if how == "numpy-kept":
            from gradview.runtime.allocator import keep_freed_memory

            keep_freed_memory()
        x, target, params = mlp_problem()
        return lambda: numpy_mlp_step(x, target, params)
    if how == "gradview":
        if model == "mlp":
            x, target, params = mlp_problem()
            return gradview_step(MLP_GRAPH, [x, target, *params], 2)
        with np.load(folder / f"{model}.npz") as saved:
            values = [saved[f"arr_{i}"] for i in range(len(saved.files))]
        n_inputs = json.loads((folder / f"{model}.json").read_text())["inputs"]
        return gradview_step((folder / f"{model}.ir").read_text(), values, n_inputs)
    import torch

    torch.set_num_threads(1)
    if model == "mlp":
        x, target, init = mlp_problem()
        params = [torch.tensor(p, requires_grad=True) for p in init]

        def mlp_loss(x, target, w1, b1, w2, b2, w3, b3):
            h1 = torch.tanh(x @ w1 + b1)
            h2 = torch.tanh(h1 @ w2 + b2)
            y = torch.sigmoid(h2 @ w3 + b3)
            return ((y - target) * (y - target)).mean()

        fn = torch.jit.script(mlp_loss) if how == "script" else mlp_loss
        return torch_step(fn, (torch.tensor(x), torch.tensor(target), *params), params)
    module, inputs = torch_model(model)
    fn = torch.jit.script(module) if how == "script" else module
    return torch_step(fn, inputs, list(module.parameters()))


def run_one(model: str, how: str, folder: Path, steps: int, rounds: int) -> dict[str, float]:
    """Seconds per step in this process, wall-clock and CPU time, each the best of ``rounds``.

    The same rule as timing.best_time (garbage collected before each round,
    the best round kept), with the process's CPU time read alongside: on a
    machine other jobs share, wall-clock time counts the time the step waited
    for a core, CPU time does not.
    """
    step = contender(model, how, folder)
    for _ in range(3):
        step()  # warm-up: plans compile, scripted functions optimize
    wall = cpu = float("inf")
    for _ in range(rounds):
        gc.collect()
        wall_start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(steps):
            step()
        wall = min(wall, (time.perf_counter() - wall_start) / steps)
        cpu = min(cpu, (time.process_time() - cpu_start) / steps)
    return {"wall": wall, "cpu": cpu}


def time_all(models: list[str], args: argparse.Namespace, folder: Path) -> dict[str, dict[str, dict[str, float]]]:
    """The best wall and CPU time of every contender of every model, fresh processes taking turns."""
    inf = float("inf")
    best = {model: {label: {"wall": inf, "cpu": inf} for label in MODELS[model]} for model in models}
    for _ in range(args.processes):
        for model in models:
            steps = args.steps if model != "conv" else max(1, args.steps // 3)
            for label in MODELS[model]:
                how, extra = CONTENDERS[label]
                command = [sys.executable, __file__, "--one", f"{model}:{how}", "--folder", str(folder),
                           "--steps", str(steps), "--rounds", str(args.rounds)]
                done = subprocess.run(command, capture_output=True, text=True, check=False, env={**os.environ, **extra})
                if done.returncode != 0:
                    raise SystemExit(f"{model} / {label} failed:\n{done.stderr}")
                seconds = json.loads(done.stdout.strip().splitlines()[-1])
                for clock in ("wall", "cpu"):
                    best[model][label][clock] = min(best[model][label][clock], seconds[clock])
    return best


def report(models: list[str], best: dict[str, dict[str, dict[str, float]]], args: argparse.Namespace) -> None:
    print(f"one training step, single thread, float64; best of {args.processes} fresh processes "
          f"x {args.rounds} rounds (conv: a third of the steps per round); wall-clock and CPU time")

    def ratio(name: str, label: str, other: str, target: str = "") -> str:
        values = [times[label][clock] / times[other][clock] for clock in ("wall", "cpu")]
        return f"  {name:<44}: {values[0]:6.2f}  {values[1]:6.2f}{target}"

    for model in models:
        times = best[model]
        print(f"\n{TITLES[model]}\n  {'':<44}   wall us    cpu us")
        for label, seconds in times.items():
            print(f"  {label:<44}: {seconds['wall'] * 1e6:8.0f}  {seconds['cpu'] * 1e6:8.0f}")
        print(ratio("gradview / torch.jit.script", GRADVIEW, SCRIPT, "   (MLP target < 1)" if model == "mlp" else ""))
        print(ratio("gradview / PyTorch eager", GRADVIEW, EAGER))
        if model == "mlp":
            print(ratio("gradview / NumPy with memory kept", GRADVIEW, NUMPY_KEPT, "   (target <= 1.1)"))
            print(ratio("gradview / NumPy, glibc's default", GRADVIEW, NUMPY_DEFAULT))
            print(ratio("gradview allocator left alone / gradview", GRADVIEW_ALONE, GRADVIEW))


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--models", default="mlp,lstm,conv", help="comma-separated: mlp, lstm, conv")
    cli.add_argument("--steps", type=int, default=30, help="steps per round")
    cli.add_argument("--rounds", type=int, default=5, help="rounds per process")
    cli.add_argument("--processes", type=int, default=3, help="fresh processes per contender, taking turns")
    cli.add_argument("--one", metavar="MODEL:HOW", help=argparse.SUPPRESS)  # internal: time one contender
    cli.add_argument("--folder", help=argparse.SUPPRESS)  # internal: where the exported graphs are
    args = cli.parse_args()
    if args.one:
        model, how = args.one.split(":")
        print(json.dumps(run_one(model, how, Path(args.folder), args.steps, args.rounds)))
        return
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        cli.error(f"unknown model(s) {unknown}; choose from {list(MODELS)}")
    try:
        import torch  # noqa: F401 - the comparison needs PyTorch
    except ImportError:
        raise SystemExit("benchmarks/executor.py compares with PyTorch: pip install torch") from None
    start_load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="gradview-bench-") as name:
        folder = Path(name)
        for model in models:
            if model != "mlp":
                export_for_gradview(model, folder)
        best = time_all(models, args, folder)
    report(models, best, args)
    load = ", ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(start_load, os.getloadavg(), strict=True))
    print(f"\nload average (1, 5, 15 min) at start/end: {load} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()

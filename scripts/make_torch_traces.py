"""Make the TORCH_TRACE logs the tests keep as fixtures (issue 13).

Each model below is compiled with ``torch.compile(..., backend="aot_eager")``
and run forward and backward once, in its own Python process with
``TORCH_TRACE`` pointing at a fresh directory: PyTorch's structured trace
then writes one log whose ``aot_joint_graph``, ``aot_forward_graph`` and
``aot_backward_graph`` entries are AOTAutograd's graphs (a forward that
returns the values saved for backward, a backward that reads them). The log
is copied to ``tests/data/torch_trace/<name>.log``.

The models are the ones issue 13 names: an MLP, LayerNorm + GELU, attention
(softmax, bmm), conv + batch norm in training + ReLU, an LSTM-cell step, a
float64 function, and a function with a graph break (two compiled graphs in
one log); and the MLP once more with Inductor, whose log adds the graphs after
its post-grad passes, a function under dynamic shapes, a transformer encoder
layer (fused attention, dropout) and a slice assignment. Needs PyTorch (the ``oracle`` extra); runs on a CPU in about ten
seconds per model.

    .venv/bin/python scripts/make_torch_traces.py [--out tests/data/torch_trace] [NAME ...]

The real models' logs (ResNet-18 and the 12-layer TransformerEncoder of
``examples/``, 1.3 and 1.8 MB) are not kept: ``tests/real_model_logs.py``
makes them when a test or benchmark asks, as ``--compile`` does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Each program runs in a fresh interpreter (TORCH_TRACE is read when torch is
# imported); every one seeds, compiles with aot_eager, and runs one backward.
_PRELUDE = """
import torch
torch.manual_seed(0)
def train(fn, *inputs, backend="aot_eager", dynamic=None):
    compiled = torch.compile(fn, backend=backend, dynamic=dynamic)
    out = compiled(*inputs)
    out = out if isinstance(out, torch.Tensor) else sum(o.sum() for o in out)
    out.sum().backward()
"""

MODELS: dict[str, str] = {
    "mlp": """
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
train(model, torch.randn(8, 16))
""",
    # Inductor (torch.compile's default backend; needs a C++ compiler): the log also
    # holds each graph after Inductor's post-grad passes.
    "mlp_inductor": """
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
train(model, torch.randn(8, 16), backend="inductor")
""",
    # Dynamic shapes: sizes are symbols (f32[s77, s27]), Sym(s77) values are saved, sizes
    # are computed with Python's operators and strides hold Max(1, ...);
    # an in-place update of a global buffer becomes aten.copy_ in the forward, a slice a slice_backward.
    "dynamic": """
buf = torch.zeros(6, 6)
def f(x, w):
    y = torch.tanh(x @ w)
    buf.add_(y.detach())
    z = y.reshape(x.shape[0] * 2, -1)  # arithmetic on sizes: mul_6: "Sym(2*s77)" = primals_1 * 2
    return y[:, :3].sum(dim=1), y.view(-1), z[: x.shape[0] // 2 + 1]
train(f, torch.randn(6, 8), torch.randn(8, 6, requires_grad=True), dynamic=True)
""",
    # A transformer encoder layer in training: PyTorch's fused CPU attention
    # (_scaled_dot_product_flash_attention_for_cpu and its backward) and dropout.
    "transformer": """
model = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True)
train(model, torch.randn(2, 5, 16))
""",
    # A slice assignment on a copy: aten.copy and slice_scatter in the graphs.
    "slice_write": """
def f(x, w):
    y = x @ w
    z = y.clone()
    z[:, :2] = torch.sigmoid(y[:, :2])
    return z.pow(2).mean()
train(f, torch.randn(4, 6), torch.randn(6, 5, requires_grad=True))
""",
    "layernorm_gelu": """
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.GELU(), torch.nn.Linear(32, 16))
train(model, torch.randn(4, 8, 16))
""",
    "attention": """
class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(16, 48)
        self.out = torch.nn.Linear(16, 16)
    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        weights = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / 4.0, dim=-1)
        return self.out(torch.bmm(weights, v))
train(Attention(), torch.randn(2, 8, 16))
""",
    "conv_bn_relu": """
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU())
model.train()
train(model, torch.randn(2, 3, 8, 8))
""",
    "lstm_cell": """
cell = torch.nn.LSTMCell(8, 16)
def step(x, h, c):
    return cell(x, (h, c))
train(step, torch.randn(4, 8), torch.randn(4, 16), torch.randn(4, 16))
""",
    "float64": """
def f(x, w):
    return torch.sin(x @ w).exp().mean(dim=1)
train(f, torch.randn(5, 6, dtype=torch.float64, requires_grad=True), torch.randn(6, 3, dtype=torch.float64, requires_grad=True))
""",
    "graph_break": """
def f(x, w):
    h = torch.tanh(x @ w)
    torch._dynamo.graph_break()
    return (h * h).sigmoid().sum(dim=0)
train(f, torch.randn(4, 8, requires_grad=True), torch.randn(8, 8, requires_grad=True))
""",
}


def make(name: str, out_dir: Path) -> Path:
    """Run model ``name`` under a temporary TORCH_TRACE; the log lands at ``out_dir/<name>.log``."""
    with tempfile.TemporaryDirectory() as trace_dir, tempfile.TemporaryDirectory() as code_dir:
        # No compile caches: a cache hit skips the passes, and with them the post-grad graphs.
        env = {**os.environ, "TORCH_TRACE": trace_dir, "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}
        # A file (not ``python -c``), so the graphs' nodes carry "# File: <name>.py:LINE"
        # comments naming the model's source lines. Run from its directory: the comments
        # then name the file as the tests expect to see a user's model named.
        program = Path(code_dir) / f"{name}.py"
        program.write_text(_PRELUDE + MODELS[name], encoding="utf-8")
        subprocess.run([sys.executable, program.name], env=env, check=True, timeout=600, cwd=code_dir)
        logs = sorted(Path(trace_dir).glob("*.log"))
        if len(logs) != 1:
            raise RuntimeError(f"{name}: expected one log in the trace directory, found {len(logs)}")
        target = out_dir / f"{name}.log"
        shutil.copyfile(logs[0], target)
    return target


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "tests" / "data" / "torch_trace")
    cli.add_argument("names", nargs="*", help=f"models to make (default: all of {', '.join(MODELS)})")
    args = cli.parse_args()
    unknown = [name for name in args.names if name not in MODELS]
    if unknown:
        cli.error(f"unknown model {', '.join(unknown)} (known: {', '.join(MODELS)})")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.names or list(MODELS):
        path = make(name, args.out)
        print(f"{name:16} {path.stat().st_size:>9,} bytes  {path}")


if __name__ == "__main__":
    main()

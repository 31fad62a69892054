"""GPU check of the CuPy backend, run on a lent device machine (see the device tool).

Compares, on the same seeded inputs, what the NumPy and CuPy backends give for
graphs that exercise the generated code's direct calls and buffer reuse
(``out=`` into dying arrays), and a GraphExecutor training step (forward,
DifferentiableGraph backward, gradients). Prints one line per check and
exits non-zero on any mismatch.

    python3 scripts/device_check.py
"""

from __future__ import annotations

import sys

import numpy as np

from gradview.ir import parse_ir
from gradview.runtime import GraphExecutor, Tensor, run_graph

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


def main() -> int:
    import cupy

    rng = np.random.default_rng(0)
    shapes = [(64, 32), (32, 32), (32,), (32, 1), (1,)]
    inputs = [rng.standard_normal(s) * 0.3 for s in shapes]
    failures = 0

    graph = parse_ir(MLP)
    ours_np = run_graph(graph, [a.copy() for a in inputs])
    ours_cp = run_graph(graph, [cupy.asarray(a) for a in inputs], backend="cupy")
    same = np.allclose(ours_np[0], ours_cp[0], rtol=1e-12) and ours_np[1] == ours_cp[1]
    print(f"forward with buffer reuse, numpy vs cupy: {'ok' if same else 'MISMATCH'} ({float(ours_np[0])!r})")
    failures += not same

    grads = {}
    for backend in ("numpy", "cupy"):
        to = (lambda a: cupy.asarray(a)) if backend == "cupy" else (lambda a: a.copy())
        tensors = [Tensor(to(a), requires_grad=True) for a in inputs]
        executor = GraphExecutor(parse_ir(MLP), backend=backend)
        for _ in range(3):  # the plan cache hits after the first run
            for t in tensors:
                t.grad = None
            loss, _ = executor.run(tensors)
            loss.backward()
        grads[backend] = [cupy.asnumpy(t.grad.data) if backend == "cupy" else t.grad.numpy() for t in tensors]
        print(f"{backend}: executor plan cache hits {executor.cache_hits}, misses {executor.cache_misses}")
    for index, (a, b) in enumerate(zip(grads["numpy"], grads["cupy"], strict=True)):
        ok = np.allclose(a, b, rtol=1e-10, atol=1e-12)
        failures += not ok
        print(f"gradient of input {index}: {'ok' if ok else 'MISMATCH'} (max |diff| {np.max(np.abs(a - b)):.3g})")
    print("FAILED" if failures else "all device checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Interpreter speed, as ratios against plain NumPy in the same run.

(a) Per-node overhead: a 1,000-node chain of elementwise ops on scalar-sized
    tensors, run by gradview's compiled graph, next to a plain Python loop that
    calls the same NumPy functions on the same values. Target: at most 1.5x.
(b) The forward pass of an MLP (batch 64, 256-256-256-1, tanh/sigmoid), run
    from its graph, next to the same computation written by hand in NumPy.
    Target: at most 1.1x.

(c) ``run_graph`` called in a loop on the chain of (a), next to the same graph
    compiled once by ``compile_graph``: run_graph keeps the compiled function
    while the graph is unchanged. Target: at most 1.1x.

    .venv/bin/python benchmarks/interpreter.py [--repeat R]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from timing import best_time  # benchmarks/ is on sys.path when run as a script

from gradview.ir import parse_ir
from gradview.ir.passes import propagate_input_shapes
from gradview.runtime import compile_graph, run_graph

TYPE = "Double(1, strides=[1], requires_grad=0, device=cpu)"


def chain_graph_text(n_nodes: int, type_: str = TYPE) -> str:
    """The chain with complete types (as after shape propagation), or plain ``Tensor``."""
    TYPE = type_  # the same name as the module default, on purpose
    lines = [f"graph(%x : {TYPE},\n      %y : {TYPE}):", "  %one : int = prim::Constant[value=1]()"]
    prev = "x"
    for i in range(n_nodes):
        op = i % 4
        if op == 0:
            lines.append(f"  %v{i} : {TYPE} = aten::mul(%{prev}, %y)")
        elif op == 1:
            lines.append(f"  %v{i} : {TYPE} = aten::add(%{prev}, %y, %one)")
        elif op == 2:
            lines.append(f"  %v{i} : {TYPE} = aten::tanh(%{prev})")
        else:
            lines.append(f"  %v{i} : {TYPE} = aten::sub(%{prev}, %y, %one)")
        prev = f"v{i}"
    lines.append(f"  return (%{prev})")
    return "\n".join(lines) + "\n"


def plain_chain(n_nodes: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The same chain as a list of NumPy calls walked by a Python loop."""
    steps = []
    for i in range(n_nodes):
        op = i % 4
        steps.append((np.multiply, True) if op == 0 else (np.add, True) if op == 1
                     else (np.tanh, False) if op == 2 else (np.subtract, True))

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        value = x
        for fn, binary in steps:
            value = fn(value, y) if binary else fn(value)
        return value

    return run


MLP_TEXT = """graph(%x : Double(64, 256, strides=[256, 1], requires_grad=0, device=cpu),
      %w1 : Double(256, 256, strides=[256, 1], requires_grad=0, device=cpu),
      %b1 : Double(256, strides=[1], requires_grad=0, device=cpu),
      %w2 : Double(256, 256, strides=[256, 1], requires_grad=0, device=cpu),
      %b2 : Double(256, strides=[1], requires_grad=0, device=cpu),
      %w3 : Double(256, 1, strides=[1, 1], requires_grad=0, device=cpu),
      %b3 : Double(1, strides=[1], requires_grad=0, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %m1 : Tensor = aten::matmul(%x, %w1)
  %a1 : Tensor = aten::add(%m1, %b1, %one)
  %h1 : Tensor = aten::tanh(%a1)
  %m2 : Tensor = aten::matmul(%h1, %w2)
  %a2 : Tensor = aten::add(%m2, %b2, %one)
  %h2 : Tensor = aten::tanh(%a2)
  %m3 : Tensor = aten::matmul(%h2, %w3)
  %a3 : Tensor = aten::add(%m3, %b3, %one)
  %y : Tensor = aten::sigmoid(%a3)
  return (%y)
"""


def mlp_numpy(x, w1, b1, w2, b2, w3, b3):  # the hand-written reference
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    return 1.0 / (1.0 + np.exp(-(h2 @ w3 + b3)))


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--repeat", type=int, default=7)
    args = cli.parse_args()

    n = 1000
    x, y = np.array([0.3]), np.array([0.7])
    plain = plain_chain(n)
    base = best_time(repeat=args.repeat, number=20, fn=lambda: plain(x, y))
    print(f"(a) {n}-node chain of scalar-sized tensors; plain NumPy loop: {base / n * 1e6:.3f} us/node")
    for label, type_ in (("complete types", TYPE), ("plain Tensor types", "Tensor")):
        compiled = compile_graph(parse_ir(chain_graph_text(n, type_)))
        np.testing.assert_allclose(compiled(x, y)[0], plain(x, y))
        ours = best_time(repeat=args.repeat, number=20, fn=lambda compiled=compiled: compiled(x, y))
        print(f"    gradview, {label}: {ours / n * 1e6:.3f} us/node   ratio {ours / base:.2f}x (target <= 1.5x)")

    chain = parse_ir(chain_graph_text(n))
    once = compile_graph(chain)
    # Rounds alternate between the two, so that load from other processes hits both alike.
    compiled_once = looped = float("inf")
    for _ in range(4 * args.repeat):
        compiled_once = min(compiled_once, best_time(number=5, fn=lambda: once(x, y)))
        looped = min(looped, best_time(number=5, fn=lambda: run_graph(chain, [x, y])))
    print(
        f"(c) run_graph in a loop: {looped / n * 1e6:.3f} us/node; compile_graph once: "
        f"{compiled_once / n * 1e6:.3f} us/node   ratio {looped / compiled_once:.2f}x (target <= 1.1x)"
    )

    rng = np.random.default_rng(0)
    shapes = [(64, 256), (256, 256), (256,), (256, 256), (256,), (256, 1), (1,)]
    weights = [rng.standard_normal(s) * 0.05 for s in shapes]
    base = best_time(repeat=args.repeat, number=50, fn=lambda: mlp_numpy(*weights))
    print(f"(b) MLP forward, batch 64, 256-256-256-1, tanh/sigmoid; hand-written NumPy: {base * 1e6:.1f} us")
    typed = parse_ir(MLP_TEXT)
    propagate_input_shapes(typed)  # what the executor does before it runs a graph
    for label, graph in (("types inferred", typed), ("as written (plain Tensor)", parse_ir(MLP_TEXT))):
        mlp = compile_graph(graph)
        np.testing.assert_allclose(mlp(*weights)[0], mlp_numpy(*weights), rtol=1e-12)
        ours = best_time(repeat=args.repeat, number=50, fn=lambda mlp=mlp: mlp(*weights))
        print(f"    gradview, {label}: {ours * 1e6:.1f} us   ratio {ours / base:.2f}x (target <= 1.1x)")


if __name__ == "__main__":
    main()

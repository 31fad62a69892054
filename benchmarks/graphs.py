"""Synthetic graphs the benchmarks share."""

from __future__ import annotations

import random

TYPE = "Double(64, 64, strides=[64, 1], requires_grad=1, device=cpu)"
OPS = ("mul", "add", "sin", "tanh", "mm", "sigmoid")


def chain_text(n_nodes: int, seed: int = 0, window: int = 8, pass_fodder: bool = False) -> str:
    """IR text of ``n_nodes`` differentiable ops, each reading two of the last
    ``window`` values (seeded, so every run sees the same graph).

    With ``pass_fodder`` the graph also gives the optimization passes work: a
    duplicated ``1`` constant every 50 nodes (ConstantPooling) and a dead
    ``sin`` every 97 (dead code elimination)."""
    rng = random.Random(seed)
    names = [f"x{i}" for i in range(window)]
    lines = ["graph(" + ",\n      ".join(f"%{n} : {TYPE}" for n in names) + "):"]
    if not pass_fodder:
        lines.append("  %one : int = prim::Constant[value=1]()")
    recent = list(names)
    for i in range(n_nodes):
        op = rng.choice(OPS)
        a, b = rng.choice(recent[-window:]), rng.choice(recent[-window:])
        out = f"v{i}"
        one = f"one{i - i % 50}" if pass_fodder else "one"
        if pass_fodder and i % 50 == 0:
            lines.append(f"  %{one} : int = prim::Constant[value=1]()")
        if op in ("sin", "tanh", "sigmoid"):
            lines.append(f"  %{out} : {TYPE} = aten::{op}(%{a})")
        elif op == "add":
            lines.append(f"  %{out} : {TYPE} = aten::add(%{a}, %{b}, %{one})")
        else:
            lines.append(f"  %{out} : {TYPE} = aten::{op}(%{a}, %{b})")
        if pass_fodder and i % 97 == 0:
            lines.append(f"  %dead{i} : {TYPE} = aten::sin(%{out})")
        recent.append(out)
    lines.append(f"  return (%{recent[-1]})")
    return "\n".join(lines) + "\n"

"""Graphs made by real TorchScript for the round-trip tests.

``scripted_graphs`` scripts functions with if/else, for and while loops,
tuples, lists and int arithmetic; ``optimized_graphs`` runs scripted functions
on inputs that require grad until the profiling executor has specialized
them, and returns ``last_executed_optimized_graph`` (DifferentiableGraph
sections, RequiresGradCheck/TypeCheck, fallback functions).
"""

# No `from __future__ import annotations` here: TorchScript reads these annotations at run time.
from typing import NamedTuple

import torch


class Pair(NamedTuple):
    first: torch.Tensor
    count: int


def if_else(x: torch.Tensor, flag: bool) -> torch.Tensor:
    if flag:
        y = x.sin()
    elif x.dim() > 2:
        y = x.cos()
    else:
        y = -x
    return y * 2


def for_loop(x: torch.Tensor, n: int) -> torch.Tensor:
    acc = torch.zeros_like(x)
    for i in range(n):
        acc = acc + x * i
    return acc


def while_loop(x: torch.Tensor, limit: float) -> torch.Tensor:
    steps = 0
    while bool(x.sum() < limit) and steps < 10:
        x = x * 2.0
        steps += 1
    return x


def tuples(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, int]]:
    pair = (x + y, x.size(0))
    first, count = pair
    return first, (x * y, count // 2)


def lists(x: torch.Tensor) -> list[torch.Tensor]:
    parts = [x, x + 1]
    parts.append(x.relu())
    total = []
    for p in parts:
        total.append(p.sum())
    return total


def int_math(x: torch.Tensor, k: int) -> list[int]:
    s = x.size()
    a = s[0] * k + 3
    b = (a - 1) // 2 % 5
    c = -b if a > b else b * b
    return [a, b, c, len(s)]


def strings_and_none(x: torch.Tensor, scale: float | None = None) -> torch.Tensor:
    if scale is None:
        scale = 0.5
    y = torch.nn.functional.gelu(x, approximate="tanh")
    return y * scale + 1e-5


def nested_control(x: torch.Tensor, n: int) -> torch.Tensor:
    for i in range(n):
        if i % 2 == 0:
            for _ in range(2):
                x = x + i
        else:
            x = torch.where(x > 0, x, x * 0.1)
    return x


def softmax_chain(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = torch.matmul(x, w).softmax(dim=-1)
    return torch.cat([h, h.log_softmax(dim=1)], dim=0).mean(dim=[0], keepdim=True)


def named_tuples(x: torch.Tensor) -> tuple[Pair, torch.Tensor, tuple[int]]:
    best = x.max(1)
    single: tuple[int] = (3,)
    return Pair(best.values, 2), best.indices, single


SCRIPTED_FUNCTIONS = [
    if_else, for_loop, while_loop, tuples, lists, int_math, strings_and_none, nested_control,
    softmax_chain, named_tuples,
]


def scripted_graphs() -> dict[str, str]:
    return {fn.__name__: str(torch.jit.script(fn).graph) for fn in SCRIPTED_FUNCTIONS}


def mlp(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.matmul(x, w) + b).tanh()


def residual_pair(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h = x + torch.tanh(torch.mm(x, w))
    return h * 2, h.sigmoid()


def optimized_graphs() -> dict[str, str]:
    """Optimized graphs of the profiling executor after three runs that need gradients."""
    torch.manual_seed(0)
    cases = {
        "mlp": (mlp, [torch.randn(4, 3), torch.randn(3, 5), torch.randn(5)]),
        "residual_pair": (residual_pair, [torch.randn(3, 3), torch.randn(3, 3)]),
    }
    graphs: dict[str, str] = {}
    for name, (fn, args) in cases.items():
        inputs = [a.requires_grad_() for a in args]
        scripted = torch.jit.script(fn)
        for _ in range(3):
            scripted(*inputs)
        graph = torch.jit.last_executed_optimized_graph()
        graphs[name] = str(graph)
    return graphs

"""PropagateInputShapes on random op chains traced by PyTorch.

Each case draws inputs with random dtypes and memory layouts (transposed,
strided, broadcast) and a chain of ops, traces it, and checks that the pass
re-derives every dtype, size and stride PyTorch recorded. Layouts are where
hand-written tests miss cases: TensorIterator's choice of output strides
depends on every operand.
"""

from __future__ import annotations

import random

import pytest
import torch

from gradview.ir.passes.propagate_input_shapes import propagate_input_shapes

from .shape_oracle import reset_copy, traced_text, type_mismatches

pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.trace` is deprecated:DeprecationWarning", "ignore::UserWarning"
)

UNARY = [
    torch.tanh, torch.abs, torch.neg, torch.relu, torch.sigmoid, torch.exp,
    lambda x: x.sum(), lambda x: x.sum(-1), lambda x: x.mean(0, keepdim=True),
    lambda x: x.unsqueeze(0), lambda x: x.squeeze(), lambda x: x.flatten(), lambda x: x.reshape(-1),
    lambda x: x.contiguous(), lambda x: x.clone(), lambda x: torch.zeros_like(x), lambda x: x.float(),
    lambda x: x.long(), lambda x: x + 1, lambda x: x * 2.5, lambda x: x / 2, lambda x: x > 0,
    lambda x: x.clamp(0, 1), lambda x: torch.softmax(x.double(), -1),
    lambda x: x.permute(*reversed(range(x.dim()))), lambda x: x[..., ::2], lambda x: x.select(0, 0),
    lambda x: x.expand(2, *x.shape), lambda x: x.max(0)[0], lambda x: x.argmax(-1),
    lambda x: x.cumsum(0), lambda x: x.pow(2), lambda x: torch.where(x > 0, x, 2),
    lambda x: x.transpose(0, -1), lambda x: torch.chunk(x, 2, -1)[-1], lambda x: x[-2:],
    lambda x: x.sort(-1)[1], lambda x: x.sin(), lambda x: x // 2, lambda x: x.to(torch.int32),
]
BINARY = [
    torch.add, torch.mul, torch.sub, torch.maximum, torch.div, torch.eq,
    lambda a, b: torch.where(a > 0, a, b), lambda a, b: torch.cat([a, a], 0),
    lambda a, b: torch.stack([a, a], -1), lambda a, b: a.expand_as(b), lambda a, b: a.type_as(b),
    lambda a, b: torch.matmul(a, b),
]


def _random_tensor(rng: random.Random) -> torch.Tensor:
    rank = rng.randint(0, 4)
    shape = [rng.choice([1, 2, 3, 4]) for _ in range(rank)]
    dtype = rng.choice([torch.double, torch.float, torch.int64, torch.int32, torch.bool])
    t = (torch.randn(shape, generator=torch.Generator().manual_seed(rng.randrange(1000)),
                     dtype=torch.double) * 3).to(dtype)
    if rank >= 2 and rng.random() < 0.4:
        t = t.transpose(0, -1).contiguous().transpose(0, -1)
    if rank >= 2 and rng.random() < 0.2:
        t = t[..., :1].expand(*t.shape[:-1], 3)
    if rank >= 1 and rng.random() < 0.2:
        t = torch.cat([t, t], 0)[::2]
    return t


def _random_chain(rng: random.Random, x: torch.Tensor, y: torch.Tensor):
    """A function of (x, y) made of steps that PyTorch accepts on these inputs."""
    steps, values = [], [x, y]
    for _ in range(8):
        unary = rng.random() < 0.7
        op = rng.randrange(len(UNARY) if unary else len(BINARY))
        i, j = rng.randrange(len(values)), rng.randrange(len(values))
        try:
            result = UNARY[op](values[i]) if unary else BINARY[op](values[i], values[j])
        except (RuntimeError, IndexError, TypeError):
            continue
        steps.append((unary, op, i, j))
        values.append(result)

    def chain(x, y):
        values = [x, y]
        for unary, op, i, j in steps:
            values.append(UNARY[op](values[i]) if unary else BINARY[op](values[i], values[j]))
        return tuple(values[2:]) or (x + 0,)

    return chain


@pytest.mark.parametrize("seed", range(40))
def test_random_chains_match_traced_types(seed):
    rng = random.Random(seed)
    x, y = _random_tensor(rng), _random_tensor(rng)
    reference, graph = reset_copy(traced_text(_random_chain(rng, x, y), (x, y)))
    propagate_input_shapes(graph)
    graph.lint()
    assert type_mismatches(reference, graph) == []

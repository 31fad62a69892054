"""Strides of op results against what PyTorch allocates, on random memory layouts."""

from __future__ import annotations

import contextlib
import random

import pytest
import torch

from gradview.ops.tensor_layout import (
    contiguous_strides,
    elementwise_strides,
    is_contiguous,
    is_non_overlapping_and_dense,
    preserve_strides,
    suggested_strides,
    view_strides,
)

SEEDS = range(40)


def random_tensor(rng: random.Random, rank: int | None = None) -> torch.Tensor:
    """A tensor with a random layout: permuted, sliced with steps, or broadcast."""
    rank = rng.randint(1, 4) if rank is None else rank
    if rank == 0:
        return torch.zeros(())
    sizes = [rng.choice([1, 1, 2, 3, 4]) for _ in range(rank)]
    t = torch.zeros([s * 2 for s in sizes], dtype=torch.float32)
    t = t[tuple(slice(None, None, rng.choice([1, 2])) for _ in range(rank))][tuple(slice(0, s) for s in sizes)]
    if rng.random() < 0.6:
        order = list(range(rank))
        rng.shuffle(order)
        t = t.contiguous().permute(order) if rng.random() < 0.7 else t.permute(order)
    if rng.random() < 0.2:
        t = t[..., :1].expand(*t.shape[:-1], 3)
    return t


def _layout(t: torch.Tensor) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return tuple(t.shape), tuple(t.stride())


@pytest.mark.parametrize("seed", SEEDS)
def test_predicates_and_contiguous_strides(seed):
    rng = random.Random(seed)
    for _ in range(20):
        t = random_tensor(rng)
        sizes, strides = _layout(t)
        assert contiguous_strides(sizes) == torch.empty(sizes).stride()
        assert is_contiguous(sizes, strides) == t.is_contiguous()
        # empty_like keeps exactly the strides of a dense tensor, and only those.
        assert is_non_overlapping_and_dense(sizes, strides) == (torch.empty_like(t).stride() == strides)


@pytest.mark.parametrize("seed", SEEDS)
def test_elementwise_strides_match_tensor_iterator(seed):
    rng = random.Random(seed)
    for _ in range(20):
        a = random_tensor(rng)
        b = random_tensor(rng, rank=rng.randint(0, a.dim())) if rng.random() < 0.5 else a.clone()
        b = b.reshape([1] * (b.dim() - 1) + [-1])[..., :1] if rng.random() < 0.3 else b
        try:
            result = torch.add(a, b)
        except RuntimeError:
            continue
        got = elementwise_strides(tuple(result.shape), [_layout(a), _layout(b)])
        assert got == result.stride(), (a.shape, a.stride(), b.shape, b.stride())
        assert elementwise_strides(tuple(a.shape), [_layout(a)]) == torch.tanh(a).stride()
        # A Python number is an operand too: x + 1 may differ from tanh(x).
        assert elementwise_strides(tuple(a.shape), [_layout(a), ((), ())]) == (a + 1).stride()


@pytest.mark.parametrize("seed", SEEDS)
def test_preserve_and_suggested_strides(seed):
    rng = random.Random(seed)
    for _ in range(20):
        t = random_tensor(rng)
        assert preserve_strides(*_layout(t)) == torch.empty_like(t).stride()
        assert preserve_strides(*_layout(t)) == t.clone().stride()
        if t.dim() == 4:
            stats = torch.zeros(t.shape[1]), torch.ones(t.shape[1])
            out = torch.nn.functional.batch_norm(t, *stats, training=False)
            assert suggested_strides(*_layout(t)) == out.stride(), _layout(t)


@pytest.mark.parametrize("seed", SEEDS)
def test_view_strides_match_view(seed):
    rng = random.Random(seed)
    for _ in range(20):
        t = random_tensor(rng)
        n = t.numel()
        shapes = [(-1,), (n, 1), (1, n), tuple(reversed(t.shape)), tuple(t.shape) + (1,)]
        shape = rng.choice(shapes)
        new_sizes = tuple(n if s == -1 else s for s in shape)
        expected = None
        with contextlib.suppress(RuntimeError):  # no view exists: the rule must say None
            expected = t.view(shape).stride()
        assert view_strides(*_layout(t), new_sizes) == expected, (_layout(t), shape)

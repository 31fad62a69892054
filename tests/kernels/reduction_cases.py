"""Seeded cases the reduction, statistics and softmax kernel tests share: shapes, random
dims (positive or negative), and a check against ``torch.ops.aten`` at 1e-6 relative in
float64 (1e-5 in float32) on the backend tests/kernels/conftest.py picked."""

from __future__ import annotations

import numpy as np

from tests.kernels.oracle import check_op, random_array
from tests.kernels.seeded_checks import run_graph

__all__ = [
    "DOUBLE", "FLOAT32", "LONG", "SEEDS", "SHAPES", "check_close", "dim_lists", "one_dim", "rand_values",
    "random_shape", "run_graph", "some_dims",
]

SEEDS = range(6)
SHAPES = [(), (5,), (3, 4), (2, 3, 4)]
DOUBLE, LONG, FLOAT32 = 7, 4, 6  # TorchScript ScalarType numbers


def rand_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """Random values of ``dtype`` in [-3, 4)."""
    return random_array(rng, shape, dtype, -3, 4)


def _is_float32(*arrays: np.ndarray) -> bool:
    return any(getattr(a, "dtype", None) == np.float32 for a in arrays)


def random_shape(rng: np.random.Generator) -> tuple[int, ...]:
    return SHAPES[rng.integers(len(SHAPES))]


def some_dims(rng: np.random.Generator, ndim: int) -> list[int]:
    """A non-empty random subset of the dims, each written positive or negative."""
    rank = max(ndim, 1)
    count = rng.integers(1, rank + 1)
    dims = rng.permutation(rank)[:count]
    return [int(d) - rank if rng.random() < 0.5 else int(d) for d in dims]


def one_dim(rng: np.random.Generator, ndim: int) -> int:
    return some_dims(rng, ndim)[0]


def dim_lists(rng: np.random.Generator, ndim: int) -> list[list[int] | None]:
    return [None, [], some_dims(rng, ndim), some_dims(rng, ndim)]


def check_close(op: str, args: list, rtol: float | None = None) -> list:
    """check_op at 1e-6 relative in float64; float32 results (PyTorch rounds
    differently, e.g. log_softmax near 0) get 1e-5 relative and 1e-6 absolute."""
    f32 = _is_float32(*(a for a in args if isinstance(a, np.ndarray)))
    if rtol is None:
        rtol = 1e-5 if f32 else 1e-6
    return check_op(op, args, rtol=rtol, atol=1e-6 if f32 else 1e-12)

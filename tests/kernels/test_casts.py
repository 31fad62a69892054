"""Copy, cast and ``*_like`` kernels (kernels/casts.py) against PyTorch, on seeded random inputs.

Each case runs one aten overload through gradview's interpreter (a one-node
graph, ``run_graph``) and through ``torch.ops.aten`` on the same arguments,
and compares values (1e-6 relative), dtypes and shapes, with the helpers of
shape_kernel_oracle.py; test_shapes.py's overload coverage test counts these cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from gradview.ir import DeviceType
from tests.kernels.oracle import torch_call
from tests.kernels.shape_kernel_oracle import (
    BOOL,
    F32,
    I64,
    SEEDS,
    Case,
    Typed,
    build,
    check,
    rand,
    run,
)

DEVICE = Typed("cpu", DeviceType())


# -- the cases: (id, overload, seeded argument builder) ---------------------------------
CASES: list[Case] = [
    # contiguous, clone, detach
    ("contiguous-transposed", "aten::contiguous", lambda r: [rand(r, (3, 4)).T, 0]),
    ("contiguous", "aten::contiguous", lambda r: [rand(r, (3, 4), I64), 0]),
    ("clone", "aten::clone", lambda r: [rand(r, (2, 3)), None]),
    ("clone-scalar", "aten::clone", lambda r: [rand(r, (), I64), None]),
    ("detach", "aten::detach", lambda r: [rand(r, (2, 3))]),
    ("alias", "aten::alias", lambda r: [rand(r, (2, 3))]),
    # type_as, to
    ("type_as-f64-i64", "aten::type_as", lambda r: [rand(r, (2, 3)), rand(r, (1,), I64)]),
    ("type_as-i64-f32", "aten::type_as", lambda r: [rand(r, (2, 3), I64), rand(r, (), F32)]),
    ("type_as-bool-f64", "aten::type_as", lambda r: [rand(r, (2, 3), BOOL), rand(r, (2,))]),
    ("type_as-f64-bool", "aten::type_as", lambda r: [rand(r, (2, 3)), rand(r, (2,), BOOL)]),
    ("to.dtype-f32", "aten::to.dtype", lambda r: [rand(r, (2, 3)), 6, False, False, None]),
    ("to.dtype-i64", "aten::to.dtype", lambda r: [rand(r, (2, 3)), 4, False, False, None]),
    ("to.dtype-from-i64", "aten::to.dtype", lambda r: [rand(r, (2, 3), I64), 7, False, True, None]),
    ("to.dtype-bool", "aten::to.dtype", lambda r: [rand(r, (2, 3)), 11, True, False, None]),
    ("to.dtype-from-bool", "aten::to.dtype", lambda r: [rand(r, (2, 3), BOOL), 6, False, False, None]),
    ("to.dtype-same", "aten::to.dtype", lambda r: [rand(r, ()), 7, False, False, None]),
    ("to.other", "aten::to.other", lambda r: [rand(r, (2, 3)), rand(r, (1,), I64), False, False, None]),
    ("to.other-f32", "aten::to.other", lambda r: [rand(r, (2, 3), I64), rand(r, (4, 4), F32), False, True, None]),
    ("to.device", "aten::to.device", lambda r: [rand(r, (2, 3)), DEVICE, 6, False, False, None]),
    ("to.prim_Device", "aten::to.prim_Device", lambda r: [rand(r, (2, 3)), None, 4, False, False]),
    ("to.prim_Device-keep", "aten::to.prim_Device", lambda r: [rand(r, (2, 3), F32), None, None, False, False]),
    ("to.prim_dtype", "aten::to.prim_dtype", lambda r: [rand(r, (2, 3)), 6, False, False]),
    ("to.prim_dtype-keep", "aten::to.prim_dtype", lambda r: [rand(r, (2, 3), I64), None, False, False]),
    ("to.prim_other", "aten::to.prim_other", lambda r: [rand(r, (2, 3)), False, False]),
    ("to.dtype_layout", "aten::to.dtype_layout",
     lambda r: [rand(r, (2, 3)), 6, None, DEVICE, None, False, False, None]),
    ("to.dtype_layout-keep", "aten::to.dtype_layout",
     lambda r: [rand(r, (2, 3), I64), None, None, None, None, False, True, None]),
    # *_like
    ("zeros_like", "aten::zeros_like", lambda r: [rand(r, (2, 3)), None, None, None, None, None]),
    ("zeros_like-dtype", "aten::zeros_like", lambda r: [rand(r, (2, 3)), 4, None, None, None, None]),
    ("zeros_like-bool", "aten::zeros_like", lambda r: [rand(r, (), I64), 11, None, None, None, None]),
    ("ones_like", "aten::ones_like", lambda r: [rand(r, (2, 3), I64), None, None, None, None, None]),
    ("ones_like-dtype", "aten::ones_like", lambda r: [rand(r, (0, 3)), 6, None, None, None, None]),
    ("full_like", "aten::full_like", lambda r: [rand(r, (2, 3)), 2.5, None, None, None, None, None]),
    ("full_like-int", "aten::full_like", lambda r: [rand(r, (2, 3), I64), 3, None, None, None, None, None]),
    ("full_like-truncate", "aten::full_like", lambda r: [rand(r, (2,), I64), -2.5, None, None, None, None, None]),
    ("full_like-dtype", "aten::full_like", lambda r: [rand(r, (2, 3), I64), -1.5, 6, None, None, None, None]),
    ("full_like-to-bool", "aten::full_like", lambda r: [rand(r, (3,)), 1, 11, None, None, None, None]),
    ("full_like-inf", "aten::full_like", lambda r: [rand(r, (3,), F32), float("-inf"), None, None, None, None, None]),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("qualified", "make"), [pytest.param(q, m, id=i) for i, q, m in CASES])
def test_matches_pytorch(qualified: str, make: Callable[[np.random.Generator], list[Any]], seed: int) -> None:
    check(qualified, make(np.random.default_rng(seed)))


@pytest.mark.parametrize("seed", SEEDS)
def test_empty_like(seed: int) -> None:
    # empty_like's values are undefined in PyTorch: compare dtype and shape only.
    x = rand(np.random.default_rng(seed), (2, 0, 3) if seed == 2 else (2, 3), I64)
    for dtype in (None, 6):
        args = [x, dtype, None, None, None, None]
        graph, inputs = build("aten::empty_like", args)
        (ours,) = run(graph, inputs)
        (theirs,) = torch_call("aten::empty_like", args)
        assert ours.dtype == theirs.numpy().dtype and ours.shape == tuple(theirs.shape)

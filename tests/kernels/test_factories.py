"""Factory kernels (kernels/factories.py) against PyTorch: zeros, ones, full,
the three arange overloads, rand and randn (rand_like and randn_like: kernels/casts.py).

The deterministic factories run as one-node graphs (``check_op``) and must
match ``torch.ops.aten`` exactly in dtype and shape and to 1e-6 in value,
with ``dtype=None`` (PyTorch's inference: int64 for ints, float32 for
floats) and explicit ScalarTypes. The random ones
cannot match PyTorch's values: their shape and dtype are compared with
PyTorch's result, their values checked for range and rough moments, and for
being the same on every run (gradview's seeded draws).
A coverage test keeps the cases and the module's registrations in step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.kernels import factories as module
from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError, run_graph

from . import oracle
from .oracle import check_op, op_graph, torch_call

BYTE, INT, LONG, HALF, FLOAT, DOUBLE, BOOL = 0, 3, 4, 5, 6, 7, 11  # TorchScript ScalarType numbers
NONES = [None, None, None]  # layout, device, pin_memory
SIZES = [[2, 3], [], [0, 4], [5], [1, 2, 1]]
INF, NAN = float("inf"), float("nan")

CASES: dict[str, list[list[Any]]] = {
    "aten::zeros": [[size, dtype, *NONES] for size in SIZES for dtype in (None, DOUBLE, LONG, BOOL, INT, HALF)],
    "aten::ones": [[size, dtype, *NONES] for size in SIZES for dtype in (None, DOUBLE, LONG, BOOL, INT, HALF)],
    "aten::full": [
        [size, value, None, *NONES] for size in SIZES[:3] for value in (1, -2, 0, 1.5, 0.0, INF, NAN)
    ] + [
        [[2, 2], 1.5, LONG, *NONES],  # truncated to 1
        [[3], 2, BOOL, *NONES],  # True
        [[3], -1, BYTE, *NONES],  # wraps to 255
        [[2], 7, DOUBLE, *NONES],
        [[2], 0.1, HALF, *NONES],
    ],
    "aten::scalar_tensor": [
        [value, dtype, *NONES] for value in (2.5, -3, 0) for dtype in (None, DOUBLE, LONG, HALF)
    ] + [[INF, None, *NONES], [NAN, DOUBLE, *NONES]],
    "aten::arange": [
        [end, dtype, *NONES] for end in (5, 0, 1, 5.0, 2.5, 7.25) for dtype in (None, DOUBLE, LONG, FLOAT)
    ],
    "aten::arange.start": [
        [start, end, dtype, *NONES]
        for start, end in ((2, 7), (-3, 3.5), (1.5, 4), (5, 5), (-4, -1), (0.25, 0.75))
        for dtype in (None, DOUBLE, LONG, INT)
    ],
    "aten::arange.start_step": [
        [start, end, step, dtype, *NONES]
        for start, end, step in ((0, 1, 0.1), (10, 0, -3), (0, 10, 3), (0.5, 5, 1.7), (-0.5, 5, 1.7),
                                 (1, 2, 0.3), (0, -1, -0.25), (5.5, 0.2, -1.5), (-2.5, 2.5, 0.5), (3, 3, -1))
        for dtype in (None, DOUBLE, FLOAT, HALF)
    ] + [
        # Integer dtypes: int64 counts with truncated numbers, int32 with the numbers as given.
        [start, end, step, dtype, *NONES]
        for start, end, step in ((0.5, 5, 1.7), (-0.5, 5, 1.7), (0.5, 5.9, 1.7), (5.5, 0.2, -1.5),
                                 (0, 10, 2.5), (0, 5.9, 1), (10, 0, -3))
        for dtype in (LONG, INT)
    ] + [[-2.5, 2.5, 0.5, INT, *NONES], [0, 1, 0.3, INT, *NONES]],
    "aten::new_zeros": [[np.ones((2, 3)), size, dtype, *NONES] for size in SIZES[:3] for dtype in (None, LONG)],
    "aten::new_ones": [[np.ones(3, np.int64), size, dtype, *NONES] for size in SIZES[:3] for dtype in (None, DOUBLE)],
    "aten::new_full": [[np.ones(3, np.float32), [2, 2], value, dtype, *NONES] for value in (1.5, -2) for dtype in (None, LONG)],
    "aten::eye": [[n, dtype, *NONES] for n in (0, 1, 4) for dtype in (None, DOUBLE, LONG)],
    "aten::eye.m": [[n, m, dtype, *NONES] for n, m in ((2, 3), (4, 1), (0, 2)) for dtype in (None, DOUBLE)],
    "aten::linspace": [
        [start, end, steps, dtype, *NONES]
        for start, end, steps in ((0, 1, 5), (-3.5, 7.25, 11), (2, 2, 3), (1.5, -1, 1), (0, 10, 0), (-7, 3, 4))
        for dtype in (None, DOUBLE, LONG, INT)
    ],
    "aten::logspace": [
        [start, end, steps, base, dtype, *NONES]
        for start, end, steps, base in ((0, 2, 5, 10.0), (-1.5, 2.25, 7, 2.0), (1, -1, 1, 3.0), (0, 3, 4, 2.0))
        for dtype in (None, DOUBLE, LONG)
    ],
}

ERRORS: list[tuple[str, list[Any]]] = [
    ("aten::zeros", [[2, -1], None, *NONES]),
    ("aten::ones", [[-3], None, *NONES]),
    ("aten::full", [[-1], 1.0, None, *NONES]),
    ("aten::arange", [INF, None, *NONES]),
    ("aten::scalar_tensor", [INF, LONG, *NONES]),
    ("aten::arange", [5, BOOL, *NONES]),
    ("aten::arange", [-2, None, *NONES]),  # end below the start 0
    ("aten::arange.start", [3, 1, None, *NONES]),
    ("aten::arange.start_step", [0, 5, 0, None, *NONES]),
    ("aten::arange.start_step", [0, 5, -1, None, *NONES]),
    ("aten::arange.start_step", [0, 1, 0.3, LONG, *NONES]),  # the step truncates to 0
    ("aten::arange.start_step", [0, NAN, 1, None, *NONES]),
]


@pytest.mark.parametrize("qualified", sorted(CASES))
def test_against_torch(qualified: str) -> None:
    for index, args in enumerate(CASES[qualified]):
        try:
            check_op(qualified, args, rtol=1e-6, atol=1e-7)
        except AssertionError as exc:
            raise AssertionError(f"case {index} of {qualified}: {args}\n{exc}") from None


@pytest.mark.parametrize(("qualified", "args"), ERRORS, ids=[f"{q}-{i}" for i, (q, _) in enumerate(ERRORS)])
def test_errors_name_the_node(qualified: str, args: list[Any]) -> None:
    with pytest.raises((RuntimeError, ValueError, IndexError, NotImplementedError)):
        torch_call(qualified, args)
    graph, inputs = op_graph(qualified, args)
    with pytest.raises(GraphRuntimeError) as info:
        run_graph(graph, inputs, backend=oracle.BACKEND)
    kind = qualified.partition(".")[0]
    assert info.value.node is not None and info.value.node.kind() == kind
    assert kind.split("::")[1] in str(info.value)


def test_dtype_inference_matches_pytorch() -> None:
    # (A Python bool is not a TorchScript Scalar, so full(size, True) never reaches aten::full.)
    expected = [
        ("aten::zeros", [[2], None, *NONES], np.float32),
        ("aten::ones", [[2], None, *NONES], np.float32),
        ("aten::full", [[2], 3, None, *NONES], np.int64),
        ("aten::full", [[2], 3.0, None, *NONES], np.float32),
        ("aten::arange", [4, None, *NONES], np.int64),
        ("aten::arange.start", [1, 4.0, None, *NONES], np.float32),
        ("aten::arange.start_step", [1, 4, 1, None, *NONES], np.int64),
        ("aten::arange.start_step", [1, 4, 0.5, None, *NONES], np.float32),
    ]
    for qualified, args, dtype in expected:
        (ours,) = check_op(qualified, args)
        assert ours.dtype == dtype, (qualified, args)


# -- rand_like, randn_like ------------------------------------------------------------------------
RANDOM_INPUTS = [
    (np.zeros((3, 4)), None),
    (np.zeros((2, 0, 3), dtype=np.float32), None),
    (np.zeros(()), None),
    (np.zeros((5,), dtype=np.float16), None),
    (np.zeros((4, 2), dtype=np.int64), DOUBLE),  # an integer input with a floating dtype
    (np.zeros((2, 3)), FLOAT),
]


@pytest.mark.parametrize("op", ["aten::rand_like", "aten::randn_like"])
@pytest.mark.parametrize(("x", "dtype"), RANDOM_INPUTS, ids=[f"{x.dtype}{list(x.shape)}-{d}" for x, d in RANDOM_INPUTS])
def test_random_like_shape_and_dtype(op: str, x: np.ndarray, dtype: int | None) -> None:
    args = [x, dtype, None, None, None, None]
    graph, inputs = op_graph(op, args)
    (ours,) = run_graph(graph, inputs, backend=oracle.BACKEND)
    (theirs,) = torch_call(op, args)
    assert isinstance(ours, np.ndarray)
    assert ours.dtype == theirs.numpy().dtype and ours.shape == tuple(theirs.shape)
    assert np.all(np.isfinite(ours))
    if op == "aten::rand_like":
        assert np.all((ours >= 0) & (ours < 1))


def test_random_like_moments() -> None:
    x = np.zeros((200, 100), dtype=np.float32)
    (uniform,) = run_graph(*op_graph("aten::rand_like", [x, None, None, None, None, None]), backend=oracle.BACKEND)
    (normal,) = run_graph(*op_graph("aten::randn_like", [x, None, None, None, None, None]), backend=oracle.BACKEND)
    assert abs(float(uniform.mean()) - 0.5) < 0.02 and abs(float(uniform.var()) - 1 / 12) < 0.01
    assert abs(float(normal.mean())) < 0.05 and abs(float(normal.std()) - 1.0) < 0.05
    assert len(np.unique(uniform)) > 19000  # really random, not a constant


@pytest.mark.parametrize("op", ["aten::rand_like", "aten::randn_like"])
@pytest.mark.parametrize(("x", "dtype"), [(np.zeros((3,), dtype=np.int64), None), (np.zeros(3), LONG),
                                          (np.zeros(3, dtype=bool), None)])
def test_random_like_needs_a_floating_dtype(op: str, x: np.ndarray, dtype: int | None) -> None:
    args = [x, dtype, None, None, None, None]
    with pytest.raises((RuntimeError, NotImplementedError)):
        torch_call(op, args)
    graph, inputs = op_graph(op, args)
    with pytest.raises(GraphRuntimeError, match="floating"):
        run_graph(graph, inputs, backend=oracle.BACKEND)


@pytest.mark.parametrize("op", ["aten::rand", "aten::randn"])
@pytest.mark.parametrize(("size", "dtype"), [([3, 4], None), ([2, 0], DOUBLE), ([], None)])
def test_random_factories_match_torchs_shape_and_dtype_and_draw_the_same_values_every_run(
    op: str, size: list[int], dtype: int | None
) -> None:
    args = [size, dtype, None, None, None]
    graph, inputs = op_graph(op, args)
    (ours,) = run_graph(graph, inputs, backend=oracle.BACKEND)
    (theirs,) = torch_call(op, args)
    assert ours.shape == tuple(theirs.shape) and ours.dtype == theirs.detach().numpy().dtype
    (again,) = run_graph(graph, inputs, backend=oracle.BACKEND)
    np.testing.assert_array_equal(again, ours)


def test_random_factories_need_a_floating_dtype() -> None:
    graph, inputs = op_graph("aten::randn", [[3], LONG, None, None, None])
    with pytest.raises(GraphRuntimeError, match="floating"):
        run_graph(graph, inputs, backend=oracle.BACKEND)


# -- coverage -----------------------------------------------------------------------------------
def test_every_kernel_of_the_module_is_checked() -> None:
    registered = {key for key, fn in KERNELS.items() if fn.__module__ == module.__name__}
    assert registered == set(CASES) | {"aten::rand", "aten::randn"} | EMPTY | {
        "aten::linspace.Tensor_Tensor", "aten::linspace.Tensor_Scalar", "aten::linspace.Scalar_Tensor",
        "aten::logspace.Tensor_Tensor", "aten::logspace.Tensor_Scalar", "aten::logspace.Scalar_Tensor",
    }  # the Tensor overloads: test_space_factories_match_pytorch_bit_for_bit


# -- empty (undefined values in PyTorch: shape and dtype only), linspace and logspace bit for bit ---
EMPTY = {"aten::new_empty", "aten::empty.memory_format", "aten::empty_permuted", "aten::empty_strided"}


@pytest.mark.parametrize(("op", "args"), [
    ("aten::new_empty", [np.ones(2, np.int64), [3, 1], None, *NONES]),
    ("aten::empty.memory_format", [[2, 0, 3], DOUBLE, *NONES, None]),
    ("aten::empty_permuted", [[2, 3, 4], [2, 0, 1], None, *NONES]),
    ("aten::empty_strided", [[2, 3], [1, 2], LONG, *NONES]),
])
def test_empty_factories_match_torchs_shape_and_dtype(op: str, args: list[Any]) -> None:
    graph, inputs = op_graph(op, args)
    (ours,) = run_graph(graph, inputs, backend=oracle.BACKEND)
    (theirs,) = torch_call(op, args)
    assert ours.shape == tuple(theirs.shape) and ours.dtype == theirs.numpy().dtype


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.int64])
def test_space_factories_match_pytorch_bit_for_bit(dtype: torch.dtype) -> None:
    """PyTorch computes the second half from the end (``end - step * (steps - i - 1)``): the
    last value is ``end`` exactly, and no value differs by an ulp."""
    for start, end, steps in ((0.1, 0.7, 7), (-3.3, 9.1, 30), (1e-3, 1.0, 1001)):
        ours = module.linspace_tensor(np, np.array(start), np.array(end), steps, _index(dtype))
        np.testing.assert_array_equal(ours, torch.linspace(start, end, steps, dtype=dtype).numpy())
        ours = module.logspace_tensor(np, np.array(start), np.array(end), steps, 2.0, _index(dtype))
        np.testing.assert_array_equal(ours, torch.logspace(start, end, steps, 2.0, dtype=dtype).numpy())


def _index(dtype: torch.dtype) -> int:
    return {torch.float64: DOUBLE, torch.float32: FLOAT, torch.int64: LONG}[dtype]

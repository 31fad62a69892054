"""Matrix-product kernels against PyTorch: every overload on seeded random inputs, and the errors;
baddbmm and bilinear against ``torch.ops.aten``, bilinear_backward against torch.autograd.

Each case runs one aten overload through gradview's interpreter (a one-node
graph, ``run_graph``) and through ``torch.ops.aten``, comparing values (1e-6
relative in float64; float32 sums may be ordered differently, so 1e-5 there),
dtypes and shapes. matmul covers every rank combination from 1-D to 4-D with
batch broadcasting. Bad inputs must be refused by PyTorch and by gradview,
whose GraphRuntimeError names the node and its input shapes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.kernels import KernelError, get_backend
from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError, run_graph
from tests.kernels import oracle
from tests.kernels.oracle import (
    check_op,
    functional_overloads,
    op_graph,
    random_array,
    run_kernel,
    torch_call,
)

SEEDS = (0, 1, 2)
F64, F32, I64, BOOL = "float64", "float32", "int64", "bool"
TORCH_ERRORS = (RuntimeError, IndexError, ValueError, NotImplementedError)
NAN = float("nan")


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: str = F64) -> np.ndarray:
    """Seeded random values of ``dtype``: normal floats times 4, small signed ints, coin-flip bools."""
    return random_array(rng, shape, dtype, -9, 10, scale=4.0)


def with_nan(array: np.ndarray) -> np.ndarray:
    out = array.copy()
    out.flat[0] = NAN
    return out


def call_kernel(name: str, *args: Any) -> Any:
    """Call a kernel directly on this test's backend; results come back as NumPy."""
    backend = get_backend(oracle.BACKEND)
    return backend.to_host(KERNELS[name](backend.xp, *backend.to_device(list(args))))


Case = tuple[str, str, Callable[[np.random.Generator], list[Any]]]

# matmul: (left shape, right shape) for every rank pair 1..4, batch dims broadcasting.
MATMUL_SHAPES = {
    "1x1": ((4,), (4,)),
    "1x2": ((3,), (3, 5)),
    "2x1": ((2, 3), (3,)),
    "2x2": ((2, 3), (3, 5)),
    "1x3": ((3,), (2, 3, 4)),
    "3x1": ((2, 3, 4), (4,)),
    "1x4": ((3,), (2, 2, 3, 4)),
    "4x1": ((2, 2, 3, 4), (4,)),
    "2x3": ((3, 4), (2, 4, 5)),
    "3x2": ((2, 3, 4), (4, 5)),
    "2x4": ((3, 4), (2, 3, 4, 2)),
    "4x2": ((2, 3, 1, 4), (4, 5)),
    "3x3": ((2, 3, 4), (2, 4, 5)),
    "3x3-broadcast": ((1, 3, 4), (5, 4, 2)),
    "3x4": ((5, 3, 4), (2, 1, 4, 6)),
    "4x3": ((2, 1, 3, 4), (5, 4, 6)),
    "4x4": ((2, 1, 3, 4), (1, 5, 4, 2)),
    "size-1": ((1, 1, 1), (1, 1)),
    "empty-batch": ((0, 3, 4), (4, 2)),
    "empty-inner": ((2, 3, 0), (0, 2)),
}

CASES: list[Case] = [
    # mm
    ("mm", "aten::mm", lambda r: [rand(r, (3, 4)), rand(r, (4, 5))]),
    ("mm-int64", "aten::mm", lambda r: [rand(r, (3, 4), I64), rand(r, (4, 5), I64)]),
    ("mm-int32", "aten::mm", lambda r: [rand(r, (3, 4), "int32"), rand(r, (4, 2), "int32")]),
    ("mm-transposed", "aten::mm", lambda r: [rand(r, (4, 3)).T, rand(r, (5, 4)).T]),
    ("mm-size-1", "aten::mm", lambda r: [rand(r, (1, 1)), rand(r, (1, 4))]),
    ("mm-empty-inner", "aten::mm", lambda r: [rand(r, (2, 0)), rand(r, (0, 3))]),
    ("mm-empty-rows", "aten::mm", lambda r: [rand(r, (0, 3)), rand(r, (3, 2))]),
    # bmm
    ("bmm", "aten::bmm", lambda r: [rand(r, (2, 3, 4)), rand(r, (2, 4, 5))]),
    ("bmm-int64", "aten::bmm", lambda r: [rand(r, (2, 3, 4), I64), rand(r, (2, 4, 5), I64)]),
    ("bmm-empty-batch", "aten::bmm", lambda r: [rand(r, (0, 3, 4)), rand(r, (0, 4, 2))]),
    ("bmm-size-1", "aten::bmm", lambda r: [rand(r, (3, 1, 4)), rand(r, (3, 4, 1))]),
    # mv, dot
    ("mv", "aten::mv", lambda r: [rand(r, (3, 4)), rand(r, (4,))]),
    ("mv-int64", "aten::mv", lambda r: [rand(r, (3, 4), I64), rand(r, (4,), I64)]),
    ("mv-empty", "aten::mv", lambda r: [rand(r, (0, 4)), rand(r, (4,))]),
    ("dot", "aten::dot", lambda r: [rand(r, (5,)), rand(r, (5,))]),
    ("dot-int64", "aten::dot", lambda r: [rand(r, (5,), I64), rand(r, (5,), I64)]),
    ("dot-empty", "aten::dot", lambda r: [rand(r, (0,)), rand(r, (0,))]),
    # matmul, every rank pair
    *[
        (f"matmul-{name}", "aten::matmul", lambda r, a=a, b=b: [rand(r, a), rand(r, b)])
        for name, (a, b) in MATMUL_SHAPES.items()
    ],
    ("matmul-int64-3x3", "aten::matmul", lambda r: [rand(r, (2, 3, 4), I64), rand(r, (1, 4, 2), I64)]),
    ("matmul-int64-1x1", "aten::matmul", lambda r: [rand(r, (6,), I64), rand(r, (6,), I64)]),
    ("matmul-int64-1x4", "aten::matmul", lambda r: [rand(r, (4,), I64), rand(r, (2, 3, 4, 5), I64)]),
    ("matmul-transposed", "aten::matmul", lambda r: [rand(r, (2, 4, 3)).transpose(0, 2, 1), rand(r, (4, 5))]),
    # addmm
    ("addmm-bias-row", "aten::addmm", lambda r: [rand(r, (5,)), rand(r, (3, 4)), rand(r, (4, 5)), 1, 1]),
    ("addmm-full", "aten::addmm", lambda r: [rand(r, (3, 5)), rand(r, (3, 4)), rand(r, (4, 5)), 0.5, 2.0]),
    ("addmm-column", "aten::addmm", lambda r: [rand(r, (3, 1)), rand(r, (3, 4)), rand(r, (4, 5)), -1.5, 1]),
    ("addmm-one-row", "aten::addmm", lambda r: [rand(r, (1, 5)), rand(r, (3, 4)), rand(r, (4, 5)), 2, -0.25]),
    ("addmm-scalar-self", "aten::addmm", lambda r: [rand(r, ()), rand(r, (3, 4)), rand(r, (4, 5)), 1, 1]),
    ("addmm-beta0-nan", "aten::addmm",
     lambda r: [with_nan(rand(r, (3, 5))), rand(r, (3, 4)), rand(r, (4, 5)), 0, 1.5]),
    ("addmm-beta0.0-nan", "aten::addmm",
     lambda r: [np.full((5,), NAN), rand(r, (3, 4)), rand(r, (4, 5)), 0.0, 1]),
    ("addmm-alpha0-nan", "aten::addmm",
     lambda r: [rand(r, (3, 5)), with_nan(rand(r, (3, 4))), rand(r, (4, 5)), 1, 0]),
    ("addmm-nan-kept", "aten::addmm",
     lambda r: [with_nan(rand(r, (3, 5))), rand(r, (3, 4)), rand(r, (4, 5)), 0.5, 1]),
    ("addmm-int64", "aten::addmm", lambda r: [rand(r, (5,), I64), rand(r, (3, 4), I64), rand(r, (4, 5), I64), 2, 3]),
    ("addmm-int64-float-scalars", "aten::addmm",
     lambda r: [rand(r, (3, 5), I64), rand(r, (3, 4), I64), rand(r, (4, 5), I64), 1.7, -2.9]),
    ("addmm-int64-beta0", "aten::addmm",
     lambda r: [rand(r, (3, 5), I64), rand(r, (3, 4), I64), rand(r, (4, 5), I64), 0.5, 1]),
    ("addmm-empty", "aten::addmm", lambda r: [rand(r, (5,)), rand(r, (3, 0)), rand(r, (0, 5)), 2, 1]),
    # linear
    ("linear", "aten::linear", lambda r: [rand(r, (4, 3)), rand(r, (5, 3)), rand(r, (5,))]),
    ("linear-no-bias", "aten::linear", lambda r: [rand(r, (4, 3)), rand(r, (5, 3)), None]),
    ("linear-3d", "aten::linear", lambda r: [rand(r, (2, 4, 3)), rand(r, (5, 3)), rand(r, (5,))]),
    ("linear-4d-no-bias", "aten::linear", lambda r: [rand(r, (2, 2, 4, 3)), rand(r, (5, 3)), None]),
    ("linear-1d-input", "aten::linear", lambda r: [rand(r, (3,)), rand(r, (5, 3)), rand(r, (5,))]),
    ("linear-1d-weight", "aten::linear", lambda r: [rand(r, (4, 3)), rand(r, (3,)), None]),
    ("linear-1d-both", "aten::linear", lambda r: [rand(r, (3,)), rand(r, (3,)), rand(r, ())]),
    ("linear-full-bias", "aten::linear", lambda r: [rand(r, (4, 3)), rand(r, (5, 3)), rand(r, (4, 5))]),
    ("linear-int64", "aten::linear", lambda r: [rand(r, (4, 3), I64), rand(r, (5, 3), I64), rand(r, (5,), I64)]),
    ("linear-empty-batch", "aten::linear", lambda r: [rand(r, (0, 3)), rand(r, (5, 3)), rand(r, (5,))]),
]

F32_CASES: list[Case] = [
    ("mm-f32", "aten::mm", lambda r: [rand(r, (3, 4), F32), rand(r, (4, 5), F32)]),
    ("bmm-f32", "aten::bmm", lambda r: [rand(r, (2, 3, 4), F32), rand(r, (2, 4, 5), F32)]),
    ("mv-f32", "aten::mv", lambda r: [rand(r, (3, 4), F32), rand(r, (4,), F32)]),
    ("dot-f32", "aten::dot", lambda r: [rand(r, (5,), F32), rand(r, (5,), F32)]),
    ("matmul-f32", "aten::matmul", lambda r: [rand(r, (2, 1, 3, 4), F32), rand(r, (5, 4, 2), F32)]),
    ("addmm-f32", "aten::addmm",
     lambda r: [rand(r, (5,), F32), rand(r, (3, 4), F32), rand(r, (4, 5), F32), 0.5, 2.0]),
    ("linear-f32", "aten::linear", lambda r: [rand(r, (2, 4, 3), F32), rand(r, (5, 3), F32), rand(r, (5,), F32)]),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("qualified", "make"), [pytest.param(q, m, id=i) for i, q, m in CASES])
def test_matches_pytorch(qualified: str, make: Callable[[np.random.Generator], list[Any]], seed: int) -> None:
    check_op(qualified, make(np.random.default_rng(seed)))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("qualified", "make"), [pytest.param(q, m, id=i) for i, q, m in F32_CASES])
def test_matches_pytorch_float32(
    qualified: str, make: Callable[[np.random.Generator], list[Any]], seed: int
) -> None:
    check_op(qualified, make(np.random.default_rng(seed)), rtol=1e-5, atol=1e-5)


def test_every_overload_has_a_kernel_and_a_case() -> None:
    tested = {q for _, q, _ in CASES + F32_CASES} | {"aten::mm.dtype", "aten::bmm.dtype", "aten::addmm.dtype"}
    for name in ("aten::mm", "aten::bmm", "aten::mv", "aten::dot", "aten::matmul", "aten::addmm", "aten::linear"):
        for schema in functional_overloads(name):
            assert schema.qualified_name in KERNELS, schema.qualified_name
            assert schema.qualified_name in tested, schema.qualified_name


def test_beta_zero_ignores_nan_and_inf() -> None:
    rng = np.random.default_rng(0)
    self = np.array([[NAN, np.inf, -np.inf]])
    (out,) = check_op("aten::addmm", [self, rand(rng, (2, 4)), rand(rng, (4, 3)), 0, 1])
    assert np.isfinite(out).all()


def test_vector_products_give_0d_arrays() -> None:
    rng = np.random.default_rng(0)
    for qualified in ("aten::dot", "aten::matmul"):
        (out,) = check_op(qualified, [rand(rng, (3,)), rand(rng, (3,))])
        assert isinstance(out, np.ndarray) and out.shape == ()


# -- the out_dtype overloads: PyTorch runs them on CUDA only -----------------------------------
def _torch(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.array(array))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", ["float16", F32, F64])
def test_out_dtype_overloads(seed: int, dtype: str) -> None:
    # Values: PyTorch's float32 product of the upcast inputs; dtype and shape:
    # PyTorch's meta kernels, which apply the CUDA kernels' rules.
    rng = np.random.default_rng(seed)
    out = 6 if dtype == "float16" else {F32: 6, F64: 7}[dtype]
    a, b = rand(rng, (3, 4), dtype), rand(rng, (4, 5), dtype)
    ba, bb = rand(rng, (2, 3, 4), dtype), rand(rng, (2, 4, 5), dtype)
    bias = rand(rng, (5,), dtype)
    cases = [
        ("aten::mm.dtype", [a, b, out], lambda t: torch.mm(t[0], t[1])),
        ("aten::bmm.dtype", [ba, bb, out], lambda t: torch.bmm(t[0], t[1])),
        ("aten::addmm.dtype", [bias, a, b, out, 0.5, 2], lambda t: torch.addmm(t[0], t[1], t[2], beta=0.5, alpha=2)),
    ]
    for qualified, args, reference in cases:
        graph, inputs = op_graph(qualified, args)
        (ours,) = run_graph(graph, inputs, backend=oracle.BACKEND)
        tensors = [_torch(x).float() if dtype == "float16" else _torch(x) for x in inputs]
        expected = reference(tensors).numpy()
        metas = [torch.empty(x.shape, dtype=_torch(x).dtype, device="meta") for x in inputs]
        theirs = torch_call(qualified, [*metas, *args[len(inputs):]])[0]
        assert ours.dtype == np.dtype(str(theirs.dtype).removeprefix("torch.")), qualified
        assert ours.shape == tuple(theirs.shape), qualified
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-4, err_msg=qualified)


def test_out_dtype_refused_like_pytorch() -> None:
    rng = np.random.default_rng(0)
    a, b = rand(rng, (3, 4)), rand(rng, (4, 5))
    with pytest.raises(RuntimeError):
        torch.ops.aten.mm.dtype(torch.empty(3, 4, dtype=torch.float64, device="meta"),
                                torch.empty(4, 5, dtype=torch.float64, device="meta"), torch.float32)
    graph, inputs = op_graph("aten::mm.dtype", [a, b, 6])
    with pytest.raises(GraphRuntimeError, match="out_dtype must be the input dtype"):
        run_graph(graph, inputs, backend=oracle.BACKEND)


# -- errors: PyTorch refuses these, and so must gradview, naming the node -----------------
ERRORS: list[tuple[str, str, Callable[[np.random.Generator], list[Any]], str]] = [
    ("mm-shapes", "aten::mm", lambda r: [rand(r, (2, 3)), rand(r, (4, 5))], "[2, 3] and [4, 5] cannot be multiplied"),
    ("mm-dtypes", "aten::mm", lambda r: [rand(r, (2, 3), F32), rand(r, (3, 4))], "one dtype"),
    ("mm-vector", "aten::mm", lambda r: [rand(r, (2, 3)), rand(r, (3,))], "must be a matrix"),
    ("mm-bool", "aten::mm", lambda r: [rand(r, (2, 3), BOOL), rand(r, (3, 4), BOOL)], "bool"),
    ("bmm-batch", "aten::bmm", lambda r: [rand(r, (2, 3, 4)), rand(r, (3, 4, 5))], "cannot be multiplied"),
    ("bmm-inner", "aten::bmm", lambda r: [rand(r, (2, 3, 4)), rand(r, (2, 5, 5))], "cannot be multiplied"),
    ("bmm-rank", "aten::bmm", lambda r: [rand(r, (3, 4)), rand(r, (4, 5))], "3-D"),
    ("bmm-dtypes", "aten::bmm", lambda r: [rand(r, (2, 3, 4), I64), rand(r, (2, 4, 5))], "one dtype"),
    ("mv-size", "aten::mv", lambda r: [rand(r, (3, 3)), rand(r, (4,))], "size mismatch"),
    ("mv-rank", "aten::mv", lambda r: [rand(r, (3,)), rand(r, (3,))], "must be a matrix"),
    ("mv-dtypes", "aten::mv", lambda r: [rand(r, (3, 3)), rand(r, (3,), I64)], "one dtype"),
    ("dot-size", "aten::dot", lambda r: [rand(r, (3,)), rand(r, (4,))], "different sizes"),
    ("dot-rank", "aten::dot", lambda r: [rand(r, (3, 3)), rand(r, (3, 3))], "must be a vector"),
    ("dot-dtypes", "aten::dot", lambda r: [rand(r, (3,), F32), rand(r, (3,), I64)], "one dtype"),
    ("dot-bool", "aten::dot", lambda r: [rand(r, (3,), BOOL), rand(r, (3,), BOOL)], "bool"),
    ("matmul-0d", "aten::matmul", lambda r: [rand(r, ()), rand(r, (3,))], "at least one dim"),
    ("matmul-1x1", "aten::matmul", lambda r: [rand(r, (3,)), rand(r, (4,))], "cannot be multiplied (3 != 4)"),
    ("matmul-2x1", "aten::matmul", lambda r: [rand(r, (2, 3)), rand(r, (4,))], "cannot be multiplied"),
    ("matmul-1x2", "aten::matmul", lambda r: [rand(r, (3,)), rand(r, (4, 5))], "cannot be multiplied"),
    ("matmul-batch", "aten::matmul", lambda r: [rand(r, (2, 2, 3)), rand(r, (3, 3, 4))], "do not broadcast"),
    ("matmul-dtypes", "aten::matmul", lambda r: [rand(r, (2, 3), F32), rand(r, (3, 4))], "one dtype"),
    ("matmul-bool", "aten::matmul", lambda r: [rand(r, (2, 3), BOOL), rand(r, (3, 4), BOOL)], "bool"),
    ("addmm-self-shape", "aten::addmm", lambda r: [rand(r, (4,)), rand(r, (2, 3)), rand(r, (3, 3)), 1, 1],
     "cannot be expanded to [2, 3]"),
    ("addmm-self-rank", "aten::addmm", lambda r: [rand(r, (1, 1, 3)), rand(r, (2, 3)), rand(r, (3, 3)), 1, 1],
     "cannot be expanded"),
    ("addmm-self-dtype", "aten::addmm", lambda r: [rand(r, (3,)), rand(r, (2, 3), F32), rand(r, (3, 3), F32), 1, 1],
     "same dtype"),
    ("addmm-shapes", "aten::addmm", lambda r: [rand(r, (3,)), rand(r, (2, 3)), rand(r, (4, 3)), 1, 1],
     "cannot be multiplied"),
    ("addmm-bool", "aten::addmm",
     lambda r: [rand(r, (3,), BOOL), rand(r, (2, 3), BOOL), rand(r, (3, 3), BOOL), 1, 1], "bool"),
    ("linear-0d", "aten::linear", lambda r: [rand(r, ()), rand(r, (4, 3)), None], "at least one dim"),
    ("linear-3d-weight", "aten::linear", lambda r: [rand(r, (3,)), rand(r, (3, 4, 3)), None], "1-D or 2-D"),
    ("linear-1d-weight-bias", "aten::linear", lambda r: [rand(r, (2, 3)), rand(r, (3,)), rand(r, ())],
     "weight must be 2-D"),
    ("linear-shapes", "aten::linear", lambda r: [rand(r, (2, 3)), rand(r, (4, 5)), None], "cannot be multiplied"),
    ("linear-bias-dtype", "aten::linear", lambda r: [rand(r, (2, 3), F32), rand(r, (4, 3), F32), rand(r, (4,))],
     "same dtype"),
    ("linear-bias-shape", "aten::linear", lambda r: [rand(r, (2, 3)), rand(r, (4, 3)), rand(r, (3, 4))],
     "cannot be expanded"),
]


@pytest.mark.parametrize(("qualified", "make", "fragment"), [pytest.param(q, m, f, id=i) for i, q, m, f in ERRORS])
def test_bad_inputs_raise(qualified: str, make: Callable[[np.random.Generator], list[Any]], fragment: str) -> None:
    args = make(np.random.default_rng(0))
    with pytest.raises(TORCH_ERRORS):
        torch_call(qualified, args)
    graph, inputs = op_graph(qualified, args)
    with pytest.raises(GraphRuntimeError) as info:
        run_graph(graph, inputs, backend=oracle.BACKEND)
    message = str(info.value)
    op = qualified.split("::")[1].split(".")[0]
    assert info.value.node is graph.outputs()[0].node
    assert f"aten::{op}(" in message, message
    assert fragment in message, message
    for array in inputs:
        assert f"{array.dtype}{list(array.shape)}" in message, message


def test_mm_error_names_node_and_shapes() -> None:
    graph = parse_ir(
        """graph(%a : Double(2, 3),
      %b : Double(4, 5)):
  %c : Tensor = aten::mm(%a, %b)
  %d : Tensor = aten::relu(%c)
  return (%d)
"""
    )
    rng = np.random.default_rng(0)
    with pytest.raises(GraphRuntimeError) as info:
        run_graph(graph, [rand(rng, (2, 3)), rand(rng, (4, 5))], backend=oracle.BACKEND)
    message = str(info.value)
    assert message.startswith("%c : Tensor = aten::mm(%a, %b): mm: shapes [2, 3] and [4, 5] cannot be multiplied")
    assert "(inputs: %a: float64[2, 3], %b: float64[4, 5])" in message


def test_kernels_refuse_directly() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(KernelError, match="matmul: shapes"):
        call_kernel("aten::matmul", rand(rng, (2, 3)), rand(rng, (2, 3)))


# -- baddbmm and bilinear ----------------------------------------------------------------------
_BADDBMM_RNG = np.random.default_rng(3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("self_shape", [(2, 3, 4), (3, 4), (4,), (1, 3, 1), ()])
@pytest.mark.parametrize(("beta", "alpha"), [(1, 1), (0.5, 2.0), (0, 1), (2, 0)])
def test_baddbmm(dtype: type, self_shape: tuple, beta: float, alpha: float) -> None:
    s = random_array(_BADDBMM_RNG, self_shape, dtype)
    b1, b2 = random_array(_BADDBMM_RNG, (2, 3, 5), dtype), random_array(_BADDBMM_RNG, (2, 5, 4), dtype)
    check_op("aten::baddbmm", [s, b1, b2, beta, alpha], rtol=1e-5, atol=1e-6 if dtype == np.float32 else 1e-12)


def test_baddbmm_nan_rules() -> None:
    """beta=0 hides NaN in self; alpha=0 still shows NaN in the product (PyTorch's CPU kernel)."""
    nan_self = np.full((3, 4), math.nan)
    b1, b2 = random_array(_BADDBMM_RNG, (2, 3, 5), np.float64), random_array(_BADDBMM_RNG, (2, 5, 4), np.float64)
    check_op("aten::baddbmm", [nan_self, b1, b2, 0, 1])
    check_op("aten::baddbmm", [np.ones((3, 4)), np.full((2, 3, 5), math.nan), b2, 1, 0])


def test_baddbmm_errors() -> None:
    b1, b2 = random_array(_BADDBMM_RNG, (2, 3, 5), np.float64), random_array(_BADDBMM_RNG, (2, 5, 4), np.float64)
    for args, match in [
        ([np.ones((2, 3, 4), dtype=np.float32), b1, b2, 1, 1], "dtypes must be the same"),
        ([np.ones((2, 3, 4)), b1, b2[:, :4], 1, 1], "cannot be multiplied"),
        ([np.ones((2, 3, 5)), b1, b2, 1, 1], "expand|broadcast|size"),
    ]:
        graph, inputs = op_graph("aten::baddbmm", args)
        with pytest.raises(GraphRuntimeError, match=match):
            run_graph(graph, inputs)


def test_baddbmm_dtype_follows_the_cuda_rule() -> None:
    """PyTorch runs baddbmm.dtype on CUDA only: float16 batches give float32."""
    b1 = random_array(_BADDBMM_RNG, (2, 3, 5), np.float16)
    b2 = random_array(_BADDBMM_RNG, (2, 5, 4), np.float16)
    out = KERNELS["aten::baddbmm.dtype"](np, np.zeros((3, 4), np.float32), b1, b2, 6)
    assert out.dtype == np.float32
    expected = torch.baddbmm(torch.zeros(3, 4), torch.from_numpy(b1).float(), torch.from_numpy(b2).float())
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-3)


@pytest.mark.parametrize(("a", "b"), [((4, 3), (4, 5)), ((2, 4, 3), (2, 4, 5)), ((3,), (5,))])
@pytest.mark.parametrize("with_bias", [False, True])
def test_bilinear(a: tuple, b: tuple, with_bias: bool) -> None:
    x1, x2 = random_array(_BADDBMM_RNG, a, np.float64), random_array(_BADDBMM_RNG, b, np.float64)
    w = random_array(_BADDBMM_RNG, (2, 3, 5), np.float64)
    bias = random_array(_BADDBMM_RNG, (2,), np.float64) if with_bias else None
    check_op("aten::bilinear", [x1, x2, w, bias])
    leaves = [torch.tensor(v, requires_grad=True) for v in (x1, x2, w)]
    tb = torch.tensor(bias, requires_grad=True) if with_bias else None
    out = torch.ops.aten.bilinear(*leaves, tb)
    grad = torch.randn(out.shape, dtype=torch.float64)
    expected = torch.autograd.grad(out, leaves + ([tb] if with_bias else []), grad)
    ours = KERNELS["gradview::bilinear_backward"](np, grad.numpy(), x1, x2, w, [True, True, True, with_bias])
    for got, theirs in zip(ours, expected, strict=False):
        np.testing.assert_allclose(got, theirs.numpy(), rtol=1e-10)


def test_bilinear_batch_dims_must_match() -> None:
    graph, inputs = op_graph("aten::bilinear", [np.ones((4, 3)), np.ones((1, 5)), np.ones((2, 3, 5)), None])
    with pytest.raises(GraphRuntimeError, match="batch dimensions do not match"):
        run_graph(graph, inputs)


# -- gradview::matmul_grad_self/_other against torch.autograd's gradients of torch.matmul, every rank --
MATMUL_GRAD_SHAPES = [
    ((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((3, 4), (4, 5)), ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((3, 4), (2, 4, 5)),
]


@pytest.mark.parametrize(("a_shape", "b_shape"), MATMUL_GRAD_SHAPES, ids=str)
def test_matmul_grads_like_torch(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(2)
    a = torch.tensor(rng.standard_normal(a_shape), requires_grad=True)
    b = torch.tensor(rng.standard_normal(b_shape), requires_grad=True)
    out = torch.matmul(a, b)
    grad = torch.tensor(rng.standard_normal(tuple(out.shape)))
    grad_a, grad_b = torch.autograd.grad(out, (a, b), grad)
    g = grad.numpy()
    ours_a = run_kernel("gradview::matmul_grad_self", g, b.detach().numpy(), list(a_shape))
    ours_b = run_kernel("gradview::matmul_grad_other", g, a.detach().numpy(), list(b_shape))
    np.testing.assert_allclose(ours_a, grad_a.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours_b, grad_b.numpy(), rtol=1e-12, atol=1e-12)

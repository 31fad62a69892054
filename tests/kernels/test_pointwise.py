"""Pointwise tensor kernels (kernels/pointwise.py; clamp, maximum/minimum and where of
kernels/pointwise_math.py, max.other/min.other of kernels/reductions.py) against PyTorch.

Every overload of those kernels runs as a one-node graph through
``run_graph`` (``check_op``) on seeded random float64 inputs: broadcasting
shape pairs, 0-d tensors, Python int and float scalars, NaN and infinities,
and compares with ``torch.ops.aten.<op>.<overload>`` to 1e-6 relative in
float64, with the result dtype equal to PyTorch's. Promotion cases (integer,
bool, float32 and float16 tensors meeting 0-d tensors and Python numbers)
and the errors PyTorch raises are part of the same table; erf is checked to
1e-12 over a wide range.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.kernels import elementwise as elementwise_module
from gradview.kernels import pointwise, pointwise_math, reductions
from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError, run_graph

from . import oracle
from .oracle import Case, check_op, op_graph, rand, seeded_rng, torch_call

# NumPy warns about log(0), 0/0 and the like; PyTorch (and the results) do not.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INF, NAN = np.inf, np.nan
SHAPE_PAIRS = [((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (3,)), ((3,), ()), ((), ()), ((2, 3), (2, 3)),
               ((1,), (2, 1, 5))]
UNARY_SHAPES = [(), (5,), (3, 4), (2, 1, 3)]
SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-300, -1e300, INF, -INF, NAN, 40.0, -40.0])


def positive(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(np.abs(rng.standard_normal(shape)) * 3 + 0.05)


def with_ties(rng: np.random.Generator, x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A second operand that equals ``x`` in places (for comparisons and max/min)."""
    y = rand(rng, shape)
    if x.ndim and y.shape == x.shape:
        y.flat[::2] = x.flat[::2]
    return y


def ints(rng: np.random.Generator, shape: tuple[int, ...], lo: int = -9, hi: int = 10, dtype: Any = np.int64) -> np.ndarray:
    return np.asarray(rng.integers(lo, hi, shape), dtype=dtype)


def nonzero_ints(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    values = ints(rng, shape)
    values[values == 0] = 3
    return values


def bools(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(rng.integers(0, 2, shape), dtype=np.bool_)


# -- the table ------------------------------------------------------------------------------
BINARY_TENSOR = ["aten::add.Tensor", "aten::sub.Tensor", "aten::mul.Tensor", "aten::div.Tensor",
                 "aten::maximum", "aten::minimum", "aten::max.other", "aten::min.other"]
COMPARISONS = ["eq", "ne", "gt", "lt", "ge", "le"]
UNARY = ["aten::neg", "aten::abs", "aten::exp", "aten::sin", "aten::cos", "aten::tanh", "aten::sigmoid",
         "aten::erf", "aten::sign"]
UNARY_POSITIVE = ["aten::log", "aten::sqrt", "aten::rsqrt"]  # random inputs > 0, specials cover the rest


def _binary(qualified: str, extra: list[Any] | None = None) -> list[Case]:
    rng = seeded_rng(qualified)
    tail = extra or []
    cases = []
    for sa, sb in SHAPE_PAIRS:
        x = rand(rng, sa)
        cases.append(Case([x, with_ties(rng, x, sb), *tail]))
    cases.append(Case([SPECIALS, SPECIALS[::-1].copy(), *tail]))
    cases.append(Case([SPECIALS[:, None], SPECIALS[None, :], *tail]))  # every pair of specials
    return cases


# Graphs pass every argument, defaults included: add/sub carry their alpha.
ALPHA_DEFAULT = {"aten::add.Tensor": [1], "aten::sub.Tensor": [1], "aten::add.Scalar": [1], "aten::sub.Scalar": [1]}


def _scalar_operands(rng: np.random.Generator) -> list[Any]:
    return [2, -3, 0, 1.5, -0.25, 0.0, float(rng.standard_normal() * 5), INF, NAN]


def _tensor_scalar(qualified: str, extra: list[Any] | None = None) -> list[Case]:
    rng = seeded_rng(qualified)
    cases = []
    for shape in UNARY_SHAPES:
        for scalar in _scalar_operands(rng):
            cases.append(Case([rand(rng, shape), scalar, *(extra or [])]))
    cases.append(Case([SPECIALS, 1.5, *(extra or [])]))
    return cases


def _unary(qualified: str, make: Any = rand) -> list[Case]:
    rng = seeded_rng(qualified)
    return [Case([make(rng, shape)]) for shape in UNARY_SHAPES] + [Case([SPECIALS]), Case([SPECIALS.reshape(1, -1)])]


def build_cases() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    for q in BINARY_TENSOR:
        cases[q] = _binary(q, ALPHA_DEFAULT.get(q))
    for op in COMPARISONS:
        cases[f"aten::{op}.Tensor"] = _binary(f"aten::{op}.Tensor")
        cases[f"aten::{op}.Scalar"] = _tensor_scalar(f"aten::{op}.Scalar")
    for op in ("add", "sub", "mul", "div"):
        cases[f"aten::{op}.Scalar"] = _tensor_scalar(f"aten::{op}.Scalar", ALPHA_DEFAULT.get(f"aten::{op}.Scalar"))
    for q in UNARY:
        cases[q] = _unary(q)
    for q in UNARY_POSITIVE:
        cases[q] = _unary(q, positive)

    rng = seeded_rng("alpha")
    for op in ("add", "sub"):
        for sa, sb in SHAPE_PAIRS[:4]:
            for alpha in (2, -1, 0.5, -2.25):
                cases[f"aten::{op}.Tensor"].append(Case([rand(rng, sa), rand(rng, sb), alpha]))
                cases[f"aten::{op}.Scalar"].append(Case([rand(rng, sa), 1.5, alpha]))
                cases[f"aten::{op}.Scalar"].append(Case([rand(rng, sa), -4, alpha]))
            i = ints(rng, sa)
            cases[f"aten::{op}.Tensor"] += [Case([i, ints(rng, sb), 3]), Case([i, ints(rng, sb), 2.0], raises=True),
                                            Case([i, ints(rng, sb), 0.5], raises=True)]
            cases[f"aten::{op}.Scalar"] += [Case([i, 7, -2]), Case([i, 7, 0.5], raises=True)]

    # div with rounding modes
    rng = seeded_rng("div_mode")
    tm, sm = [], []
    for mode in (None, "trunc", "floor"):
        for sa, sb in SHAPE_PAIRS:
            tm.append(Case([rand(rng, sa), rand(rng, sb), mode]))
            tm.append(Case([ints(rng, sa, -20, 20), nonzero_ints(rng, sb), mode]))
        tm.append(Case([SPECIALS[:, None], SPECIALS[None, :], mode]))
        tm.append(Case([np.array([-7.5, 7.5, -0.5, 0.5, 1.0]), np.array([2.0, -2.0, INF, -INF, 0.1]), mode]))
        for scalar in (3, -2, 0, 0.5, -1.5, 0.0):
            sm.append(Case([rand(rng, (3, 2)), scalar, mode]))
            int_zero = isinstance(scalar, int) and scalar == 0
            sm.append(Case([ints(rng, (4,), -20, 20), scalar, mode], raises=mode is not None and int_zero))
        sm.append(Case([ints(rng, (4,)), 0, None]))  # true division by an int zero: inf/nan
    tm += [Case([ints(rng, (3,)), np.array(0), "floor"], raises=True),
           Case([ints(rng, (3,)), np.array([1, 0, 2]), "trunc"], raises=True),
           Case([np.array([True]), np.array([True]), "floor"], raises=True),
           Case([rand(rng, (2,)), rand(rng, (2,)), "round"], raises=True)]
    cases["aten::div.Tensor_mode"], cases["aten::div.Scalar_mode"] = tm, sm

    # pow
    rng = seeded_rng("pow")
    pt = []
    for sa, sb in SHAPE_PAIRS:
        pt.append(Case([positive(rng, sa), rand(rng, sb, 1.5)]))
        pt.append(Case([rand(rng, sa), np.asarray(ints(rng, sb, -3, 4), dtype=np.float64)]))
    pt.append(Case([SPECIALS[:, None], SPECIALS[None, :]]))
    pt.append(Case([ints(rng, (5,), -3, 4), ints(rng, (5,), 0, 6)]))
    # Integer tensors to negative tensor exponents compute (1, +-1 or 0).
    pt.append(Case([np.array([1, -1, -1, 2, -2, 0, 3]), np.array([-1, -3, -2, -1, -2, -1, 2])]))
    cases["aten::pow.Tensor_Tensor"] = pt
    ps = []
    for exponent in (2, 3, 0, -1, 0.5, -1.5, 2.0, 1.0 / 3.0):
        ps.append(Case([positive(rng, (3, 2)), exponent]))
        ps.append(Case([rand(rng, (4,)), exponent]))
    ps += [Case([SPECIALS, e]) for e in (2, -2, 3, -1, 0.5, -0.5, 1.5, 0, INF, NAN)]
    ps += [Case([ints(rng, (5,), -4, 5), e]) for e in (2, 3, 0, 1.5)]
    ps += [Case([ints(rng, (5,), -4, 5), -1], raises=True), Case([np.array([True, False]), 2])]
    cases["aten::pow.Tensor_Scalar"] = ps
    cases["aten::pow.Scalar"] = [
        Case([base, exponent]) for base in (2, 0.5, -1.5, 0, -1)
        for exponent in (rand(rng, (3,), 2.0), np.arange(-2, 3), np.array(2.0))
    ]

    # clamp and friends
    rng = seeded_rng("clamp")
    cl = []
    for shape in UNARY_SHAPES:
        x = rand(rng, shape)
        cl += [Case([x, -1.0, 1.0]), Case([x, None, 0.5]), Case([x, -0.5, None]), Case([x, 1, -1]),
               Case([x, 2, 3])]
    cl += [Case([SPECIALS, -1.0, 1.0]), Case([SPECIALS, NAN, 1.0]), Case([SPECIALS, 0.0, NAN]),
           Case([rand(rng, (3,)), None, None], raises=True)]
    cases["aten::clamp"] = cl
    ct = []
    for sa, sb in SHAPE_PAIRS:
        x = rand(rng, sa)
        ct += [Case([x, rand(rng, sb, 1.0), None]), Case([x, None, rand(rng, sb, 1.0)]),
               Case([x, rand(rng, sb, 1.0) - 1.0, rand(rng, sb, 1.0) + 1.0])]
    ct += [Case([SPECIALS, np.full(SPECIALS.shape, NAN), None]), Case([np.array([1.0, 2.0]), np.array([3.0]), np.array([0.0])])]
    cases["aten::clamp.Tensor"] = ct
    cases["aten::clamp_min"] = _tensor_scalar("aten::clamp_min")
    cases["aten::clamp_max"] = _tensor_scalar("aten::clamp_max")

    # where
    rng = seeded_rng("where")
    wh = []
    for sa, sb in SHAPE_PAIRS:
        wh.append(Case([bools(rng, sa), rand(rng, sa), rand(rng, sb)]))
        wh.append(Case([bools(rng, sb), rand(rng, sa), rand(rng, ())]))
    wh.append(Case([ints(rng, (3,), 0, 2), rand(rng, (3,)), rand(rng, (3,))], raises=True))
    cases["aten::where.self"] = wh
    cases["aten::where.ScalarOther"] = [Case([bools(rng, s), rand(rng, s), v]) for s in UNARY_SHAPES for v in (2, -1.5, NAN)]
    cases["aten::where.ScalarSelf"] = [Case([bools(rng, s), v, rand(rng, s)]) for s in UNARY_SHAPES for v in (0, 3.25, INF)]
    cases["aten::where.Scalar"] = [Case([bools(rng, s), a, b]) for s in UNARY_SHAPES for a, b in ((1, 2), (1, 2.5), (-0.5, 4.0))]

    for qualified, case in promotion_cases() + error_cases():
        if qualified in ALPHA_DEFAULT and len(case.args) == 2:
            case.args.append(1)
        cases[qualified].append(case)
    return cases


def promotion_cases() -> list[tuple[str, Case]]:
    """Result dtypes where PyTorch's rules differ from NumPy's (or are easy to get wrong)."""
    rng = seeded_rng("promotion")
    i64, i32 = ints(rng, (3, 4)), ints(rng, (3, 4), dtype=np.int32)
    f32, f16 = rand(rng, (3, 4), dtype=np.float32), rand(rng, (3, 4), dtype=np.float16)
    b = bools(rng, (3, 4))
    u8, i8 = ints(rng, (4,), 0, 255, np.uint8), ints(rng, (4,), -100, 100, np.int8)
    f64_0d, i64_0d, f32_0d = np.array(2.5), np.array(3), np.array(1.5, dtype=np.float32)
    single = {"rtol": 1e-6, "atol": 1e-6}
    half = {"rtol": 2e-3, "atol": 2e-3}
    cases = [
        ("aten::add.Scalar", Case([i64, 1.5])),  # int64 tensor + float -> float32
        ("aten::add.Tensor", Case([i64, f64_0d])),  # + float64 0-d tensor -> float64
        ("aten::add.Tensor", Case([f32, f64_0d], **single)),  # float32 + float64 0-d -> float32
        ("aten::add.Tensor", Case([i64_0d, f32_0d], **single)),  # 0-d int + 0-d float32 -> float32
        ("aten::mul.Scalar", Case([f64_0d, 1.5])),  # float64 0-d stays float64
        ("aten::div.Tensor", Case([i64, nonzero_ints(rng, (4,))], **single)),  # int / int -> float32
        ("aten::div.Scalar", Case([i64_0d, 2], **single)),
        ("aten::div.Tensor", Case([b, b])),  # bool / bool -> float32 (nan and inf too)
        ("aten::add.Tensor", Case([b, bools(rng, (4,))])),  # bool + bool -> bool
        ("aten::mul.Tensor", Case([b, bools(rng, (4,))])),
        ("aten::add.Scalar", Case([b, 2])),  # bool + int -> int64
        ("aten::mul.Scalar", Case([b, 2])),
        ("aten::mul.Scalar", Case([b, 0.5], **single)),  # bool * float -> float32
        ("aten::add.Tensor", Case([i32, i64_0d])),  # int32 + int64 0-d -> int32
        ("aten::add.Tensor", Case([i32, i64])),  # int32 + int64 -> int64
        ("aten::add.Tensor", Case([u8, i8])),  # uint8 + int8 -> int16
        ("aten::add.Tensor", Case([i64, f32], **single)),  # int64 + float32 -> float32
        ("aten::add.Scalar", Case([i32, 3_000_000_000])),  # the int is cast: wraps around
        ("aten::add.Scalar", Case([u8, -3])),
        ("aten::gt.Scalar", Case([u8, -1])),  # -1 becomes 255
        ("aten::mul.Scalar", Case([ints(rng, (3,), 2**40, 2**41), 2**30])),  # int64 wraps
        ("aten::add.Scalar", Case([f16, 1.5], **half)),
        ("aten::mul.Tensor", Case([f16, f64_0d], **half)),
        ("aten::sub.Tensor", Case([i8, u8])),
        ("aten::eq.Scalar", Case([i64, 1.5])),  # compared in float
        ("aten::eq.Scalar", Case([i64, 2])),
        ("aten::lt.Scalar", Case([b, 1])),
        ("aten::ge.Tensor", Case([i64, f64_0d])),
        ("aten::ne.Tensor", Case([b, i64])),
        ("aten::maximum", Case([i64, f32], **single)),
        ("aten::minimum", Case([i32, i64_0d])),
        ("aten::max.other", Case([b, bools(rng, (4,))])),
        ("aten::where.self", Case([b, i32, f64_0d])),
        ("aten::where.self", Case([b, i64, f32], **single)),
        ("aten::where.ScalarOther", Case([b, i64, 2.5], **single)),
        ("aten::where.ScalarSelf", Case([b, 7, i32])),
        ("aten::clamp", Case([i64, 0.5, None], **single)),  # int tensor, float bound -> float32
        ("aten::clamp", Case([i64, 0, 3])),
        ("aten::clamp", Case([b, 0, None])),  # bool clamped by an int -> int64
        ("aten::clamp.Tensor", Case([i64, f32, None], **single)),
        ("aten::clamp_min", Case([i32, -2])),
        ("aten::clamp_max", Case([f32, 0.25], **single)),
        ("aten::pow.Tensor_Scalar", Case([i64, 0.5], **single)),
        ("aten::pow.Tensor_Scalar", Case([i64, 3])),
        ("aten::pow.Tensor_Tensor", Case([i64, f64_0d])),
        ("aten::pow.Tensor_Tensor", Case([f32, np.array(2, dtype=np.int64)], **single)),
        ("aten::pow.Scalar", Case([2, ints(rng, (4,), 0, 5)])),
        ("aten::pow.Scalar", Case([2.5, ints(rng, (4,), -2, 5)], **single)),
        ("aten::neg", Case([i32])),
        ("aten::neg", Case([u8])),
        ("aten::abs", Case([i8])),
        ("aten::abs", Case([np.array([-128, 127], dtype=np.int8)])),
        ("aten::sign", Case([i64])),
        ("aten::sign", Case([b])),
        ("aten::div.Tensor_mode", Case([i32, nonzero_ints(rng, (4,)), "floor"])),
        ("aten::div.Scalar_mode", Case([i64, 2.5, "trunc"], **single)),
        ("aten::div.Scalar_mode", Case([f32, 2, "floor"], **single)),
    ]
    for qualified in UNARY + UNARY_POSITIVE + ["aten::erf"]:
        if qualified in ("aten::neg", "aten::abs", "aten::sign"):
            continue
        cases += [(qualified, Case([i64], **single)), (qualified, Case([b], **single)),
                  (qualified, Case([i32], **single)), (qualified, Case([f32], **single))]
    cases += [("aten::sigmoid", Case([f16], **half))]
    return cases


def error_cases() -> list[tuple[str, Case]]:
    b = np.array([True, False])
    return [
        ("aten::sub.Tensor", Case([b, b], raises=True)),
        ("aten::sub.Tensor", Case([np.arange(2), b], raises=True)),
        ("aten::sub.Scalar", Case([b, 1], raises=True)),
        ("aten::neg", Case([b], raises=True)),
        ("aten::abs", Case([b], raises=True)),
        ("aten::add.Tensor", Case([np.ones(3), np.ones(2)], raises=True)),  # shapes do not broadcast
        ("aten::where.self", Case([np.array([True, False, True]), np.ones(2), np.ones(3)], raises=True)),
    ]


CASES = build_cases()


@pytest.mark.parametrize("qualified", sorted(CASES))
def test_against_torch(qualified: str) -> None:
    assert CASES[qualified], qualified
    for index, case in enumerate(CASES[qualified]):
        if case.raises:
            check_raises(qualified, case.args)
        else:
            try:
                check_op(qualified, case.args, rtol=case.rtol, atol=case.atol)
            except AssertionError as exc:
                raise AssertionError(f"case {index} of {qualified}: {_describe(case.args)}\n{exc}") from None


def check_raises(qualified: str, args: list[Any]) -> None:
    """PyTorch raises on ``args``; gradview must raise GraphRuntimeError naming the node."""
    with pytest.raises((RuntimeError, ValueError, TypeError, NotImplementedError)):
        torch_call(qualified, args)
    graph, inputs = op_graph(qualified, args)
    with pytest.raises(GraphRuntimeError) as info:
        run_graph(graph, inputs, backend=oracle.BACKEND)
    kind = qualified.partition(".")[0]
    assert info.value.node is not None and info.value.node.kind() == kind
    assert kind in str(info.value)


def _describe(args: list[Any]) -> str:
    return ", ".join(f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in args)


# -- erf ------------------------------------------------------------------------------------
def test_erf_accuracy_over_a_wide_range() -> None:
    """erf (NumPy has none) to 1e-12 relative in float64: both tails, tiny and
    subnormal values, the series/continued-fraction seam at 3, NaN and inf."""
    tiny = [1e-300, -1e-300, 5e-324, -5e-324, 1e-20, 2.2e-308, 1e-8, -1e-8]
    seam = np.linspace(2.999, 3.001, 41)
    x = np.concatenate([np.linspace(-10, 10, 20001), tiny, seam, -seam, [0.0, -0.0, 26.0, -27.5, INF, -INF, NAN]])
    check_op("aten::erf", [x], rtol=1e-12, atol=0.0)
    expected = torch.erf(torch.from_numpy(x)).numpy()
    (ours,) = run_graph(*op_graph("aten::erf", [x]), backend=oracle.BACKEND)
    finite = np.isfinite(expected) & (expected != 0)
    assert np.max(np.abs(ours[finite] / expected[finite] - 1)) <= 1e-12
    assert np.array_equal(np.signbit(ours), np.signbit(expected))


def test_erf_float32() -> None:
    x = np.linspace(-6, 6, 1201, dtype=np.float32)
    check_op("aten::erf", [x], rtol=1e-6, atol=1e-7)


def test_erf_helper_keeps_dtype_and_shape() -> None:
    for dtype in (np.float16, np.float32, np.float64):
        x = np.linspace(-4, 4, 12, dtype=dtype).reshape(3, 4)
        out = elementwise_module.erf(np, x)
        assert out.dtype == dtype and out.shape == (3, 4)


# -- coverage ---------------------------------------------------------------------------------
# The kernels of other families this table checks too.
_ALSO_CHECKED = {
    pointwise_math.clamp, pointwise_math.clamp_min, pointwise_math.clamp_max, pointwise_math.maximum,
    pointwise_math.minimum, pointwise_math.where, reductions.max_other, reductions.min_other,
}


def test_every_pointwise_kernel_is_checked() -> None:
    registered = {key for key, fn in KERNELS.items() if fn.__module__ == pointwise.__name__ or fn in _ALSO_CHECKED}
    assert registered - set(CASES) == set()
    assert set(CASES) - registered == set()


def test_promotion_table_reaches_pytorch_dtypes() -> None:
    """The promotion cases really exercise mixed dtypes (a guard on the table itself)."""
    dtypes = {str(a.dtype) for _, case in promotion_cases() for a in case.args if isinstance(a, np.ndarray)}
    assert {"int64", "int32", "int8", "uint8", "bool", "float16", "float32", "float64"} <= dtypes


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_tails_match_aten_without_warnings(dtype: type) -> None:
    # ATen computes 1 / (1 + exp(-x)); exp overflows for very negative x and
    # the answer is then exactly 0, with no warning to the user.
    import warnings

    x = np.array([-1000.0, -745.0, -100.0, -1.0, 0.0, 1.0, 40.0, 1000.0], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = KERNELS["aten::sigmoid"](np, x)
        ours_0d = KERNELS["aten::sigmoid"](np, x[0:1].reshape(()))
    np.testing.assert_allclose(ours, torch.sigmoid(torch.tensor(x)).numpy(), rtol=1e-6, atol=0)
    assert ours.dtype == dtype and float(ours_0d) == 0.0

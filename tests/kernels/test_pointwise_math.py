"""The elementwise math kernels of kernels/pointwise_math.py against PyTorch.

Tensor overloads run as one-node graphs through ``run_graph`` (``check_op``)
on seeded random inputs and edge values (0, -0, +-1, infinities, NaN, the
ends of each function's domain) and are compared with
``torch.ops.aten.<op>.<overload>``: values to 1e-6 relative in float64 (1e-5
in float32, 2e-3 in float16), dtypes and shapes exactly; broadcasting shape
pairs for the binary ops; bool and integer inputs where PyTorch accepts them,
and the inputs PyTorch refuses must make gradview raise a GraphRuntimeError
naming the node. The scalar overloads (``acos.float``, ``ceil.Scalar``,
``fmod.int``...) go through scalar_oracle's typed graphs, compared value by
value and type by type (single-precision ``.Scalar`` results exactly).
A coverage test keeps the tables and the module's registrations in step.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest
import torch

from gradview.kernels import pointwise_math as module
from gradview.ops import KERNELS

from .oracle import Case, check_op, rand, seeded_rng
from .scalar_oracle import SPECIAL_FLOATS, S, check_table
from .scalar_oracle import Case as ScalarCase
from .test_pointwise_math_more import CASES as MORE_CASES
from .test_pointwise_math_more import (
    SHAPE_PAIRS,
    SINGLE,
    UNARY_SHAPES,
    bools,
    check_raises,
    ints,
    nonzero_ints,
)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INF, NAN = np.inf, np.nan
SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.999, -2.5, 3.0, 1e-300, -1e300, INF, -INF, NAN, 40.0, -40.0])
HALF = {"rtol": 2e-3, "atol": 2e-3}
UNARY_FLOAT = ("acos", "asin", "atan", "cosh", "sinh", "tan", "erfc", "log10", "log2")
ROUNDING = ("ceil", "floor", "round", "trunc")


# -- tensor tables ------------------------------------------------------------------------------
def _unary_float() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    for op in UNARY_FLOAT:
        rng = seeded_rng(op)
        table = [Case([rand(rng, shape, 1.5)]) for shape in UNARY_SHAPES]
        table += [
            Case([SPECIALS]), Case([SPECIALS.reshape(2, -1)]),
            Case([np.linspace(-6.0, 30.0, 73)]),  # erfc's tail, cosh/sinh growth, tan's poles nearby
            Case([ints(rng, (3, 4))], **SINGLE), Case([ints(rng, (4,), dtype=np.int32)], **SINGLE),
            Case([bools(rng, (5,))], **SINGLE), Case([rand(rng, (3, 4), 1.0, np.float32)], **SINGLE),
            Case([rand(rng, (4,), 1.0, np.float16)], **HALF),
            Case([np.zeros((0, 3))]),
        ]
        cases[f"aten::{op}"] = table
    return cases


def _logit() -> dict[str, list[Case]]:
    rng = seeded_rng("logit")
    unit = np.array([0.0, 1.0, 0.5, 1e-9, 1 - 1e-9, 0.05, 0.95, -0.5, 1.5, INF, -INF, NAN])
    table = [Case([np.asarray(rng.uniform(0, 1, shape))]) for shape in UNARY_SHAPES]
    for eps in (None, 0.1, 0.0, 1e-6, 0.6, -0.1):
        table.append(Case([unit, eps]))
    table += [
        Case([np.asarray(rng.uniform(0, 1, (3, 4)), dtype=np.float32), 0.01], **SINGLE),
        Case([np.asarray(rng.uniform(0, 1, (4,)), dtype=np.float16)], **HALF),
        Case([ints(rng, (5,), -1, 3)], **SINGLE), Case([bools(rng, (4,)), 0.25], **SINGLE),
    ]
    return {"aten::logit": table}


def _rounding() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, -0.0, 1e300, 4503599627370497.0])
    for op in ROUNDING:
        rng = seeded_rng(op)
        table = [Case([rand(rng, shape)]) for shape in UNARY_SHAPES]
        table += [
            Case([SPECIALS]), Case([halves]),
            Case([rand(rng, (3, 4), dtype=np.float32)], **SINGLE),
            Case([rand(rng, (4,), dtype=np.float16)], **HALF),
            Case([ints(rng, (3, 4))]), Case([ints(rng, (4,), dtype=np.int32)]),
            Case([ints(rng, (4,), 0, 200, np.uint8)]),
            Case([bools(rng, (3,))], raises=True),
        ]
        cases[f"aten::{op}"] = table
    rng = seeded_rng("round.decimals")
    decimals = []
    for d in (0, 1, 2, 3, -1, -2, 10, 400, -400):
        decimals += [Case([rand(rng, (3, 4), 200.0), d]), Case([np.array([1.25, 125.0, 1.35, -2.675, 0.5, 15.0]), d])]
    decimals += [
        Case([rand(rng, (5,), 50.0, np.float32), 2], **SINGLE), Case([rand(rng, (5,), 50.0, np.float16), -1], **HALF),
        Case([SPECIALS, 2]), Case([ints(rng, (3,)), 1], raises=True), Case([bools(rng, (3,)), 1], raises=True),
    ]
    cases["aten::round.decimals"] = decimals
    rng = seeded_rng("frac")
    cases["aten::frac"] = [Case([rand(rng, shape)]) for shape in UNARY_SHAPES] + [
        Case([SPECIALS]), Case([halves]), Case([rand(rng, (3,), dtype=np.float32)], **SINGLE),
        Case([rand(rng, (3,), dtype=np.float16)], **HALF),
        Case([ints(rng, (3,))], raises=True), Case([bools(rng, (3,))], raises=True),
    ]
    return cases


def _rsub() -> dict[str, list[Case]]:
    rng = seeded_rng("rsub")
    tensor = []
    for sa, sb in SHAPE_PAIRS:
        for alpha in (1, 2.5, -1):
            tensor.append(Case([rand(rng, sa), rand(rng, sb), alpha]))
    tensor += [
        Case([ints(rng, (3, 4)), ints(rng, (4,)), 2]),
        Case([ints(rng, (3,)), rand(rng, (3,), dtype=np.float32), 1], **SINGLE),  # -> float32
        Case([rand(rng, (3,), dtype=np.float32), np.array(2.0), 0.5], **SINGLE),  # a 0-d tensor does not promote
        Case([ints(rng, (3,)), ints(rng, (3,)), 1.5], raises=True),  # a float alpha for integers
        Case([bools(rng, (3,)), bools(rng, (3,)), 1], raises=True),
        Case([rand(rng, (3,)), rand(rng, (2,)), 1], raises=True),
    ]
    scalar = []
    for shape in UNARY_SHAPES:
        for other, alpha in ((1, 1), (2.5, 1), (-3, 2), (0.5, -0.5)):
            scalar.append(Case([rand(rng, shape), other, alpha]))
    scalar += [
        Case([ints(rng, (4,)), 3, 2]), Case([ints(rng, (4,)), 2.5, 1], **SINGLE),  # int64 - float -> float32
        Case([ints(rng, (4,), 0, 100, np.uint8), 1, 1]), Case([SPECIALS, 1.0, 1]),
        Case([ints(rng, (4,)), 2, 1.5], raises=True), Case([bools(rng, (3,)), 1, 1], raises=True),
    ]
    return {"aten::rsub.Tensor": tensor, "aten::rsub.Scalar": scalar}


def _fmod() -> dict[str, list[Case]]:
    rng = seeded_rng("fmod")
    tensor = []
    for sa, sb in SHAPE_PAIRS:
        tensor += [Case([rand(rng, sa), rand(rng, sb)]), Case([ints(rng, sa, -20, 20), nonzero_ints(rng, sb)])]
    specials = np.delete(SPECIALS, [9, 10])  # SLEEF's vectorized fmod differs from C's at 1e-300 vs -1e300
    tensor += [
        Case([specials[:, None], specials[None, :]]),
        Case([np.array([-7.5, 7.5, -0.5, 0.5, 5.0, -5.0]), np.array([2.0, -2.0, INF, -INF, INF, 0.0])]),
        Case([rand(rng, (3, 4), dtype=np.float32), rand(rng, (4,), dtype=np.float32)], **SINGLE),
        Case([ints(rng, (3, 4)), rand(rng, (4,), dtype=np.float32)], **SINGLE),
        Case([ints(rng, (3,), dtype=np.int32), np.array(4)]),
        Case([ints(rng, (3,)), np.array([1, 0, 2])], raises=True),  # ZeroDivisionError
        Case([bools(rng, (3,)), bools(rng, (3,))], raises=True),
        Case([rand(rng, (3,)), rand(rng, (2,))], raises=True),
    ]
    scalar = []
    for shape in UNARY_SHAPES:
        for other in (2, -3, 1.5, -0.25, 0.0, INF):
            scalar.append(Case([rand(rng, shape), other]))
        scalar += [Case([ints(rng, shape, -20, 20), 3]), Case([ints(rng, shape, -20, 20), -4])]
    scalar += [
        Case([specials, 1.5]), Case([specials, -2]), Case([ints(rng, (5,)), 2.5], **SINGLE),
        Case([rand(rng, (4,), dtype=np.float16), 0.3], **HALF), Case([bools(rng, (3,)), 2]),
        Case([ints(rng, (4,)), 0], raises=True),
    ]
    return {"aten::fmod.Tensor": tensor, "aten::fmod.Scalar": scalar}


def _atan2() -> dict[str, list[Case]]:
    rng = seeded_rng("atan2")
    table = [Case([rand(rng, sa), rand(rng, sb)]) for sa, sb in SHAPE_PAIRS]
    edges = np.array([0.0, -0.0, 1.0, -1.0, INF, -INF, NAN])
    table += [
        Case([edges[:, None], edges[None, :]]),
        Case([ints(rng, (3, 4)), ints(rng, (4,))], **SINGLE), Case([bools(rng, (3,)), bools(rng, (3,))], **SINGLE),
        Case([rand(rng, (3,), dtype=np.float32), rand(rng, (3,))]),  # -> float64
        Case([rand(rng, (3,), dtype=np.float16), rand(rng, (3,), dtype=np.float16)], **HALF),
        Case([rand(rng, (3,)), rand(rng, (2,))], raises=True),
    ]
    return {"aten::atan2": table}


def _issue22() -> dict[str, list[Case]]:
    """The pointwise ops of issue 22, on floats, specials, ints and bools."""
    rng = seeded_rng("issue22")
    x, y = rand(rng, (3, 4)), rand(rng, (4,))
    specials = np.concatenate([SPECIALS, -SPECIALS])
    mixed = [Case([x]), Case([SPECIALS]), Case([ints(rng, (3, 4))], **SINGLE), Case([bools(rng, (5,))], **SINGLE)]
    cases: dict[str, list[Case]] = {}
    for op in ("asinh", "deg2rad", "rad2deg", "angle", "positive", "real", "resolve_conj", "resolve_neg",
               "conj_physical", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit",
               "logical_not", "nan_to_num"):
        cases[f"aten::{op}"] = list(mixed)
    cases["aten::positive"][-1] = Case(cases["aten::positive"][-1].args, raises=True)
    cases["aten::acosh"] = [Case([np.abs(x) + 1.0]), Case([SPECIALS]), Case([ints(rng, (4,), 1, 9)], **SINGLE)]
    cases["aten::atanh"] = [Case([np.tanh(x)]), Case([SPECIALS]), Case([ints(rng, (4,), -1, 2)], **SINGLE)]
    cases["aten::nan_to_num"] += [Case([SPECIALS, 1.5, 2.0, -3.0]), Case([np.array([0.0, INF, -INF, NAN, 1.5], np.float32)], **SINGLE)]
    pairs = [Case([x, y]), Case([specials, specials[::-1].copy()]), Case([ints(rng, (3, 4)), y], **SINGLE)]
    for op in ("copysign.Tensor", "hypot", "logaddexp", "logaddexp2", "fmax", "fmin", "logical_and",
               "logical_or", "logical_xor"):
        cases[f"aten::{op}"] = list(pairs)
    for op in ("fmax", "fmin", "logical_and", "logical_or", "logical_xor"):
        cases[f"aten::{op}"].append(Case([ints(rng, (3, 4)), ints(rng, (4,))]))
    cases["aten::copysign.Scalar"] = [Case([x, -2.0]), Case([specials, -0.0]), Case([ints(rng, (4,)), 1])]
    cases["aten::heaviside"] = [
        Case([np.array([-1.0, 0.0, -0.0, 2.0, NAN, INF]), np.array([0.5])]),
        Case([ints(rng, (3, 4)), ints(rng, (4,))]),
        Case([x, ints(rng, (4,))], raises=True),
    ]
    cases["aten::float_power.Tensor_Tensor"] = [
        Case([np.abs(x), y]), Case([ints(rng, (3, 4)), ints(rng, (4,), 0, 4)]), Case([x.astype(np.float32), y]),
    ]
    cases["aten::float_power.Tensor_Scalar"] = [Case([np.abs(x), 0.5]), Case([ints(rng, (4,)), 3])]
    cases["aten::float_power.Scalar"] = [Case([2.5, y]), Case([2, ints(rng, (4,), 0, 5)])]
    cases["aten::addcdiv"] = [
        Case([x, y, rand(rng, (3, 1)), 0.5]), Case([x.astype(np.float32), y.astype(np.float32), y.astype(np.float32)], **SINGLE),
        Case([ints(rng, (4,)), ints(rng, (4,)), ints(rng, (4,), 1, 5)], raises=True),
    ]
    near = x + np.array([0.0, 1e-9, 1e-4, -1.0])
    cases["aten::isclose"] = [
        Case([x, near, 1e-05, 1e-08, False]), Case([specials, specials[::-1].copy(), 0.5, 0.1, True]),
        Case([specials, specials.copy(), 0.0, 0.0, False]), Case([ints(rng, (3, 4)), ints(rng, (4,)), 0.5, 1.0, False]),
        Case([x, ints(rng, (4,)), 1e-05, 1e-08, False], raises=True),
    ]
    cases["aten::isin.Tensor_Tensor"] = [
        Case([ints(rng, (3, 4)), ints(rng, (5,))]), Case([specials, np.array([0.0, NAN, INF, 3.0])]),
        Case([ints(rng, (6,)), np.array([1.0, 2.5, -3.0])]),
    ]
    cases["aten::isin.Tensor_Scalar"] = [Case([ints(rng, (3, 4)), 2]), Case([specials, 1.0])]
    cases["aten::isin.Scalar_Tensor"] = [Case([2, ints(rng, (5,))]), Case([0.5, specials])]
    cases["aten::hash_tensor"] = [
        Case([x, []]), Case([x, [1]]), Case([x.astype(np.float32), [0, 1]]), Case([ints(rng, (3, 4)), [0]]),
        Case([bools(rng, (5,)), []]), Case([np.array(2.5), []]), Case([np.zeros((0, 3)), []], raises=True),
    ]
    return cases


def build_cases() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    for part in (_unary_float(), _logit(), _rounding(), _rsub(), _fmod(), _atan2(), _issue22()):
        cases.update(part)
    return cases


CASES = build_cases()


@pytest.mark.parametrize("qualified", sorted(CASES))
def test_against_torch(qualified: str) -> None:
    for index, case in enumerate(CASES[qualified]):
        try:
            if case.raises:
                check_raises(qualified, case.args)
            else:
                check_op(qualified, case.args, rtol=case.rtol, atol=case.atol)
        except (AssertionError, pytest.fail.Exception) as exc:
            raise AssertionError(f"case {index} of {qualified}: {_describe(case.args)}\n{exc}") from None


def _describe(args: list[Any]) -> str:
    return ", ".join(f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in args)


# -- scalar tables -------------------------------------------------------------------------------
def _scalar_cases() -> dict[str, list[ScalarCase]]:
    rng = random.Random(20240611)
    ints_ = [0, 1, -1, 2, 3, -5, 20, 100, -800, 2**40]
    floats = SPECIAL_FLOATS + [rng.uniform(-3, 3) for _ in range(20)] + [0.999, -0.999, 1e-10, 700.0, -700.0]
    cases: dict[str, list[ScalarCase]] = {}
    for name in ("acos", "asin", "atan", "cosh", "sinh", "tan", "erfc", "log10"):
        cases[f"aten::{name}.int"] = [ScalarCase([a]) for a in ints_]
        cases[f"aten::{name}.float"] = [ScalarCase([a]) for a in floats]
        cases[f"aten::{name}.Scalar"] = [ScalarCase([a], [S]) for a in ints_[:6] + floats]
    whole = [2.5, -2.5, 3.5, -0.5, 0.0, -0.0, 123456789.7, 1e15 + 0.5, -(2.0**63), 9.2e18]
    refused = [math.inf, -math.inf, math.nan, 9.3e18, 1e300]
    for name in ("ceil", "floor"):
        # Through a double: 2**53 + 1 rounds; 2**63 - 1 becomes 2.0**63, outside int64
        # (undefined behaviour in C++, an error here).
        cases[f"aten::{name}.int"] = [ScalarCase([a]) for a in ints_ + [2**53 + 1, -(2**63)]] + [
            ScalarCase([2**63 - 1], expect="ours-raises")
        ]
        cases[f"aten::{name}.float"] = [ScalarCase([a]) for a in whole + floats[12:]] + [
            ScalarCase([a], expect="raises") for a in refused
        ]
        cases[f"aten::{name}.Scalar"] = [ScalarCase([a], [S]) for a in ints_ + whole] + [
            ScalarCase([a], [S], expect="raises") for a in refused
        ]
    halves = [0.5, 1.5, 2.5, -2.5, 3.5, 2.5000001, -0.4, 1e30]
    cases["aten::round.int"] = [ScalarCase([a]) for a in ints_]
    cases["aten::round.float"] = [ScalarCase([a]) for a in halves + floats]
    cases["aten::round.Scalar"] = [ScalarCase([a], [S]) for a in ints_ + halves + floats]
    pairs = [(a, b) for a in SPECIAL_FLOATS[::2] for b in SPECIAL_FLOATS[1::2]] + [
        (rng.uniform(-9, 9), rng.uniform(-9, 9)) for _ in range(20)
    ]
    int_pairs = [(5, 0), (-7, 3), (7, -3), (0, 0), (2**62, 7), (-(2**63), -1)] + [
        (rng.randint(-99, 99), rng.randint(-9, 9)) for _ in range(20)
    ]
    for name in ("fmod", "atan2"):
        cases[f"aten::{name}.int"] = [ScalarCase([a, b]) for a, b in int_pairs]
        cases[f"aten::{name}.float"] = [ScalarCase([a, b]) for a, b in pairs]
        cases[f"aten::{name}.int_float"] = [ScalarCase([a, b]) for (a, _), (_, b) in zip(int_pairs, pairs, strict=False)]
        cases[f"aten::{name}.float_int"] = [ScalarCase([b, a]) for (a, _), (_, b) in zip(int_pairs, pairs, strict=False)]
    mixed = [(7, 2), (7.5, 2), (7, 2.5), (-7.5, -2.5), (1, 0), (0.0, 0), (math.inf, 2)]
    cases["aten::fmod"] = [ScalarCase([a, b], [S, S]) for a, b in mixed]
    cases["aten::atan2.Scalar_Scalar"] = [ScalarCase([a, b], [S, S]) for a, b in mixed]
    return cases


SCALAR_CASES = _scalar_cases()


@pytest.mark.parametrize("qualified", sorted(SCALAR_CASES))
def test_scalar_overloads_against_torch(qualified: str) -> None:
    check_table(qualified, SCALAR_CASES[qualified])


# -- properties the tables do not show --------------------------------------------------------
def test_round_is_half_to_even_and_keeps_integers() -> None:
    (halves,) = check_op("aten::round", [np.array([0.5, 1.5, 2.5, -0.5, -1.5])])
    assert halves.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]
    (kept,) = check_op("aten::floor", [np.array([3, -4], dtype=np.int32)])
    assert kept.dtype == np.int32 and kept.tolist() == [3, -4]


def test_fmod_takes_the_dividends_sign_unlike_remainder() -> None:
    a, b = np.array([7.5, -7.5, 7.5, -7.5]), np.array([2.0, 2.0, -2.0, -2.0])
    (ours,) = check_op("aten::fmod.Tensor", [a, b])
    assert ours.tolist() == [math.fmod(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    assert ours.tolist() != (a % b).tolist()


def test_erfc_keeps_its_tail() -> None:
    """erfc(x) for large x is tiny, not the 0 that 1 - erf(x) gives."""
    x = np.array([5.0, 10.0, 26.0])
    (ours,) = check_op("aten::erfc", [x], rtol=1e-12, atol=0.0)
    assert ours[1] == pytest.approx(math.erfc(10.0), rel=1e-13)


def test_rsub_is_other_minus_alpha_self() -> None:
    x, y = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    (ours,) = check_op("aten::rsub.Tensor", [x, y, 3])
    assert ours.tolist() == (torch.from_numpy(y) - 3 * torch.from_numpy(x)).tolist() == [7.0, 14.0]


# -- coverage -----------------------------------------------------------------------------------
# clamp, maximum/minimum and where: test_pointwise.py's table checks them.
_CHECKED_IN_TEST_POINTWISE = {module.clamp, module.clamp_min, module.clamp_max, module.maximum, module.minimum, module.where}


def test_every_kernel_of_the_module_is_checked() -> None:
    registered = {
        key for key, fn in KERNELS.items() if fn.__module__ == module.__name__ and fn not in _CHECKED_IN_TEST_POINTWISE
    }
    checked = set(CASES) | set(SCALAR_CASES) | set(MORE_CASES)
    assert registered - checked == set()
    assert checked - registered == set()

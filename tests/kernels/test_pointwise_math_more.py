"""The bitwise, remainder, clamp, lerp, addcmul, masked_fill and where kernels
of kernels/pointwise_math.py against PyTorch.

Every overload of these runs as a one-node graph through
``run_graph`` (``check_op``) on seeded random inputs and is compared with
``torch.ops.aten.<op>.<overload>``: values to 1e-6 relative in float64 (1e-5
in float32), dtypes and shapes exactly. The table covers broadcasting shape
pairs, 0-d tensors, Python int and float scalars, NaN and infinities where
they matter, and float64/float32/int64/int32/uint8/bool tensors where PyTorch
accepts them; the inputs PyTorch refuses must make gradview raise a
GraphRuntimeError naming the node. test_pointwise_math.py's coverage test
keeps this table and the module's registrations in step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradview.runtime import GraphRuntimeError, run_graph

from . import oracle
from .oracle import Case, check_op, op_graph, rand, seeded_rng, torch_call

# NumPy warns about x % 0.0 and the like; PyTorch (and the results) do not.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INF, NAN = np.inf, np.nan
SHAPE_PAIRS = [((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (3,)), ((3,), ()), ((), ()), ((2, 3), (2, 3))]
UNARY_SHAPES = [(), (5,), (3, 4), (2, 1, 3)]
SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-300, -1e300, INF, -INF, NAN, 40.0, -40.0])
SINGLE = {"rtol": 1e-5, "atol": 1e-6}


def ints(rng: np.random.Generator, shape: tuple[int, ...], lo: int = -9, hi: int = 10, dtype: Any = np.int64) -> np.ndarray:
    return np.asarray(rng.integers(lo, hi, shape), dtype=dtype)


def nonzero_ints(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.int64) -> np.ndarray:
    values = ints(rng, shape, dtype=dtype)
    values[values == 0] = 3
    return values


def bools(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(rng.integers(0, 2, shape), dtype=np.bool_)


# -- the table ------------------------------------------------------------------------------
def _bitwise(op: str) -> dict[str, list[Case]]:
    rng = seeded_rng(op)
    tensor = []
    for sa, sb in SHAPE_PAIRS:
        tensor.append(Case([ints(rng, sa, -50, 50), ints(rng, sb, -50, 50)]))
        tensor.append(Case([bools(rng, sa), bools(rng, sb)]))
    tensor += [
        Case([ints(rng, (3, 4), dtype=np.int32), np.array(6)]),  # int32 & 0-d int64 -> int32
        Case([ints(rng, (4,), 0, 255, np.uint8), ints(rng, (4,), -100, 100, np.int8)]),  # -> int16
        Case([bools(rng, (3,)), ints(rng, (3,))]),  # bool & int64 -> int64
        Case([rand(rng, (3,)), ints(rng, (3,))], raises=True),  # floats are refused
        Case([ints(rng, (3,)), ints(rng, (2,))], raises=True),  # shapes do not broadcast
    ]
    scalar = []
    for shape in UNARY_SHAPES:
        # (A Python bool is not a TorchScript Scalar: ``t & True`` never reaches .Scalar.)
        scalar += [Case([ints(rng, shape, -50, 50), 5]), Case([ints(rng, shape, -50, 50), -3]),
                   Case([bools(rng, shape), 1]), Case([bools(rng, shape), 0])]
    scalar += [
        Case([ints(rng, (4,), 0, 255, np.uint8), -1]),  # -1 wraps to 255
        Case([ints(rng, (4,), dtype=np.int32), 2**40]),  # the int is cast to int32
        Case([rand(rng, (3,)), 1], raises=True),
        Case([ints(rng, (3,)), 1.5], raises=True),
    ]
    return {f"aten::{op}.Tensor": tensor, f"aten::{op}.Scalar": scalar}


def _remainder_and_floor_divide() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    for op, tensor_name, scalar_name in (("remainder", "aten::remainder.Tensor", "aten::remainder.Scalar"),
                                         ("floor_divide", "aten::floor_divide", "aten::floor_divide.Scalar")):
        rng = seeded_rng(op)
        tensor = []
        for sa, sb in SHAPE_PAIRS:
            tensor.append(Case([rand(rng, sa), rand(rng, sb)]))
            tensor.append(Case([ints(rng, sa, -20, 20), nonzero_ints(rng, sb)]))
        # Every pair of specials, but 1e-300 and -1e300 only for floor_divide: PyTorch's
        # vectorized (SLEEF) fmod gives NaN for -1e300 % 1e-300, C's fmod 5.1e-301.
        specials = SPECIALS if op == "floor_divide" else np.delete(SPECIALS, [6, 7])
        tensor += [
            Case([specials[:, None], specials[None, :]]),
            Case([np.array([-7.5, 7.5, -0.5, 0.5, 5.0, -5.0]), np.array([2.0, -2.0, INF, -INF, INF, INF])]),
            Case([rand(rng, (3, 4), dtype=np.float32), rand(rng, (4,), dtype=np.float32)], **SINGLE),
            Case([ints(rng, (3, 4)), rand(rng, (4,), dtype=np.float32)], **SINGLE),  # int64 % float32 -> float32
            Case([ints(rng, (3,), dtype=np.int32), np.array(4)]),  # int32 with a 0-d int64 -> int32
            Case([ints(rng, (4,), 0, 255, np.uint8), nonzero_ints(rng, (4,), np.int8)]),
            Case([ints(rng, (3,)), np.array([1, 0, 2])], raises=True),  # integer division by zero
            Case([bools(rng, (3,)), bools(rng, (3,))], raises=True),
        ]
        scalar = []
        for shape in UNARY_SHAPES:
            for other in (2, -3, 1.5, -0.25, 0.0, INF):
                scalar.append(Case([rand(rng, shape), other]))
            for other in (3, -4):
                scalar.append(Case([ints(rng, shape, -20, 20), other]))
        scalar += [
            Case([SPECIALS, 1.5]), Case([SPECIALS, -2]),
            Case([ints(rng, (5,)), 2.5], **SINGLE),  # int64 tensor with a float -> float32
            Case([rand(rng, (5,), dtype=np.float32), 3], **SINGLE),
            Case([ints(rng, (4,)), 0], raises=True),
            Case([bools(rng, (3,)), 2]),  # bool tensor with an int -> int64
        ]
        cases[tensor_name], cases[scalar_name] = tensor, scalar
    rng = seeded_rng("remainder.Scalar_Tensor")
    cases["aten::remainder.Scalar_Tensor"] = [
        Case([5, nonzero_ints(rng, (3, 4))]), Case([-7, nonzero_ints(rng, (5,))]),
        Case([-7.5, rand(rng, (3, 4))]), Case([3, rand(rng, ())]), Case([2.5, nonzero_ints(rng, (4,))], **SINGLE),
        Case([1.5, SPECIALS]), Case([4, rand(rng, (4,), dtype=np.float32)], **SINGLE),
        Case([3, np.array([1, 0])], raises=True),
    ]
    return cases


def _clamp_tensor() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    for op in ("clamp_min", "clamp_max"):
        rng = seeded_rng(op)
        cl = [Case([rand(rng, sa), rand(rng, sb, 1.0)]) for sa, sb in SHAPE_PAIRS]
        cl += [
            Case([SPECIALS, np.full(SPECIALS.shape, NAN)]), Case([SPECIALS, SPECIALS[::-1].copy()]),
            Case([ints(rng, (3, 4)), ints(rng, (4,))]),
            Case([ints(rng, (3, 4)), rand(rng, (4,), dtype=np.float32)], **SINGLE),  # -> float32
            Case([ints(rng, (3,), dtype=np.int32), np.array(2)]),  # 0-d int64 bound -> int32
            Case([rand(rng, (3,)), rand(rng, (2,))], raises=True),
        ]
        cases[f"aten::{op}.Tensor"] = cl
    return cases


def _unary() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    for op in ("log1p", "expm1", "exp2", "reciprocal", "square"):
        rng = seeded_rng(op)
        make = (lambda r, s: np.abs(rand(r, s)) - 0.9) if op == "log1p" else rand
        table = [Case([make(rng, shape)]) for shape in UNARY_SHAPES]
        table += [
            Case([SPECIALS]), Case([SPECIALS.reshape(1, -1)]),
            Case([ints(rng, (3, 4))], **SINGLE), Case([ints(rng, (4,), dtype=np.int32)], **SINGLE),
            Case([bools(rng, (5,))], **SINGLE), Case([rand(rng, (3, 4), 1.0, np.float32)], **SINGLE),
            Case([rand(rng, (4,), 1.0, np.float16)], rtol=2e-3, atol=2e-3),
        ]
        cases[f"aten::{op}"] = table
    cases["aten::square"] += [Case([ints(rng, (4,), dtype=np.int8)]), Case([np.array(True)])]
    return cases


def _lerp() -> dict[str, list[Case]]:
    rng = seeded_rng("lerp")
    scalar = []
    for sa, sb in SHAPE_PAIRS:
        for weight in (0.3, 0.7, -1.5, 2, 0):
            scalar.append(Case([rand(rng, sa), rand(rng, sb), weight]))
    scalar += [
        Case([rand(rng, (3, 4), dtype=np.float32), rand(rng, (4,), dtype=np.float32), 0.25], **SINGLE),
        Case([rand(rng, (3,), dtype=np.float16), rand(rng, (3,), dtype=np.float16), 0.6], rtol=2e-3, atol=2e-3),
        Case([SPECIALS, SPECIALS[::-1].copy(), 0.5]), Case([SPECIALS, np.zeros_like(SPECIALS), 0.1]),
        Case([ints(rng, (3,)), ints(rng, (3,)), 0.5], raises=True),  # integers are refused
        Case([rand(rng, (3,), dtype=np.float32), rand(rng, (3,)), 0.5], raises=True),  # end's dtype differs
        Case([rand(rng, (3,)), rand(rng, (2,)), 0.5], raises=True),
    ]
    tensor = []
    for sa, sb in SHAPE_PAIRS:
        tensor.append(Case([rand(rng, sa), rand(rng, sb), rand(rng, sb, 1.0)]))
        tensor.append(Case([rand(rng, sa), rand(rng, sa), rand(rng, (2, *sa), 1.0)]))  # the weight broadcasts too
    tensor += [
        Case([rand(rng, (3,), dtype=np.float32), rand(rng, (3,), dtype=np.float32), np.array(0.7)], **SINGLE),
        Case([rand(rng, (3,)), rand(rng, (3,)), np.array(1)]),  # a 0-d weight of any dtype is a number
        Case([rand(rng, (3,)), rand(rng, (3,)), np.array(True)]),
        Case([rand(rng, (3,), dtype=np.float32), rand(rng, (3,), dtype=np.float32),
              rand(rng, (3,), 1.0)], raises=True),  # a 1-d weight must match
        Case([ints(rng, (3,)), ints(rng, (3,)), np.array(0.5)]),  # a 0-d float weight promotes: float64
        Case([ints(rng, (3,)), ints(rng, (3,)), np.array(0.5, dtype=np.float32)], **SINGLE),
        Case([rand(rng, (3,), dtype=np.float16), rand(rng, (3,), dtype=np.float16), np.array(0.3)],
             rtol=2e-3, atol=2e-3),  # float16 stays float16
        Case([ints(rng, (3,)), ints(rng, (3,)), np.array(2)], raises=True),  # all integers
        Case([rand(rng, (3,)), rand(rng, (3,), dtype=np.float32), np.array(0.5)], raises=True),
    ]
    return {"aten::lerp.Scalar": scalar, "aten::lerp.Tensor": tensor}


def _addcmul() -> dict[str, list[Case]]:
    rng = seeded_rng("addcmul")
    table = []
    for sa, sb in SHAPE_PAIRS:
        for value in (1, 0.5, -2):
            table.append(Case([rand(rng, sa), rand(rng, sb), rand(rng, sa), value]))
    table += [
        Case([ints(rng, (3, 4)), ints(rng, (4,)), ints(rng, (3, 1)), 2]),
        Case([ints(rng, (3, 4)), ints(rng, (4,)), ints(rng, (3, 1)), 0.5]),  # 0.5 becomes 0 for int64
        Case([ints(rng, (3,)), rand(rng, (3,), dtype=np.float32), ints(rng, (3,)), 0.5], **SINGLE),
        Case([np.array(2.0), rand(rng, (3,), dtype=np.float32), rand(rng, (3,), dtype=np.float32), 1], **SINGLE),
        Case([rand(rng, (3,), dtype=np.float32), rand(rng, (3,)), np.array(2.0), 1]),  # -> float64
        Case([SPECIALS, SPECIALS[::-1].copy(), SPECIALS, 1.5]),
        Case([bools(rng, (3,)), bools(rng, (3,)), bools(rng, (3,)), 1], raises=True),
        Case([rand(rng, (3,)), rand(rng, (2,)), rand(rng, (3,)), 1], raises=True),
    ]
    return {"aten::addcmul": table}


def _masked_fill() -> dict[str, list[Case]]:
    rng = seeded_rng("masked_fill")
    scalar = []
    for sa, sb in SHAPE_PAIRS:  # the mask and self broadcast against each other
        scalar.append(Case([rand(rng, sa), bools(rng, sb), -1.5]))
        scalar.append(Case([rand(rng, sb), bools(rng, sa), 2]))
    scalar += [
        Case([ints(rng, (3, 4)), bools(rng, (4,)), 1.7]),  # cast to int64: 1
        Case([bools(rng, (3,)), bools(rng, (3,)), 2]),  # cast to bool: True
        Case([rand(rng, (3,), dtype=np.float32), bools(rng, (3,)), 0.1], **SINGLE),
        Case([rand(rng, (4,)), bools(rng, (4,)), INF]), Case([rand(rng, (4,)), bools(rng, (4,)), NAN]),
        Case([rand(rng, (3,)), ints(rng, (3,), 0, 2), 1.0], raises=True),  # the mask must be bool
        Case([rand(rng, (3,)), bools(rng, (2,)), 1.0], raises=True),
    ]
    tensor = [
        Case([rand(rng, (3, 4)), bools(rng, (3, 4)), np.array(0.5)]),
        Case([rand(rng, (3, 4)), bools(rng, (4,)), np.array(7)]),  # int64 value into float64
        Case([ints(rng, (3, 4)), bools(rng, (2, 1, 4)), np.array(2.5)]),  # float value into int64: 2
        Case([rand(rng, ()), bools(rng, (3,)), np.array(-1.0, dtype=np.float32)]),
        Case([rand(rng, (3,)), bools(rng, (3,)), np.array([7.0])], raises=True),  # the value must be 0-d
    ]
    return {"aten::masked_fill.Scalar": scalar, "aten::masked_fill.Tensor": tensor}


def _where() -> dict[str, list[Case]]:
    rng = seeded_rng("where")
    cases = [Case([bools(rng, shape)]) for shape in UNARY_SHAPES]
    cases += [Case([np.array(True)]), Case([np.array(False)]), Case([np.zeros((2, 3), dtype=bool)]),
              Case([ints(rng, (3, 4), -1, 2)]), Case([np.where(rand(rng, (2, 5)) > 0, rand(rng, (2, 5)), 0.0)]),
              Case([np.zeros((0, 3))])]
    return {"aten::where": cases}


def build_cases() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    for op in ("__and__", "__or__", "__xor__"):
        cases.update(_bitwise(op))
    for part in (_remainder_and_floor_divide(), _clamp_tensor(), _unary(), _lerp(), _addcmul(),
                 _masked_fill(), _where()):
        cases.update(part)
    return cases


CASES = build_cases()


@pytest.mark.parametrize("qualified", sorted(CASES))
def test_against_torch(qualified: str) -> None:
    assert CASES[qualified], qualified
    for index, case in enumerate(CASES[qualified]):
        try:
            if case.raises:
                check_raises(qualified, case.args)
            else:
                check_op(qualified, case.args, rtol=case.rtol, atol=case.atol)
        except (AssertionError, pytest.fail.Exception) as exc:
            raise AssertionError(f"case {index} of {qualified}: {_describe(case.args)}\n{exc}") from None


def check_raises(qualified: str, args: list[Any]) -> None:
    """PyTorch raises on ``args``; gradview must raise GraphRuntimeError naming the node."""
    with pytest.raises((RuntimeError, ValueError, TypeError, NotImplementedError, IndexError)):
        torch_call(qualified, args)
    graph, inputs = op_graph(qualified, args)
    with pytest.raises(GraphRuntimeError) as info:
        run_graph(graph, inputs, backend=oracle.BACKEND)
    kind = qualified.partition(".")[0]
    assert info.value.node is not None and info.value.node.kind() == kind
    assert kind in str(info.value)


def _describe(args: list[Any]) -> str:
    return ", ".join(f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in args)


# -- properties the table does not show ---------------------------------------------------------
def test_remainder_takes_the_divisors_sign_like_python() -> None:
    a = np.array([7, -7, 7, -7, 0])
    b = np.array([3, 3, -3, -3, -5])
    (ours,) = check_op("aten::remainder.Tensor", [a, b])
    assert ours.tolist() == [x % y for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    (floats,) = check_op("aten::remainder.Scalar", [np.array([5.5, -5.5, 0.0]), -2.0])
    assert floats.tolist() == [5.5 % -2.0, -5.5 % -2.0, 0.0]


def test_where_returns_int64_index_arrays() -> None:
    (indices,) = check_op("aten::where", [np.array([[0.0, 1.5], [2.0, 0.0]])])
    assert [i.dtype for i in indices] == [np.int64, np.int64]
    assert [i.tolist() for i in indices] == [[0, 1], [1, 0]]


def test_bitwise_of_bools_stays_bool() -> None:
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    for op, expected in (("__and__", a & b), ("__or__", a | b), ("__xor__", a ^ b)):
        (ours,) = check_op(f"aten::{op}.Tensor", [a, b])
        assert ours.dtype == np.bool_ and ours.tolist() == expected.tolist()

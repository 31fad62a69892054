"""TorchScript's scalar ops (kernels/scalar_math.py) against PyTorch.

Two kinds of checks, with the helpers of scalar_oracle.py:

* every arithmetic, math, comparison, logic and conversion overload PyTorch
  can call directly goes through a one-node graph and is compared with
  ``torch.ops.aten.<op>.<overload>`` on seeded random and edge-case values
  (``check_op`` for finite results; typed graph inputs for ``Scalar`` and
  ``Device`` arguments, NaN results and expected errors, where PyTorch
  raising means gradview must raise GraphRuntimeError naming the node);
* functions compiled by ``torch.jit.script`` (arithmetic, comparisons,
  branches, optionals, math): the printed graph is parsed, run with
  ``run_graph`` and compared with calling the scripted function.

test_lists.py's coverage test checks that every kernel scalar_math.py
registers was exercised by these tests or its own.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import (
    DeviceType,
    FloatType,
    IntType,
    ListType,
    NoneType,
    OptionalType,
    TensorType,
    Type,
    parse_ir,
)
from gradview.ops import KERNELS

from .scalar_oracle import (
    INF,
    NAN,
    SPECIAL_FLOATS,
    Case,
    S,
    assert_node_raises,
    assert_same,
    check_scripted,
    check_table,
    node_graph,
    run,
)


# -- case tables ----------------------------------------------------------------------
def _ints(rng: random.Random, n: int, lo: int = -1000, hi: int = 1000) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def _floats(rng: random.Random, n: int, scale: float = 10.0) -> list[float]:
    return [rng.uniform(-scale, scale) for _ in range(n)]


def _float_pairs(rng: random.Random) -> list[tuple[float, float]]:
    pairs = [(a, b) for a in SPECIAL_FLOATS for b in SPECIAL_FLOATS]
    return pairs + list(zip(_floats(rng, 40), _floats(rng, 40), strict=True))


def _int_pairs(rng: random.Random) -> list[tuple[int, int]]:
    edges = [(0, 0), (7, 0), (-7, 0), (0, 3), (7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3)]
    wide = [(2**62, 2**62), (-(2**63), 1), (2**62 + 3, -(2**62)), (2**40, 2**40), (-(2**63), -(2**63) + 5)]
    return edges + wide + list(zip(_ints(rng, 40), _ints(rng, 40), strict=True))


def _arith_cases(op: str, rng: random.Random) -> dict[str, list[Case]]:
    """int/float/int_float/float_int/Scalar overloads of a binary arithmetic op."""
    divides = op in ("floordiv", "remainder")
    ints = _int_pairs(rng)
    if divides:  # keep clear of int64 overflow in the C++ division (it traps)
        ints = [(a, b) for a, b in ints if abs(a) < 2**62 and abs(b) < 2**62]

    def int_case(a: int, b: int, types: list[Type] | None = None) -> Case:
        if divides and b == 0:
            # floordiv raises "division by 0"; remainder's C++ % traps (SIGFPE).
            return Case([a, b], types, "raises" if op == "floordiv" else "ours-raises")
        return Case([a, b], types)

    floats = _float_pairs(rng)
    mixed_int = [-3, 0, 1, 7, 2**53 + 1] + _ints(rng, 10)
    mixed_float = [0.0, -0.0, 2.5, -0.75, INF, NAN] + _floats(rng, 10)
    return {
        f"aten::{op}.int": [int_case(a, b) for a, b in ints],
        f"aten::{op}.float": [Case([a, b]) for a, b in floats],
        f"aten::{op}.int_float": [Case([a, b]) for a in mixed_int for b in mixed_float],
        f"aten::{op}.float_int": [Case([b, a]) for a in mixed_int for b in mixed_float],
        f"aten::{op}": (
            [int_case(a, b, [S, S]) for a, b in ints[:25]]
            + [Case([a, b], [S, S]) for a, b in floats[:: 7]]
            + [Case([a, float(b)], [S, S]) for a, b in ints[10:30]]
            + [Case([float(a), b], [S, S]) for a, b in ints[10:30] if not (divides and b == 0)]
        ),
    }


def _unary_cases(name: str, rng: random.Random) -> dict[str, list[Case]]:
    ints = [0, 1, -1, 2, 3, -5, 20, 100, 800, -800, 2**40]
    floats = SPECIAL_FLOATS + _floats(rng, 30) + [1e-10, -1e-10, 700.0, -700.0, 20.0]
    return {
        f"aten::{name}.int": [Case([a]) for a in ints],
        f"aten::{name}.float": [Case([a]) for a in floats],
        # Single precision results: compared exactly in double.
        f"aten::{name}.Scalar": [Case([a], [S]) for a in ints[:8] + floats],
    }


def _comparison_cases(op: str, rng: random.Random) -> dict[str, list[Case]]:
    ints = _int_pairs(rng)[:30] + [(5, 5), (-5, -5)]
    floats = _float_pairs(rng)[::3] + [(1.5, 1.5)]
    mixed = [(2, 2.0), (2**62 + 1, float(2**62)), (-3, -2.5), (0, -0.0), (7, NAN), (1, INF)]
    strings = [("a", "b"), ("b", "a"), ("abc", "abc"), ("", "a"), ("ab", "a"), ("Z", "a")]
    return {
        f"aten::{op}.float": [Case([a, b]) for a, b in floats],
        f"aten::{op}.int_float": [Case([a, b]) for a, b in mixed],
        f"aten::{op}.float_int": [Case([b, a]) for a, b in mixed],
        f"aten::{op}": [Case([a, b], [S, S]) for a, b in ints[:10] + floats[:20] + mixed],
        f"aten::{op}.str": [Case([a, b]) for a, b in strings],
        f"aten::{op}.int": [Case([a, b]) for a, b in ints],
    }


def build_cases() -> dict[str, list[Case]]:
    rng = random.Random(20240607)
    cases: dict[str, list[Case]] = {}
    for op in ("add", "sub", "mul", "floordiv", "remainder"):
        cases.update(_arith_cases(op, rng))
    for op in ("eq", "ne", "lt", "gt", "le", "ge"):
        cases.update(_comparison_cases(op, rng))
    for name in ("exp", "log", "sqrt", "sin", "cos", "tanh", "erf", "log1p", "expm1"):
        cases.update(_unary_cases(name, rng))

    int_pairs = _int_pairs(rng)[:30]
    float_pairs = _float_pairs(rng)[::4]
    cases["aten::div.int"] = [Case([a, b]) for a, b in int_pairs]
    cases["aten::div.float"] = [Case([a, b]) for a, b in float_pairs]
    cases["aten::div"] = [Case([a, b], [S, S]) for a, b in int_pairs[:15]] + [
        Case([a, b], [S, S]) for a, b in float_pairs[:20]
    ]

    def pow_case(a: Any, b: Any, types: list[Type] | None = None) -> Case:
        return Case([a, b], types, "raises" if a == 0 and b < 0 else "ok")

    small_ints = [(a, b) for a in (-3, -2, -1, 0, 1, 2, 5, 10) for b in (-3, -1, 0, 1, 2, 3, 7, 30)]
    pow_floats = [(a, b) for a in (-8.0, -1.5, -0.0, 0.0, 0.5, 2.0, 10.0, INF, NAN)
                  for b in (-2.0, -0.5, 0.0, 1.0 / 3.0, 2.0, 3.0, 400.0, -INF, NAN)]
    cases["aten::pow.int"] = [pow_case(a, b) for a, b in small_ints]
    cases["aten::pow.float"] = [pow_case(a, b) for a, b in pow_floats]
    cases["aten::pow.int_float"] = [pow_case(a, float(b) + 0.5) for a, b in small_ints] + [pow_case(0, -1.0)]
    cases["aten::pow.float_int"] = [pow_case(float(a) + 0.25, b) for a, b in small_ints] + [pow_case(0.0, -2)]
    # The Scalar overload is plain C pow: 0 ** -1 is inf there, not an error.
    cases["aten::pow.Scalar_Scalar"] = [Case([a, b], [S, S]) for a, b in small_ints[::3] + pow_floats[::5]] + [
        Case([a, b], [S, S]) for a, b in [(0, -3), (0.0, -1.0), (-0.0, -1.0), (-0.0, -2.0), (0, -0.5)]
    ]

    log_args = [(8, 2), (100, 10), (8, 1), (8, 0), (0, 5), (-1, 2), (1, 1), (3, 9)]
    cases["aten::log.int_int"] = [Case([a, b]) for a, b in log_args]
    cases["aten::log.float_float"] = [Case([float(a) + 0.5, float(b) + 0.25]) for a, b in log_args] + [
        Case([0.0, 2.0]), Case([INF, 2.0]), Case([2.0, INF]), Case([NAN, 2.0])
    ]
    cases["aten::log.int_float"] = [Case([a, float(b) + 0.5]) for a, b in log_args]
    cases["aten::log.float_int"] = [Case([float(a) + 0.5, b]) for a, b in log_args]
    cases["aten::log.Scalar_Scalar"] = [Case([a, b], [S, S]) for a, b in log_args] + [Case([2.5, 10], [S, S])]

    cases["aten::neg.int"] = [Case([a]) for a in [0, 5, -5, 2**62, -(2**63), 2**63 - 1]]
    cases["aten::neg.float"] = [Case([a]) for a in SPECIAL_FLOATS + [0.1]]
    cases["aten::neg.Scalar"] = [Case([a], [S]) for a in [3, -(2**63), 0.1, -2.5, INF, NAN, -0.0]]

    bools = [(a, b) for a in (False, True) for b in (False, True)]
    some_ints = [(6, 3), (-6, 3), (0, -1), (2**62, 2**61 + 5), (-(2**63), -1)] + list(
        zip(_ints(rng, 10, -(2**40), 2**40), _ints(rng, 10, -(2**40), 2**40), strict=True)
    )
    for op in ("__and__", "__or__", "__xor__"):
        cases[f"aten::{op}.bool"] = [Case([a, b]) for a, b in bools]
        cases[f"aten::{op}.int"] = [Case([a, b]) for a, b in some_ints]
    cases["aten::__not__"] = [Case([True]), Case([False])]
    cases["aten::eq.bool"] = [Case([a, b]) for a, b in bools]
    cases["aten::ne.bool"] = [Case([a, b]) for a, b in bools]
    devices = [("cpu", "cpu"), ("cpu", "cuda:0"), ("cuda", "cuda:0"), ("cuda:1", "cuda:1")]
    for op in ("eq", "ne"):
        cases[f"aten::{op}.device"] = [
            Case([a, b], [DeviceType(), DeviceType()], torch_args=[torch.device(a), torch.device(b)])
            for a, b in devices
        ]
        cases[f"aten::{op}.int_list"] = [
            Case([a, b]) for a, b in [([1, 2], [1, 2]), ([1, 2], [1, 3]), ([1], [1, 1]), ([], []), ([], [0])]
        ]
        cases[f"aten::{op}.float_list"] = [
            Case([a, b]) for a, b in [([1.0, 2.5], [1.0, 2.5]), ([1.0, NAN], [1.0, NAN]), ([0.0], [-0.0])]
        ] + [Case([[1.0], []], [ListType(FloatType()), ListType(FloatType())])]
        cases[f"aten::{op}.bool_list"] = [Case([a, b]) for a, b in [([True, False], [True, False]), ([True], [False])]]
        cases[f"aten::{op}.str_list"] = [Case([a, b]) for a, b in [(["a", "b"], ["a", "b"]), (["a"], ["b"]), (["a"], ["a", "a"])]]
        tensor_lists = [
            ([np.array(1.0)], [np.array(1.0)]),
            ([np.array([2])], [np.array(2)]),
            ([np.array(1.0), np.array(3)], [np.array(1.0), np.array(4)]),
            ([np.array(1.0)], [np.array(1.0), np.array(1.0)]),
        ]
        tensor_type = [ListType(TensorType()), ListType(TensorType())]
        cases[f"aten::{op}.Tensor_list"] = [Case([a, b], tensor_type) for a, b in tensor_lists] + [
            Case([[np.ones(2)], [np.ones(2)]], tensor_type, "raises"),
            Case([[np.ones(0)], [np.ones(0)]], tensor_type, "raises"),
        ]

    # conversions
    tensors = [np.array(3.7), np.array([-3.7]), np.array([[2]], dtype=np.int64), np.array(True),
               np.array([0.0], dtype=np.float32), np.array(-0.5), np.array(7, dtype=np.int32)]
    many = [np.array([1, 2]), np.zeros((0,)), np.ones((2, 2))]
    cases["aten::Int.Tensor"] = [Case([t]) for t in tensors] + [Case([t], expect="raises") for t in many] + [
        Case([np.array(2.5e20)], expect="raises")
    ]
    cases["aten::Float.Tensor"] = [Case([t]) for t in tensors] + [Case([t], expect="raises") for t in many]
    cases["aten::Bool.Tensor"] = [Case([t]) for t in tensors] + [Case([t], expect="raises") for t in many]
    cases["aten::Int.bool"] = [Case([True]), Case([False])]
    cases["aten::Int.float"] = [Case([a]) for a in [3.7, -3.7, 0.0, -0.0, 1e18, -(2.0**63)] + _floats(rng, 10, 1e6)]
    cases["aten::Int.Scalar"] = [Case([a], [S]) for a in [3, -4, 3.9, -3.9, 2**62]]
    cases["aten::Int.str"] = [Case([s]) for s in ["12", "+12", "-12", " 12", "007"]] + [
        Case([s], expect="raises") for s in ["", " 12 ", "0x10", "12abc", "1_0", "1.5", "99999999999999999999"]
    ]
    cases["aten::Float.Scalar"] = [Case([a], [S]) for a in [3, -2**62, 2.5, NAN]]
    cases["aten::Float.bool"] = [Case([True]), Case([False])]
    cases["aten::Float.str"] = [Case([s]) for s in ["1.5", " 1.5", "1e3", "-.5", "5.", "inf", "-Infinity", "nan",
                                                     "0x10", "-0x1p3", "+1E-3"]] + [
        Case([s], expect="raises") for s in ["", "x", "1.5abc", "1.5 ", "1_0", "1e999", "."]
    ]
    cases["aten::Bool.int"] = [Case([a]) for a in [0, 1, -3, 2**62]]
    cases["aten::Bool.float"] = [Case([a]) for a in [0.0, -0.0, 0.5, NAN, INF]]
    return cases


CASES = build_cases()


@pytest.mark.parametrize("qualified", sorted(CASES))
def test_against_torch_ops(qualified: str) -> None:
    check_table(qualified, CASES[qualified])


# -- overloads the resolver never picks, called directly ----------------------------------
def test_shadowed_overloads() -> None:
    """Overloads an earlier overload always wins over in gradview's resolution
    order (Float.Scalar before Float.int, pow.int before pow.int_to_int,
    len.t before len.any): their kernels still match PyTorch."""
    rng = random.Random(7)
    for a in [0, 3, -(2**62)] + _ints(rng, 10):
        assert_same(KERNELS["aten::Float.int"](np, a), torch.ops.aten.Float.int(a))
    assert KERNELS["aten::len.any"](np, [1, "a", None]) == torch.ops.aten.len.any([1, "a", None]) == 3
    # pow.int_to_int: PyTorch pushes a float despite the "-> int" schema; we
    # return the int the schema promises (exact, int64 wrap-around) for b >= 0.
    for a, b in [(2, 3), (-2, 3), (0, 0), (7, 0), (3, 20), (-1, 5)]:
        ours = KERNELS["aten::pow.int_to_int"](np, a, b)
        assert type(ours) is int and ours == torch.ops.aten.pow.int_to_int(a, b)
    assert_same(KERNELS["aten::pow.int_to_int"](np, 2, -1), torch.ops.aten.pow.int_to_int(2, -1))
    assert KERNELS["aten::pow.int_to_int"](np, 2, 64) == 0  # int64 wrap-around
    assert KERNELS["aten::pow.int_to_int"](np, 3, 41) == 3**41 % 2**64 - 2**64
    with pytest.raises(ValueError, match="negative power"):
        KERNELS["aten::pow.int_to_int"](np, 0, -1)


# -- errors name the node ------------------------------------------------------------------
def test_errors_name_the_node() -> None:
    error = assert_node_raises("aten::__getitem__.t", [[1, 2, 3], 5], match="out of range")
    assert "list index 5" in str(error) and "aten::__getitem__" in str(error)
    assert_node_raises("aten::floordiv.int", [7, 0], match="division by zero")
    assert_node_raises("aten::remainder.int", [7, 0], match="modulo by zero")
    assert_node_raises("aten::pow.float", [0.0, -1.0], match="negative power")
    assert_node_raises("aten::Int.Tensor", [np.ones(3)], match="3 elements")
    assert_node_raises("aten::pop", [[], -1], [ListType(IntType()), IntType()], match="empty list")


def test_int_of_nan_and_huge_floats_raises() -> None:
    """PyTorch's C++ cast is undefined behaviour here (it returns INT64_MIN); we refuse."""
    for value in (NAN, INF, -INF, 1e19, -1e30):
        assert_node_raises("aten::Int.float", [value], match="int")
        assert_node_raises("aten::Int.Scalar", [value], [S], match="int")
    assert_node_raises("aten::Int.Tensor", [np.array(NAN)])


def test_is_and_isnot() -> None:
    """``a is b``: None only is None (an undefined tensor is None), primitives
    of one type compare by value, anything else by identity."""
    opt_int = OptionalType(IntType())
    for a, b, expected in [(None, None, True), (3, None, False), (None, 3, False), (3, 3, True)]:
        graph = node_graph("aten::__is__", [a, b], [opt_int, opt_int])
        assert run(graph, [a, b]) == [expected]
        graph = node_graph("aten::__isnot__", [a, b], [opt_int, opt_int])
        assert run(graph, [a, b]) == [not expected]
    x = np.ones(2)
    tensor = TensorType()
    assert run(node_graph("aten::__is__", [x, None], [tensor, NoneType()]), [x, None]) == [False]
    assert run(node_graph("aten::__is__", [x, x.copy()], [tensor, tensor]), [x, x.copy()]) == [False]
    assert run(node_graph("aten::__isnot__", [None, None], [tensor, NoneType()]), [None, None]) == [False]
    same = parse_ir(
        "graph(%x : Tensor):\n  %a : bool = aten::__is__(%x, %x)\n  %b : bool = aten::__isnot__(%x, %x)\n"
        "  return (%a, %b)\n"
    )
    assert run(same, [x]) == [True, False]


# -- scripted functions ---------------------------------------------------------------------
@torch.jit.script
def int_arithmetic(a: int, b: int, x: float):
    c = a * b - a // 3 + a % 5 + (b - a) * 7
    d = c / 2 + x ** 2 + a ** 2 - x // 1.5 + x % 2.0
    e = -a
    f = a & b | a ^ 3
    return c, d, e, min(a, b), max(x, 1.5), abs(e), abs(x), float(a), int(x), bool(a), f


@torch.jit.script
def comparisons(a: int, b: int, x: float, y: float, s: str, t: str):
    return (a < b, a <= b, a > b, a >= b, x < y, x == y, x != y, x >= y, a < x, x > b,
            s < t, s == t, s != t, s >= t, (a < b) == (x < y), (a < b) != True)  # noqa: E712


@torch.jit.script
def int_equality(a: int, b: int):
    return a == b, a != b, [a, b] == [b, a]


@torch.jit.script
def branches(flag: bool, n: int, other: bool):
    if flag and not other:
        result = n * 2
    elif flag or other:
        result = n - 1
    else:
        result = -n
    total = 0
    i = 0
    while i < n and total < 100:
        total += i
        i += 1
    return result, total, flag ^ other, not flag


@torch.jit.script
def optionals(o: int | None, p: float | None):
    a = 0 if o is None else o
    b = p * 2.0 if p is not None else -1.0
    return a, b, o is None, p is not None


@torch.jit.script
def math_ops(a: int, x: float):
    return (math.exp(x), math.log(a), math.sqrt(x), math.sin(a), math.cos(x), math.tanh(x),
            math.erf(x), math.log1p(x), math.expm1(x), math.log(x, 2.0), math.pow(a, 2), x ** a)


SCRIPTED_CASES = [
    (int_arithmetic, [(7, -3, 2.5), (-17, 4, -0.75), (0, 5, 100.0), (2**40, 3, -3.5)]),
    (comparisons, [(1, 2, 1.5, 1.5, "a", "b"), (3, 3, -0.5, 2.0, "b", "a"), (5, -1, NAN, 1.0, "x", "x")]),
    (branches, [(True, 5, False), (True, 3, True), (False, 50, False), (False, 2, True)]),
    (optionals, [(None, None), (3, 1.5), (None, -0.0), (-7, None)]),
    (math_ops, [(3, 0.5), (1, 2.0), (10, 1e-3)]),
    (int_equality, [(3, 3), (3, 4)]),
]


@pytest.mark.parametrize(("fn", "inputs"), [(fn, args) for fn, cases in SCRIPTED_CASES for args in cases],
                         ids=lambda v: v.name if hasattr(v, "name") else None)
def test_scripted_function(fn: Any, inputs: tuple[Any, ...]) -> None:
    check_scripted(fn, *inputs)

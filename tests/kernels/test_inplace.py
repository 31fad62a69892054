"""The in-place kernels of kernels/inplace.py against PyTorch's in-place ops.

Every overload runs as a one-node graph through ``run_graph`` and through
``torch.ops.aten.<op>_`` on a copy of the same inputs: the returned tensor
must match torch's (values to 1e-6 relative in float64, 1e-5 in float32,
dtype and shape exactly), and on NumPy the input array itself must now hold
that result (the kernel wrote into it). Called directly, each kernel returns
the very ``self`` object it was given. PyTorch's refusals must be gradview's
too (a GraphRuntimeError naming the node): a result that would grow
``self`` by broadcasting, a floating result written into an integer tensor,
a non-bool result into a bool one, ``fill_`` values that overflow the dtype,
a non-0-d ``fill_`` tensor. A coverage test keeps the table and the module's
registrations in step.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from gradview.kernels import inplace as module
from gradview.kernels.backend import get_backend
from gradview.ops import KERNELS
from gradview.runtime import run_graph

from . import oracle
from .oracle import Case, _compare, op_graph, rand, seeded_rng, torch_call
from .test_pointwise_math_more import SINGLE, bools, check_raises, ints

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INF, NAN = np.inf, np.nan
EDGES = np.array([0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 6.0, 20.0, -20.0, INF, -INF, NAN])


def _arith(op: str) -> dict[str, list[Case]]:
    rng = seeded_rng(op)
    alpha = [] if op == "mul_" else [1]
    tensor = [
        Case([rand(rng, (3, 4)), rand(rng, (3, 4)), *alpha]),  # the out=self fast path
        Case([rand(rng, (3, 4)), rand(rng, (4,)), *alpha]),  # other broadcasts to self
        Case([rand(rng, (2, 1, 3)), rand(rng, ()), *alpha]),
        Case([rand(rng, (3,), dtype=np.float32), rand(rng, (3,)), *alpha], **SINGLE),  # computed in float64
        Case([rand(rng, (3,), dtype=np.float32), np.array(2.5), *alpha], **SINGLE),
        Case([ints(rng, (3, 4)), ints(rng, (4,)), *alpha]), Case([ints(rng, (3,), dtype=np.int32), ints(rng, (3,)), *alpha]),
        Case([rand(rng, (3,)), rand(rng, (2, 3)), *alpha], raises=True),  # would grow self
        Case([ints(rng, (3,)), rand(rng, (3,)), *alpha], raises=True),  # float result into int64
    ]
    scalar = [
        Case([rand(rng, (3, 4)), 2.5, *alpha]), Case([rand(rng, ()), -3, *alpha]),
        Case([ints(rng, (4,)), 3, *alpha]), Case([ints(rng, (4,), 0, 200, np.uint8), 100, *alpha]),  # wraps
        Case([rand(rng, (4,), dtype=np.float32), 1e-3, *alpha], **SINGLE),
        Case([ints(rng, (4,)), 2.5, *alpha], raises=True),
    ]
    if op in ("add_", "sub_"):
        tensor += [Case([rand(rng, (3, 4)), rand(rng, (4,)), 2.5]), Case([ints(rng, (3,)), ints(rng, (3,)), 2])]
        scalar += [Case([rand(rng, (3,)), 2, -0.5]), Case([ints(rng, (3,)), 2, 1.5], raises=True)]
    if op == "sub_":
        tensor.append(Case([bools(rng, (3,)), bools(rng, (3,)), 1], raises=True))
    else:
        tensor.append(Case([bools(rng, (3,)), bools(rng, (3,)), *alpha]))
        tensor.append(Case([bools(rng, (3,)), ints(rng, (3,)), *alpha], raises=True))  # int64 result into bool
    return {f"aten::{op}.Tensor": tensor, f"aten::{op}.Scalar": scalar}


def _div() -> dict[str, list[Case]]:
    rng = seeded_rng("div_")
    tensor = [
        Case([rand(rng, (3, 4)), rand(rng, (3, 4))]), Case([rand(rng, (3, 4)), rand(rng, (4,))]),
        Case([rand(rng, (3,), dtype=np.float32), ints(rng, (3,))], **SINGLE), Case([EDGES, EDGES[::-1].copy()]),
        Case([ints(rng, (3,)), ints(rng, (3,))], raises=True),  # true division of integers is float
        Case([rand(rng, (3,)), rand(rng, (2, 3))], raises=True),
    ]
    scalar = [Case([rand(rng, (3, 4)), 2.5]), Case([rand(rng, (3,)), 0]), Case([ints(rng, (3,)), 2], raises=True)]
    modes = []
    for mode in ("floor", "trunc", None):
        modes += [Case([rand(rng, (3, 4)), rand(rng, (4,)), mode])]
        modes += [Case([ints(rng, (3, 4), -20, 20), np.array([3, -3, 4, -7]), mode], raises=mode is None)]
    scalar_modes = [Case([rand(rng, (3,)), -2.5, m]) for m in ("floor", "trunc", None)] + [
        Case([ints(rng, (5,), -20, 20), 3, "floor"]), Case([ints(rng, (5,), -20, 20), -3, "trunc"]),
    ]
    return {"aten::div_.Tensor": tensor, "aten::div_.Scalar": scalar,
            "aten::div_.Tensor_mode": modes, "aten::div_.Scalar_mode": scalar_modes}


def _unary() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    rng = seeded_rng("unary_")
    args = {"relu_": [], "sigmoid_": [], "tanh_": [], "exp_": [], "neg_": [], "hardswish_": [], "silu_": [],
            "elu_": [1.5, 2.0, 0.5], "leaky_relu_": [0.2], "hardtanh_": [-0.5, 2.0]}
    for op, extra in args.items():
        table = [Case([rand(rng, (3, 4)), *extra]), Case([rand(rng, ()), *extra]), Case([EDGES, *extra]),
                 Case([rand(rng, (2, 3), dtype=np.float32), *extra], **SINGLE)]
        if op in ("relu_", "neg_", "hardtanh_"):
            table.append(Case([ints(rng, (4,)), *([-1, 2] if extra else [])]))
        if op in ("sigmoid_", "tanh_", "exp_"):
            table.append(Case([ints(rng, (3,)), *extra], raises=True))  # a float result into int64
        cases[f"aten::{op}"] = table
    cases["aten::neg_"].append(Case([ints(rng, (4,), 1, 200, np.uint8)]))  # wraps around
    cases["aten::relu_"].append(Case([bools(rng, (3,))], raises=True))
    cases["aten::leaky_relu_"].append(Case([rand(rng, (3,)), -0.5]))  # the forward allows a negative slope
    cases["aten::elu_"].append(Case([rand(rng, (3,))]))
    cases["aten::clamp_"] = [
        Case([rand(rng, (3, 4)), -0.5, 0.5]), Case([rand(rng, (3,)), None, 0.0]), Case([EDGES, -1, 1]),
        Case([ints(rng, (4,)), -2, 2]), Case([ints(rng, (4,)), 0.5, None], raises=True),
    ]
    cases["aten::clamp_.Tensor"] = [
        Case([rand(rng, (3, 4)), rand(rng, (4,)), rand(rng, (3, 1))]), Case([rand(rng, (3,)), None, rand(rng, ())]),
        Case([rand(rng, (3,)), rand(rng, (2, 3)), None], raises=True),
    ]
    return cases


def _masked_fill() -> dict[str, list[Case]]:
    rng = seeded_rng("masked_fill_")
    scalar = [
        Case([rand(rng, (3, 4)), bools(rng, (3, 4)), -1.5]), Case([rand(rng, (3, 4)), bools(rng, (4,)), 2]),
        Case([ints(rng, (3, 4)), bools(rng, (3, 1)), 1.7]), Case([rand(rng, (4,)), bools(rng, (4,)), NAN]),
        Case([rand(rng, (4,)), bools(rng, (3, 4)), 1.0], raises=True),  # the mask may not grow self
        Case([rand(rng, (3,)), ints(rng, (3,), 0, 2), 1.0], raises=True),
    ]
    tensor = [
        Case([rand(rng, (3, 4)), bools(rng, (4,)), np.array(0.5)]), Case([ints(rng, (3,)), bools(rng, (3,)), np.array(2.5)]),
        Case([rand(rng, (3,)), bools(rng, (3,)), np.array([7.0])], raises=True),
    ]
    return {"aten::masked_fill_.Scalar": scalar, "aten::masked_fill_.Tensor": tensor}


def _fill_copy() -> dict[str, list[Case]]:
    rng = seeded_rng("fill_")
    fill = [
        Case([rand(rng, (3, 4)), 2.5]), Case([ints(rng, (3,)), 2.7]), Case([ints(rng, (3,)), -2.7]),
        Case([bools(rng, (3,)), 2]), Case([rand(rng, (2,), dtype=np.float32), INF]), Case([rand(rng, ()), NAN]),
        Case([ints(rng, (2,), 0, 9, np.uint8), 255]),
        Case([ints(rng, (2,), 0, 9, np.uint8), 300], raises=True), Case([ints(rng, (2,)), NAN], raises=True),
        Case([rand(rng, (2,), dtype=np.float32), 1e300], raises=True),
    ]
    fill_tensor = [
        Case([rand(rng, (3, 4)), np.array(1.5)]), Case([ints(rng, (3,)), np.array(2.7)]),
        Case([rand(rng, (3,)), np.array(True)]), Case([rand(rng, (3,)), np.array([1.0])], raises=True),
    ]
    # copy_(self, src, non_blocking); copy_.Tensor(self, other) is the same copy.
    copy_tensor = [
        Case([rand(rng, (3, 4)), rand(rng, (3, 4))]), Case([rand(rng, (3, 4)), rand(rng, (4,))]),
        Case([ints(rng, (3,)), np.array([2.7, -2.7, 0.5])]), Case([rand(rng, (3,), dtype=np.float32), ints(rng, (3,))]),
        Case([bools(rng, (3,)), rand(rng, (3,))]), Case([rand(rng, (2,)), rand(rng, (3, 2))], raises=True),
    ]
    copy_cases = [Case([*case.args, False], raises=case.raises) for case in copy_tensor]
    copy_cases.append(Case([rand(rng, (3, 4)), rand(rng, (3, 4)), True]))
    zero = [Case([rand(rng, (3, 4))]), Case([ints(rng, (3,))]), Case([bools(rng, (2,))]), Case([rand(rng, ())])]
    dropout = [Case([rand(rng, (3, 4)), 0.5, False]), Case([rand(rng, (3,)), 0.0, True]),
               Case([rand(rng, (3,)), 1.0, True]), Case([rand(rng, (3,)), 1.5, False], raises=True)]
    return {"aten::fill_.Scalar": fill, "aten::fill_.Tensor": fill_tensor, "aten::copy_": copy_cases,
            "aten::copy_.Tensor": copy_tensor,
            "aten::zero_": zero, "aten::dropout_": dropout,
            # Deterministic forms only: training draws gradview's mask (tests/kernels/test_dropout.py).
            **{f"aten::{name}_": [Case([rand(rng, (2, 3, 4)), 0.5, False]), Case([rand(rng, (2, 3)), 1.0, True])]
               for name in ("feature_dropout", "alpha_dropout", "feature_alpha_dropout")}}


def _index_put() -> dict[str, list[Case]]:
    """``x[idx] = v`` and ``x[idx] += v``: index_put's result written back into self."""
    rng = seeded_rng("index_put_")
    rows = np.array([2, 0, 2])
    twin = [  # indices without None resolve to the hacked_twin overload, as in TorchScript
        Case([rand(rng, (4, 3)), [rows], rand(rng, (3, 3)), True]),  # repeated rows add up
        Case([rand(rng, (4, 3)), [rows[:2]], rand(rng, (3,)), False]),  # values broadcast
        Case([ints(rng, (4, 3)), [np.array([1])], rand(rng, (1, 3)), False], raises=True),  # dtypes must match
    ]
    with_none = [
        Case([rand(rng, (3, 4)), [None, rows], rand(rng, (3, 3)), True]),
        Case([rand(rng, (3, 4)), [None, np.array([3])], rand(rng, (3, 1)), False]),
    ]
    return {"aten::index_put_": with_none, "aten::index_put_.hacked_twin": twin}


def build_cases() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    parts = (_arith("add_"), _arith("sub_"), _arith("mul_"), _div(), _unary(), _masked_fill(), _fill_copy(), _index_put())
    for part in parts:
        cases.update(part)
    cases.pop("aten::mul_.Scalar")
    rng = seeded_rng("mul_.Scalar")
    cases["aten::mul_.Scalar"] = [
        Case([rand(rng, (3, 4)), 2.5]), Case([ints(rng, (4,)), 3]), Case([ints(rng, (4,)), 2.5], raises=True),
        Case([bools(rng, (3,)), 1], raises=True),  # bool * int is int64: refused for a bool self
    ]
    return cases


CASES = build_cases()


def check_in_place(qualified: str, args: list[Any], rtol: float, atol: float) -> None:
    """gradview's result and the array it wrote into, against torch's in-place op on a copy."""
    graph, inputs = op_graph(qualified, args)
    expected = torch_call(qualified, copy.deepcopy(args))[0]
    (ours,) = run_graph(graph, inputs, backend=oracle.BACKEND)
    _compare(ours, expected, rtol, atol, f"{qualified} result")
    if oracle.BACKEND == "numpy":
        _compare(inputs[0], expected, rtol, atol, f"{qualified}: self after the call")


@pytest.mark.parametrize("qualified", sorted(CASES))
def test_against_torch(qualified: str) -> None:
    for index, case in enumerate(CASES[qualified]):
        try:
            if case.raises:
                check_raises(qualified, copy.deepcopy(case.args))
            else:
                check_in_place(qualified, case.args, case.rtol, case.atol)
        except (AssertionError, pytest.fail.Exception) as exc:
            raise AssertionError(f"case {index} of {qualified}: {_describe(case.args)}\n{exc}") from None


def _describe(args: list[Any]) -> str:
    return ", ".join(f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in args)


@pytest.mark.parametrize("qualified", sorted(CASES))
def test_returns_self(qualified: str) -> None:
    """Called directly, the kernel returns the array object it wrote into."""
    xp = get_backend(oracle.BACKEND).xp
    case = next(c for c in CASES[qualified] if not c.raises)
    args = [xp.asarray(a) if isinstance(a, np.ndarray) else a for a in copy.deepcopy(case.args)]
    assert KERNELS[qualified](xp, *args) is args[0]


def test_dropout_in_training_writes_the_mask_into_self() -> None:
    xp = get_backend(oracle.BACKEND).xp
    x = xp.asarray(np.full((50, 40), 2.0))
    result = KERNELS["aten::dropout_"](xp, x, 0.25, True)
    values = set(np.unique(get_backend(oracle.BACKEND).to_host(result)).tolist())
    assert result is x and values == {0.0, 2.0 / 0.75}


def test_read_only_self_is_refused() -> None:
    x = np.ones(3)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        KERNELS["aten::relu_"](np, x)


# -- coverage -----------------------------------------------------------------------------------
def test_every_kernel_of_the_module_is_checked() -> None:
    registered = {key for key, fn in KERNELS.items() if fn.__module__ == module.__name__}
    assert registered - set(CASES) == set()
    assert set(CASES) - registered == set()

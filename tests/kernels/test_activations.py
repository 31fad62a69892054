"""The activation kernels of kernels/activations.py (forward and backward) against PyTorch.

Every overload runs as a one-node graph through ``run_graph`` (``check_op``)
and is compared with ``torch.ops.aten.<op>``: values to 1e-6 relative in
float64 (1e-5 in float32, 2e-3 in float16), dtypes and shapes exactly. The
inputs are seeded random tensors plus each function's kinks and edges,
which decide the gradient conventions (hardtanh's bounds, hardswish at +-3,
softplus at its threshold, elu at 0, logit at 0, 1 and eps), infinities and
NaN, Scalar arguments of both kinds (int and float, non-default values), and
integer tensors where PyTorch takes them. Inputs PyTorch refuses (integer
tensors for most, bools, elu_backward of an in-place result with a negative
alpha) must make gradview raise a GraphRuntimeError naming the node.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gradview.kernels import activations as module
from gradview.ops import KERNELS
from gradview.runtime import run_graph

from .oracle import BACKEND, Case, check_op, op_graph, rand, seeded_rng
from .test_pointwise_math_more import SINGLE, UNARY_SHAPES, bools, check_raises, ints

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INF, NAN = np.inf, np.nan
HALF = {"rtol": 2e-3, "atol": 2e-3}
# Kinks of every activation here, with infinities and NaN.
EDGES = np.array([
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 3.0, -3.0, 2.999, -2.999, 6.0, 6.001, 20.0, 10.0, 10.5,
    -20.0, 40.0, -40.0, 800.0, -800.0, INF, -INF, NAN,
])


def _floating_only(rng: np.random.Generator) -> list[Case]:
    return [Case([ints(rng, (3,))], raises=True), Case([bools(rng, (3,))], raises=True)]


def _unary(op: str, extra_args: list[list[Any]], scale: float = 3.0) -> list[Case]:
    """Random shapes, the edges, float32/float16, for each tuple of extra arguments."""
    rng = seeded_rng(op)
    table = []
    for extra in extra_args:
        table += [Case([rand(rng, shape, scale), *extra]) for shape in UNARY_SHAPES]
        table += [
            Case([EDGES, *extra]), Case([rand(rng, (3, 4), scale, np.float32), *extra], **SINGLE),
            Case([rand(rng, (5,), scale, np.float16), *extra], **HALF),
        ]
    return table


def _forward() -> dict[str, list[Case]]:
    cases: dict[str, list[Case]] = {}
    rng = seeded_rng("forward")
    for op in ("hardswish", "hardsigmoid", "silu"):
        cases[f"aten::{op}"] = _unary(op, [[]]) + _floating_only(rng)
    cases["aten::relu6"] = _unary("relu6", [[]], scale=5.0) + [
        Case([ints(rng, (3, 4), -9, 9)]), Case([ints(rng, (4,), 0, 200, np.uint8)]),
        Case([bools(rng, (3,))], raises=True),
    ]
    cases["aten::hardtanh"] = _unary("hardtanh", [[-1, 1], [-0.5, 2.5], [0, 6], [2.0, -1.0], [-INF, 0.25]]) + [
        Case([ints(rng, (3, 4), -9, 9), -1.5, 2.5]),  # the bounds truncate to -1 and 2
        Case([ints(rng, (4,), dtype=np.int32), -3, 3]),
        Case([bools(rng, (3,)), 0, 1], raises=True),
    ]
    cases["aten::hardshrink"] = _unary("hardshrink", [[0.5], [2], [0.0], [-1.0]]) + _floating_only(rng)
    cases["aten::softplus"] = _unary("softplus", [[1, 20], [2.0, 3], [0.5, 1.0], [-1, 20], [1, -5]]) + [
        Case([np.array([9.99, 10.0, 10.01, 5.0, 5.01]), 2, 20]),  # x * beta around the threshold
    ] + _floating_only(rng)
    cases["aten::elu"] = _unary("elu", [[1, 1, 1], [1.5, 2.0, 0.5], [-0.5, 1, 1], [1, 1.0507, 1], [0.2, 1, 3]]) + (
        _floating_only(rng)
    )
    cases["aten::threshold"] = _unary("threshold", [[0, 0], [0.5, -2.0], [-1.5, 7], [3.0, NAN]]) + [
        Case([ints(rng, (3, 4), -9, 9), 1, 5]),
        Case([ints(rng, (3, 4), -9, 9), -1.5, 5.5]),  # int tensor: -1.5 truncates to -1, 5.5 to 5
        Case([np.array([-2, -1, 0, 1], dtype=np.int64), -1.5, 9]),
        Case([bools(rng, (3,)), 0, 1], raises=True),
    ]
    return cases


def _grad_and_input(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float64) -> list[np.ndarray]:
    return [rand(rng, shape, 1.0, dtype), rand(rng, shape, 4.0, dtype)]


def _backward_cases(op: str, extras: list[list[Any]], edges: np.ndarray = EDGES) -> list[Case]:
    rng = seeded_rng(op)
    table = []
    for extra in extras:
        for shape in UNARY_SHAPES:
            table.append(Case([*_grad_and_input(rng, shape), *extra]))
        table += [
            Case([np.ones_like(edges), edges, *extra]),
            Case([rand(rng, (3, 1)), rand(rng, (2, 1, 4)), *extra]),  # broadcasting grad and input
            Case([*_grad_and_input(rng, (3, 4), np.float32), *extra], **SINGLE),
            Case([rand(rng, (3, 4), 1.0, np.float32), rand(rng, (3, 4), 4.0), *extra]),  # promotes to float64
            Case([*_grad_and_input(rng, (5,), np.float16), *extra], **HALF),
        ]
    table += [Case([ints(rng, (3,)), ints(rng, (3,)), *extras[0]], raises=True)]
    return table


def _elu_backward() -> list[Case]:
    rng = seeded_rng("elu_backward")
    table = []
    for alpha, scale, input_scale in ((1, 1, 1), (1.5, 2.0, 0.5), (-0.5, 1, 1), (0.2, 1.0507, 3)):
        for is_result in (False, True):
            if is_result and alpha < 0:
                continue
            for shape in UNARY_SHAPES:
                g, x = _grad_and_input(rng, shape)
                y = np.where(x > 0, x * scale, np.expm1(x * input_scale) * alpha * scale) if is_result else x
                table.append(Case([g, alpha, scale, input_scale, is_result, y]))
            table.append(Case([np.ones_like(EDGES), alpha, scale, input_scale, is_result, EDGES]))
    table += [
        Case([*_grad_and_input(rng, (3, 4), np.float32)[:1], 1, 1, 1, False, rand(rng, (3, 4), 1.0, np.float32)],
             **SINGLE),
        Case([rand(rng, (3,)), -1.0, 1, 1, True, rand(rng, (3,))], raises=True),  # in-place with alpha < 0
        Case([ints(rng, (3,)), 1, 1, 1, False, ints(rng, (3,))], raises=True),
    ]
    return table


def _logit_backward() -> list[Case]:
    rng = seeded_rng("logit_backward")
    unit = np.array([0.0, 1.0, 0.5, 0.1, 0.9, 1e-9, 0.05, 0.95, -0.5, 1.5, INF, -INF, NAN])
    table = []
    for eps in (None, 0.1, 0.0, 1e-6, -0.1):
        table += [Case([rand(rng, unit.shape, 1.0), unit, eps])]
        table += [Case([rand(rng, (3, 4)), np.asarray(rng.uniform(0, 1, (3, 4))), eps])]
    table += [
        Case([rand(rng, (3,), 1.0, np.float32), np.asarray(rng.uniform(0, 1, (3,)), dtype=np.float32), 0.05],
             **SINGLE),
        Case([rand(rng, (2, 1)), np.asarray(rng.uniform(0, 1, (3,))), None]),
        Case([ints(rng, (3,)), ints(rng, (3,)), None], raises=True),
    ]
    return table


def build_cases() -> dict[str, list[Case]]:
    cases = _forward()
    cases["aten::hardtanh_backward"] = _backward_cases("hardtanh_backward", [[-1, 1], [0, 6], [-0.5, 2.5]])
    cases["aten::hardshrink_backward"] = _backward_cases("hardshrink_backward", [[0.5], [2], [0.0]])
    cases["aten::hardswish_backward"] = _backward_cases("hardswish_backward", [[]])
    cases["aten::hardsigmoid_backward"] = _backward_cases("hardsigmoid_backward", [[]])
    cases["aten::silu_backward"] = _backward_cases("silu_backward", [[]])
    cases["aten::softplus_backward"] = _backward_cases("softplus_backward", [[1, 20], [2.0, 3], [0.5, 1.0]])
    cases["aten::elu_backward"] = _elu_backward()
    cases["aten::logit_backward"] = _logit_backward()
    return cases


def _issue22_cases() -> dict[str, list[Case]]:
    """celu, selu, mish, log_sigmoid, softshrink, glu and prelu, forward and backward."""
    rng = seeded_rng("issue22 activations")
    cases: dict[str, list[Case]] = {}
    cases["aten::celu"] = _unary("celu", [[1.0], [0.5], [2]]) + _floating_only(rng)
    for op in ("selu", "mish", "log_sigmoid", "log_sigmoid_forward"):
        cases[f"aten::{op}"] = _unary(op, [[]]) + _floating_only(rng)
    cases["aten::softshrink"] = _unary("softshrink", [[0.5], [2], [0.0]]) + _floating_only(rng)
    cases["aten::mish_backward"] = _backward_cases("mish_backward", [[]])
    cases["aten::softshrink_backward"] = _backward_cases("softshrink_backward", [[0.5], [2], [0.0]])
    x = rand(rng, (3, 4))
    cases["aten::log_sigmoid_backward"] = [
        Case([rand(rng, (3, 4)), x, np.exp(-np.abs(x))]),
        Case([np.ones_like(EDGES), EDGES, np.exp(-np.abs(EDGES))]),
    ]
    cases["aten::glu"] = [
        Case([rand(rng, (3, 4)), -1]), Case([rand(rng, (4, 3)), 0]), Case([rand(rng, (2, 6, 2), 1.0, np.float32), 1],
                                                                         **SINGLE),
        Case([rand(rng, (3, 3)), 1], raises=True),
    ]
    cases["aten::glu_backward"] = [
        Case([rand(rng, (3, 2)), rand(rng, (3, 4)), -1]), Case([rand(rng, (2, 3)), rand(rng, (4, 3)), 0]),
    ]
    cases["aten::prelu"] = [
        Case([rand(rng, (2, 3, 4)), rand(rng, (3,), 0.5)]), Case([rand(rng, (2, 3)), rand(rng, (1,), 0.5)]),
        Case([rand(rng, (5,)), rand(rng, (1,), 0.5)]), Case([rand(rng, ()), rand(rng, (), 0.5)]),
        Case([rand(rng, (2, 3, 4)), rand(rng, (4,), 0.5)], raises=True),
    ]
    return cases


def _relu_family_cases() -> dict[str, list[Case]]:
    """relu (integer tensors too, not bools), leaky_relu and gelu (both approximations)."""
    rng = seeded_rng("relu family")
    f32 = rand(rng, (3, 4), dtype=np.float32)
    line = np.linspace(-12, 12, 241)
    cases: dict[str, list[Case]] = {}
    cases["aten::relu"] = [Case([rand(rng, s)]) for s in UNARY_SHAPES] + [
        Case([EDGES]), Case([EDGES.reshape(1, -1)]), Case([ints(rng, (3, 4))]),
        Case([bools(rng, (3, 4))], raises=True),
    ]
    cases["aten::leaky_relu"] = [Case([rand(rng, s), slope]) for s in UNARY_SHAPES for slope in (0.01, 0.2, 2, -0.5)]
    cases["aten::leaky_relu"] += [
        Case([EDGES, 0.1]), Case([f32, 0.2], **SINGLE), Case([ints(rng, (3,)), 0.1], raises=True),
    ]
    cases["aten::gelu"] = [Case([rand(rng, s), mode]) for s in UNARY_SHAPES for mode in ("none", "tanh")] + [
        Case([EDGES, "none"]), Case([EDGES, "tanh"]), Case([line, "none"]), Case([line, "tanh"]),
        Case([f32, "tanh"], rtol=1e-5, atol=1e-6), Case([f32, "none"], rtol=1e-5, atol=1e-6),
        Case([rand(rng, (3,)), "erf"], raises=True), Case([ints(rng, (3,)), "none"], raises=True),
    ]
    return cases


def _relu_family_backward_cases() -> dict[str, list[Case]]:
    """tanh, sigmoid, threshold (relu's), leaky_relu and gelu backward: broadcast and promoted inputs."""
    rng = seeded_rng("relu family backward")
    cases = {
        "aten::tanh_backward": _backward_cases("tanh_backward", [[]]),
        "aten::sigmoid_backward": _backward_cases("sigmoid_backward", [[]]),
        "aten::leaky_relu_backward": _backward_cases(
            "leaky_relu_backward", [[0.01, False], [0.2, False], [-0.5, False], [0.1, True]]
        ) + [Case([rand(rng, (3,)), rand(rng, (3,)), -0.5, True], raises=True)],  # in place, negative slope
        "aten::gelu_backward": _backward_cases("gelu_backward", [["none"], ["tanh"]])
        + [Case([rand(rng, (3,)), rand(rng, (3,)), "bad"], raises=True)],
    }
    threshold = _backward_cases("threshold_backward", [[0], [0.5], [-1.25]])
    cases["aten::threshold_backward"] = threshold[:-1] + [  # integer tensors are PyTorch's too
        Case([ints(rng, (2, 3, 4)), rand(rng, (2, 3, 4)), 0.5]), Case([ints(rng, (3, 4)), ints(rng, (3, 4)), 0]),
    ]
    return cases


def _rrelu_cases() -> dict[str, list[Case]]:
    """rrelu in evaluation mode (training draws: tests/ops/test_activations_rrelu.py), float and int bounds."""
    rng = seeded_rng("rrelu")
    bounds = [[0.125, 1.0 / 3.0, False, None], [0.1, 0.7, False, None], [0, 1, False, None], [1, 2, False, None]]
    cases = _unary("rrelu", bounds)
    cases += [Case([ints(rng, (3,)), 0.1, 0.3, False, None], raises=True),
              Case([rand(rng, (3,)), 0.5, 0.25, False, None], raises=True)]  # lower > upper
    return {"aten::rrelu": cases}


CASES = {
    **build_cases(), **_issue22_cases(), **_relu_family_cases(), **_relu_family_backward_cases(), **_rrelu_cases(),
}


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


# -- the edge conventions, spelled out ------------------------------------------------------------
def test_hardtanh_backward_is_zero_at_the_bounds() -> None:
    x = np.array([-1.0, 1.0, -0.999, 0.999])
    (ours,) = check_op("aten::hardtanh_backward", [np.ones(4), x, -1, 1])
    assert ours.tolist() == [0.0, 0.0, 1.0, 1.0]


def test_hardswish_backward_at_plus_and_minus_three() -> None:
    (ours,) = check_op("aten::hardswish_backward", [np.ones(4), np.array([-3.0, 3.0, -2.5, 2.5])])
    assert ours.tolist() == pytest.approx([0.0, 1.0, -1 / 3, 1 + 1 / 3], rel=1e-15)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("op", ["hardsigmoid", "hardswish", "hardsigmoid_backward", "hardswish_backward"])
def test_hard_activations_equal_torch_bit_for_bit(op: str, dtype: Any) -> None:
    # hardsigmoid_backward multiplies by float32's 1/6 even in float64; an exact 1/6 is off by
    # ~3e-8 relative (5e-4 in mobilenet_v3's gradients), which the 1e-6 of check_op lets through.
    torch = pytest.importorskip("torch")
    rng = seeded_rng(f"bitwise {op} {dtype.__name__}")
    edges = [-3.0, 3.0, -2.999, 2.999, 0.0, -1.5, 1.5, 1.0, -4.0, 4.0]
    x = np.concatenate([edges, rng.uniform(-4.0, 4.0, 200)]).astype(dtype)
    args = [x] if op in ("hardsigmoid", "hardswish") else [rng.standard_normal(x.shape).astype(dtype), x]
    (ours,) = check_op(f"aten::{op}", args)
    expected = getattr(torch.ops.aten, op)(*(torch.from_numpy(a) for a in args)).numpy()
    assert ours.dtype == expected.dtype
    np.testing.assert_array_equal(ours, expected)


def test_softplus_is_linear_above_its_threshold() -> None:
    x = np.array([10.0, 10.5])
    (ours,) = check_op("aten::softplus", [x, 2, 20])
    assert ours[1] == 10.5 and ours[0] == pytest.approx(np.log1p(np.exp(20.0)) / 2)


# -- coverage -----------------------------------------------------------------------------------
def test_every_kernel_of_the_module_is_checked() -> None:
    # (gradview's own prelu_backward has no torch.ops twin: test_prelu_backward_* checks it)
    registered = {
        key for key, fn in KERNELS.items() if fn.__module__ == module.__name__ and key.startswith("aten::")
    }
    assert registered - set(CASES) == set()
    assert set(CASES) - registered == set()


def check_op_outputs(qualified: str, args: list[Any]) -> list[Any]:
    graph, inputs = op_graph(qualified, args)
    return run_graph(graph, inputs, backend=BACKEND)


def test_prelu_backward_equals_torch_autograd() -> None:
    """gradview::prelu_backward: ATen's _prelu_kernel_backward, the weight's gradient summed to its shape."""
    torch = pytest.importorskip("torch")
    rng = seeded_rng("prelu_backward")
    for shape, weight_shape in (((2, 3, 4), (3,)), ((2, 3), (1,)), ((5,), (1,)), ((), ())):
        x, w, g = rand(rng, shape), rand(rng, weight_shape, 0.5), rand(rng, shape)
        ours = check_op_outputs("gradview::prelu_backward", [g, x, w])
        tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
        expected = torch.autograd.grad(torch.nn.functional.prelu(tx, tw), [tx, tw], torch.tensor(g))
        for got, want in zip(ours, expected, strict=True):
            np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, atol=1e-14)

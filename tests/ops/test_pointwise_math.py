"""The gradient formulas of gradview.ops.pointwise_math against torch.

Each graph is differentiated with gradview's formula library and checked with
check_formula: f's outputs and df's vector-Jacobian products against
``torch.autograd.grad`` (1e-7 relative, float64), the Gradient's lists
against ``torch._C._jit_differentiate`` where torch 2.13 differentiates the
op symbolically (``torch_lists``), and the vjps against central finite
differences. Binary and ternary ops run on broadcasting shape pairs and with
Scalar arguments both as constants and as graph inputs; inputs stay inside
each function's domain and away from the jumps of fmod/remainder.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradview.ops import NO_GRADIENT
from tests.autodiff.formula_case_tools import check_formula, tensor_type
from tests.autodiff.oracle import check_gradient
from tests.ops.test_pointwise_gradients import BROADCASTS, _const, binary, unary

T34 = tensor_type(3, 4)

# op -> (low, high) of the inputs, inside the function's domain.
UNARY = {
    "acos": (-0.9, 0.9), "asin": (-0.9, 0.9), "atan": (-3.0, 3.0), "cosh": (-2.0, 2.0), "sinh": (-2.0, 2.0),
    "tan": (-1.2, 1.2), "erfc": (-2.0, 2.5), "log10": (0.2, 3.0), "log2": (0.2, 3.0), "log1p": (-0.8, 3.0),
    "expm1": (-2.0, 2.0), "reciprocal": (0.3, 2.0),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op: str) -> None:
    low, high = UNARY[op]
    grad = check_formula(unary(f"aten::{op}(%x)"), low=low, high=high)
    assert grad.captured_count == 1  # the input, or the result (tan, expm1, reciprocal)


@pytest.mark.parametrize("op", ["ceil", "floor", "round", "trunc"])
def test_rounding_has_a_zero_gradient(op: str) -> None:
    grad = check_formula(unary(f"aten::{op}(%x)"), low=-3, high=3, away_from=[-2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5])
    assert grad.captured_count == 0


def test_round_decimals_has_a_zero_gradient() -> None:
    consts = _const("d", "int", "2")
    text = unary("aten::round(%x, %d)", consts)
    check_formula(text, torch_lists=False, finite_differences=False)  # 0 except at the steps


def test_frac_passes_the_gradient() -> None:
    check_formula(unary("aten::frac(%x)"), low=0.1, high=0.9)


@pytest.mark.parametrize("eps", [None, "0.1", "1e-06"])
def test_logit(eps: str | None) -> None:
    consts = _const("e", "NoneType" if eps is None else "float", eps)
    check_formula(unary("aten::logit(%x, %e)", consts), low=0.2, high=0.8, torch_lists=False)


@pytest.mark.parametrize("eps", [None, "0.25"])
def test_logit_at_its_edges(eps: str | None) -> None:
    """x = 0 and 1 give inf (no eps); outside [eps, 1 - eps] the clamp makes the gradient 0."""
    consts = _const("e", "NoneType" if eps is None else "float", eps)
    text = unary("aten::logit(%x, %e)", consts, shape=(6,))
    x = np.array([0.0, 1.0, 0.1, 0.25, 0.75, 0.5]) if eps else np.array([0.0, 1.0, 0.1, 0.3, 0.7, 0.5])
    check_gradient(text, [x], compare_torch_lists=False)


# -- binary --------------------------------------------------------------------------------------
@pytest.mark.parametrize("a,b,out", BROADCASTS)
@pytest.mark.parametrize("alpha", ["1", "2.5", "-2"])
def test_rsub_tensor(a: tuple, b: tuple, out: tuple, alpha: str) -> None:
    consts = _const("alpha", "float" if "." in alpha else "int", alpha)
    check_formula(binary("aten::rsub(%x, %w, %alpha)", a, b, out, consts), torch_lists=False)


@pytest.mark.parametrize("other,alpha", [("1", "1"), ("2.5", "-1.5"), ("3", "2")])
def test_rsub_scalar(other: str, alpha: str) -> None:
    consts = _const("o", "float" if "." in other else "int", other)
    consts += _const("alpha", "float" if "." in alpha else "int", alpha)
    check_formula(unary("aten::rsub(%x, %o, %alpha)", consts))


def test_rsub_scalar_with_runtime_alpha() -> None:
    text = f"graph(%x : {T34}, %a : float):\n  %o : int = prim::Constant[value=1]()\n" \
           f"  %y : {T34} = aten::rsub(%x, %o, %a)\n  return (%y)\n"
    check_formula(text, scalars={"a": -0.75})


@pytest.mark.parametrize("op", ["fmod", "remainder"])
@pytest.mark.parametrize("a,b,out", BROADCASTS)
def test_fmod_remainder_tensor(op: str, a: tuple, b: tuple, out: tuple) -> None:
    """d/dother = -div(self, other, trunc|floor): negative numerators make the two differ."""
    text = binary(f"aten::{op}(%x, %w)", a, b, out)
    for seed in range(100):  # the first draw keeping x / w away from the integers, where q jumps
        rng = np.random.default_rng(seed)
        x = rng.uniform(-5.0, 5.0, a)
        w = rng.uniform(0.7, 1.6, b) * np.where(rng.random(b) < 0.5, -1, 1)
        q = np.broadcast_to(x, out) / np.broadcast_to(w, out)
        if np.all(np.abs(q - np.round(q)) > 0.02) and np.any((q < -1) & (q % 1 > 0.02)):
            break
    check_formula(text, inputs=[x, w], torch_lists=False)


@pytest.mark.parametrize("op", ["fmod", "remainder"])
@pytest.mark.parametrize("other", ["1.5", "-2", "0.7"])
def test_fmod_remainder_scalar(op: str, other: str) -> None:
    consts = _const("o", "float" if "." in other else "int", other)
    check_formula(unary(f"aten::{op}(%x, %o)", consts), low=0.1, high=1.4, away_from=[0.7])


def test_remainder_of_a_scalar_by_a_tensor_has_no_gradient() -> None:
    """torch.autograd: "derivative for aten::remainder is not implemented"."""
    assert "not implemented" in NO_GRADIENT["aten::remainder.Scalar_Tensor"]


@pytest.mark.parametrize("a,b,out", BROADCASTS)
def test_atan2(a: tuple, b: tuple, out: tuple) -> None:
    check_formula(binary("aten::atan2(%x, %w)", a, b, out), low=-2, high=2, away_from=[0.0], torch_lists=False)


# -- addcmul, lerp, masked_fill ----------------------------------------------------------------------
SHAPES3 = [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((4,), (3, 4), (1, 4)), ((1, 4), (3, 1), (4,))]


def _ternary(expr: str, shapes: tuple, consts: str = "") -> str:
    a, b, c = shapes
    return (
        f"graph(%x : {tensor_type(*a)}, %u : {tensor_type(*b)}, %v : {tensor_type(*c)}):\n{consts}"
        f"  %y : {T34} = {expr}\n  return (%y)\n"
    )


@pytest.mark.parametrize("shapes", SHAPES3)
@pytest.mark.parametrize("value", ["1", "0.5", "-2"])
def test_addcmul(shapes: tuple, value: str) -> None:
    consts = _const("c", "float" if "." in value else "int", value)
    check_formula(_ternary("aten::addcmul(%x, %u, %v, %c)", shapes, consts))


def test_addcmul_runtime_value() -> None:
    text = (
        f"graph(%x : {T34}, %u : {tensor_type(4)}, %v : {tensor_type(3, 1)}, %c : float):\n"
        f"  %y : {T34} = aten::addcmul(%x, %u, %v, %c)\n  return (%y)\n"
    )
    check_formula(text, scalars={"c": 1.75})


@pytest.mark.parametrize("a,b,out", BROADCASTS)
@pytest.mark.parametrize("weight", ["0.3", "0.7", "2", "-1.5"])
def test_lerp_scalar(a: tuple, b: tuple, out: tuple, weight: str) -> None:
    consts = _const("t", "float" if "." in weight else "int", weight)
    check_formula(binary("aten::lerp(%x, %w, %t)", a, b, out, consts))


def test_lerp_scalar_runtime_weight() -> None:
    text = f"graph(%x : {T34}, %w : {tensor_type(4)}, %t : float):\n" \
           f"  %y : {T34} = aten::lerp(%x, %w, %t)\n  return (%y)\n"
    check_formula(text, scalars={"t": 0.6}, torch_lists=False)


@pytest.mark.parametrize("shapes", SHAPES3)
def test_lerp_tensor(shapes: tuple) -> None:
    """The weight gets ``g * (end - self)``; weights on both sides of 0.5 (lerp's two formulas)."""
    check_formula(_ternary("aten::lerp(%x, %u, %v)", shapes), low=-0.5, high=1.5)


@pytest.mark.parametrize("self_shape,mask_shape", [((3, 4), (3, 4)), ((4,), (3, 4)), ((3, 4), (3, 1))])
def test_masked_fill_scalar(self_shape: tuple, mask_shape: tuple) -> None:
    text = (
        f"graph(%x : {tensor_type(*self_shape)}, %s : {tensor_type(*mask_shape, grad=False)}):\n"
        "  %one : float = prim::Constant[value=1.]()\n  %v : float = prim::Constant[value=-2.5]()\n"
        f"  %m : {tensor_type(*mask_shape, dtype='Bool', grad=False)} = aten::gt(%s, %one)\n"
        f"  %y : {T34} = aten::masked_fill(%x, %m, %v)\n  return (%y)\n"
    )
    check_formula(text, torch_lists=False, away_from=[1.0])


def test_masked_fill_tensor_value_collects_the_masked_gradient() -> None:
    text = (
        f"graph(%x : {T34}, %s : {tensor_type(4, grad=False)}, %v : {tensor_type()}):\n"
        "  %one : float = prim::Constant[value=1.]()\n"
        f"  %m : {tensor_type(4, dtype='Bool', grad=False)} = aten::gt(%s, %one)\n"
        f"  %y : {T34} = aten::masked_fill(%x, %m, %v)\n  return (%y)\n"
    )
    grad = check_formula(text, torch_lists=False, away_from=[1.0])
    assert grad.df_output_vjps == [0, 2]


# -- the existing pointwise formulas with Scalar arguments known only at run time ---------------------
RUNTIME_SCALARS = [
    ("aten::add(%x, %w, %s)", f", %w : {tensor_type(4)}, %s : float", {"s": -1.5}),
    ("aten::sub(%x, %w, %s)", f", %w : {tensor_type(4)}, %s : float", {"s": 2.5}),
    ("aten::add(%x, %s, %t)", ", %s : float, %t : float", {"s": 3.0, "t": 0.5}),
    ("aten::sub(%x, %s, %t)", ", %s : int, %t : int", {"s": 3, "t": 2}),
    ("aten::mul(%x, %s)", ", %s : float", {"s": -0.75}),
    ("aten::div(%x, %s)", ", %s : float", {"s": 1.25}),
    ("aten::clamp(%x, %s, %t)", ", %s : float, %t : float", {"s": 0.8, "t": 1.2}),
    ("aten::clamp_min(%x, %s)", ", %s : float", {"s": 0.9}),
    ("aten::clamp_max(%x, %s)", ", %s : float", {"s": 1.1}),
    ("aten::leaky_relu(%x, %s)", ", %s : float", {"s": 0.3}),
    ("aten::gelu(%x, %s)", ", %s : str", {"s": "tanh"}),
    ("aten::threshold(%x, %s, %t)", ", %s : float, %t : float", {"s": 1.0, "t": -4.0}),
    ("aten::fmod(%x, %s)", ", %s : float", {"s": 0.7}),
    ("aten::remainder(%x, %s)", ", %s : float", {"s": 0.7}),
    ("aten::div(%x, %w, %s)", f", %w : {tensor_type(4)}, %s : str?", {"s": None}),
    ("aten::div(%x, %w, %s)", f", %w : {tensor_type(4)}, %s : str?", {"s": "floor"}),
]


@pytest.mark.parametrize("call,params,scalars", RUNTIME_SCALARS, ids=[c[0] + str(c[2]) for c in RUNTIME_SCALARS])
def test_scalar_arguments_as_graph_inputs(call: str, params: str, scalars: dict) -> None:
    text = f"graph(%x : {T34}{params}):\n  %y : {T34} = {call}\n  %z : {T34} = aten::mul(%y, %x)\n  return (%z)\n"
    rounded = scalars.get("s") == "floor"
    check_formula(text, scalars=scalars, torch_lists=False, away_from=[0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4],
                  finite_differences=not rounded)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "atan2", "fmod", "remainder", "rsub", "maximum", "pow"])
def test_zero_dim_operands_broadcast(op: str) -> None:
    """A 0-d tensor operand broadcasts; its gradient is summed back to a 0-d tensor."""
    extra = ", %one" if op in ("add", "sub", "rsub") else ""
    consts = _const("one", "int", "1") if extra else ""
    for a, b in (((3, 4), ()), ((), (3, 4))):
        check_formula(binary(f"aten::{op}(%x, %w{extra})", a, b, (3, 4), consts), torch_lists=False, low=0.6, high=1.4)


# -- coverage ------------------------------------------------------------------------------------------
FAMILY = [
    "acos", "asin", "atan", "cosh", "sinh", "tan", "erfc", "log10", "log2", "logit", "ceil", "floor", "round",
    "trunc", "frac", "rsub", "fmod", "atan2", "relu6", "hardtanh", "hardshrink", "hardswish", "hardsigmoid",
    "silu", "softplus", "elu", "threshold", "expm1", "log1p", "reciprocal", "addcmul", "lerp", "remainder",
    "masked_fill", "add_", "sub_", "mul_", "div_", "relu_", "sigmoid_", "tanh_", "hardswish_", "silu_", "elu_",
    "leaky_relu_", "hardtanh_", "masked_fill_", "dropout_", "clamp_", "exp_", "neg_", "zero_", "fill_", "copy_",
]


@pytest.mark.parametrize("op", FAMILY)
def test_every_tensor_overload_has_a_formula_or_a_reason(op: str) -> None:
    from gradview.ir import schemas_for
    from gradview.ops import FORMULAS, KERNELS

    # The overloads gradview runs (PyTorch's out= and named-dim ones have no kernel).
    overloads = [
        s.qualified_name for s in schemas_for(f"aten::{op}")
        if any(a.type.is_tensor() for a in s.arguments) and s.qualified_name in KERNELS
    ]
    assert overloads, op
    missing = [name for name in overloads if name not in FORMULAS and name not in NO_GRADIENT]
    assert not missing, f"no gradient formula and no no-gradient reason for {missing}"


def test_float_power_exponent_gradient_is_zero_at_a_zero_base() -> None:
    """pow_backward_exponent: 0 (not 0 * log 0 = NaN) where self == 0 and exponent >= 0."""
    text = binary("aten::float_power(%x, %w)", (4,), (4,), (4,))
    check_gradient(text, [np.array([0.0, 0.0, 2.0, 0.0]), np.array([2.0, 0.0, 0.5, -1.0])], compare_torch_lists=False)

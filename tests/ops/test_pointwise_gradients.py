"""Acceptance 2 for the pointwise formulas (pow, clamp, where, max/min,
gelu, leaky_relu, sign, erf, type_as, detach/zeros_like/ones_like, dropout,
_grad_sum_to_size): each graph is checked against torch (check_gradient:
torch's Gradient lists where torch 2.13 differentiates the op, and
torch.autograd's numbers) and against finite differences in float64.
Shapes broadcast where the op does; inputs stay away from kinks."""

from __future__ import annotations

import numpy as np
import pytest

from gradview.autodiff import differentiate
from gradview.ir import parse_ir
from tests.autodiff.finite_differences import check_finite_differences
from tests.autodiff.formula_case_tools import check_formula, tensor_type
from tests.autodiff.oracle import check_gradient

T34 = tensor_type(3, 4)
T4 = tensor_type(4)


def unary(expr: str, consts: str = "", shape: tuple[int, ...] = (3, 4)) -> str:
    t = tensor_type(*shape)
    return f"graph(%x : {t}):\n{consts}  %y : {t} = {expr}\n  return (%y)\n"


def binary(expr: str, a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...], consts: str = "") -> str:
    return (
        f"graph(%x : {tensor_type(*a)}, %w : {tensor_type(*b)}):\n{consts}"
        f"  %y : {tensor_type(*out)} = {expr}\n  return (%y)\n"
    )


BROADCASTS = [((3, 4), (4,), (3, 4)), ((4,), (3, 4), (3, 4)), ((2, 1, 3), (4, 1), (2, 4, 3)), ((3, 1), (1, 4), (3, 4))]


# -- pow ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("exponent", ["2.5", "-1.5", "0.", "1", "2", "3"])
def test_pow_tensor_scalar(exponent: str) -> None:
    kind = "float" if "." in exponent else "int"
    consts = f"  %e : {kind} = prim::Constant[value={exponent}]()\n"
    check_formula(unary("aten::pow(%x, %e)", consts))


@pytest.mark.parametrize("exponent", [0.0, 2.5])
def test_pow_tensor_scalar_runtime_exponent(exponent: float) -> None:
    text = f"graph(%x : {T34}, %e : float):\n  %y : {T34} = aten::pow(%x, %e)\n  return (%y)\n"
    check_formula(text, scalars={"e": exponent})


@pytest.mark.parametrize("a,b,out", BROADCASTS)
def test_pow_tensor_tensor_broadcasting(a: tuple, b: tuple, out: tuple) -> None:
    grad = check_formula(binary("aten::pow(%x, %w)", a, b, out))
    assert grad.captured_count == 2  # x and the exponent; sizes fold to constants


def test_pow_tensor_tensor_zero_exponent() -> None:
    text = binary("aten::pow(%x, %w)", (3, 4), (4,), (3, 4))
    x = np.random.default_rng(0).uniform(0.5, 1.5, (3, 4))
    check_formula(text, inputs=[x, np.array([0.0, 1.5, 0.0, 2.0])])


@pytest.mark.parametrize("base", ["2.5", "0.5"])
def test_pow_scalar_base(base: str) -> None:
    consts = f"  %b : float = prim::Constant[value={base}]()\n"
    check_formula(unary("aten::pow(%b, %x)", consts))


def test_pow_scalar_runtime_base() -> None:
    text = f"graph(%x : {T34}, %b : float):\n  %y : {T34} = aten::pow(%b, %x)\n  return (%y)\n"
    check_formula(text, scalars={"b": 1.7})


# -- clamp -------------------------------------------------------------------------------------
CLAMP_BOUNDS = {
    "both": ("float", "0.8", "float", "1.2"),
    "min_only": ("float", "0.8", "NoneType", None),
    "max_only": ("NoneType", None, "float", "1.2"),
    "int_bounds": ("int", "0", "int", "1"),
}


def _const(name: str, kind: str, value: str | None) -> str:
    text = f"[value={value}]" if value is not None else ""
    return f"  %{name} : {kind} = prim::Constant{text}()\n"


@pytest.mark.parametrize("bounds", CLAMP_BOUNDS)
def test_clamp_scalar(bounds: str) -> None:
    lo_kind, lo, hi_kind, hi = CLAMP_BOUNDS[bounds]
    consts = _const("lo", lo_kind, lo) + _const("hi", hi_kind, hi)
    check_formula(unary("aten::clamp(%x, %lo, %hi)", consts), away_from=[0.8, 1.2, 0, 1])


def test_clamp_boundary_passes_gradient() -> None:
    """x == min and x == max are inside: the gradient passes (torch.autograd's convention)."""
    consts = _const("lo", "float", "0.75") + _const("hi", "float", "1.25")
    text = unary("aten::clamp(%x, %lo, %hi)", consts, shape=(4,))
    grad = check_gradient(text, [np.array([0.75, 1.25, 0.5, 1.0])])
    assert grad.df_output_vjps == [0]


@pytest.mark.parametrize("kind", ["clamp_min", "clamp_max"])
def test_clamp_one_sided_scalar(kind: str) -> None:
    consts = _const("b", "float", "1.1")
    check_formula(unary(f"aten::{kind}(%x, %b)", consts), torch_lists=False, away_from=[1.1])


def _clamp_tensor_text(lo_shape: tuple | None, hi_shape: tuple | None) -> str:
    params = [f"%x : {T34}"]
    consts = ""
    for name, shape in (("lo", lo_shape), ("hi", hi_shape)):
        if shape is None:
            consts += _const(name, "NoneType", None)
        else:
            params.append(f"%{name} : {tensor_type(*shape)}")
    return f"graph({', '.join(params)}):\n{consts}  %y : {T34} = aten::clamp(%x, %lo, %hi)\n  return (%y)\n"


@pytest.mark.parametrize("lo_shape,hi_shape", [((4,), (3, 1)), ((3, 4), None), (None, (4,)), ((1, 4), (3, 4))])
def test_clamp_tensor_bounds_get_gradients(lo_shape: tuple | None, hi_shape: tuple | None) -> None:
    text = _clamp_tensor_text(lo_shape, hi_shape)
    rng = np.random.default_rng(3)
    inputs = [rng.uniform(0.2, 1.8, (3, 4))]
    inputs += [rng.uniform(0.5, 0.9, s) for s in (lo_shape,) if s is not None]
    inputs += [rng.uniform(1.1, 1.5, s) for s in (hi_shape,) if s is not None]
    grad = check_formula(text, inputs=inputs, torch_lists=False)
    assert len(grad.df_output_vjps) == len(inputs)


def test_clamp_tensor_min_above_max() -> None:
    """min > max: the output is max, so only max receives gradient."""
    text = _clamp_tensor_text((4,), (4,))
    rng = np.random.default_rng(4)
    inputs = [rng.uniform(0.2, 1.8, (3, 4)), rng.uniform(1.3, 1.5, (4,)), rng.uniform(0.5, 0.7, (4,))]
    check_formula(text, inputs=inputs, torch_lists=False)


@pytest.mark.parametrize("kind", ["clamp_min", "clamp_max"])
@pytest.mark.parametrize("a,b,out", BROADCASTS[:2])
def test_clamp_one_sided_tensor(kind: str, a: tuple, b: tuple, out: tuple) -> None:
    text = binary(f"aten::{kind}(%x, %w)", a, b, out)
    grad = check_formula(text, torch_lists=False)
    assert grad.df_output_vjps == [0, 1]


# -- where, max, min ---------------------------------------------------------------------------
def _where_text(self_shape: tuple, other_shape: tuple, expr: str = "aten::where(%c, %x, %w)") -> str:
    cond = tensor_type(3, 4, dtype="Bool", grad=False)
    return (
        f"graph(%s : {tensor_type(3, 4, grad=False)}, %x : {tensor_type(*self_shape)}, %w : {tensor_type(*other_shape)}):\n"
        f"  %one : float = prim::Constant[value=1.]()\n"
        f"  %half : float = prim::Constant[value=0.5]()\n"
        f"  %c : {cond} = aten::gt(%s, %one)\n"
        f"  %y : {T34} = {expr}\n  return (%y)\n"
    )


@pytest.mark.parametrize("self_shape,other_shape", [((3, 4), (3, 4)), ((4,), (3, 1)), ((1, 4), (3, 4))])
def test_where_self(self_shape: tuple, other_shape: tuple) -> None:
    grad = check_formula(_where_text(self_shape, other_shape))
    assert grad.captured_count == 1  # the condition


@pytest.mark.parametrize("expr,wanted", [("aten::where(%c, %x, %half)", [1]), ("aten::where(%c, %half, %w)", [2])])
def test_where_scalar_overloads(expr: str, wanted: list[int]) -> None:
    grad = check_formula(_where_text((4,), (3, 1), expr), torch_lists=False)
    assert grad.df_output_vjps == wanted


def test_where_of_two_scalars_sends_no_gradient_to_the_condition() -> None:
    text = (
        f"graph(%x : {T34}):\n  %one : float = prim::Constant[value=1.]()\n  %z : float = prim::Constant[value=0.]()\n"
        f"  %c : {tensor_type(3, 4, dtype='Bool', grad=False)} = aten::gt(%x, %one)\n"
        f"  %m : Tensor = aten::where(%c, %one, %z)\n"
        f"  %y : {T34} = aten::mul(%x, %m)\n  return (%y)\n"
    )
    check_formula(text, torch_lists=False, away_from=[1.0])


@pytest.mark.parametrize("kind", ["max", "min", "maximum", "minimum"])
@pytest.mark.parametrize("a,b,out", BROADCASTS)
def test_max_min_broadcasting(kind: str, a: tuple, b: tuple, out: tuple) -> None:
    check_formula(binary(f"aten::{kind}(%x, %w)", a, b, out), torch_lists=kind in ("max", "min"))


@pytest.mark.parametrize("kind", ["max", "min", "maximum", "minimum"])
def test_max_min_ties_split_the_gradient(kind: str) -> None:
    """On x == y torch.autograd gives each side half of the gradient."""
    text = binary(f"aten::{kind}(%x, %w)", (3, 4), (4,), (3, 4))
    rng = np.random.default_rng(5)
    x, w = rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, (4,))
    x[0] = w
    x[2, 1] = w[1]
    check_gradient(text, [x, w], compare_torch_lists=kind in ("max", "min"))


# -- activations and friends -------------------------------------------------------------------
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate: str) -> None:
    consts = f'  %a : str = prim::Constant[value="{approximate}"]()\n'
    check_formula(unary("aten::gelu(%x, %a)", consts), low=-3, high=3)


@pytest.mark.parametrize("slope", ["0.2", "-0.3", "0.01"])
def test_leaky_relu(slope: str) -> None:
    consts = f"  %s : float = prim::Constant[value={slope}]()\n"
    check_formula(unary("aten::leaky_relu(%x, %s)", consts), low=-2, high=2, away_from=[0.0])


def test_erf() -> None:
    check_formula(unary("aten::erf(%x)"), low=-2, high=2)


def test_sign_has_zero_gradient() -> None:
    text = f"graph(%x : {T34}):\n  %s : {T34} = aten::sign(%x)\n  %y : {T34} = aten::mul(%s, %x)\n  return (%y)\n"
    check_formula(text, low=-2, high=2, away_from=[0.0], torch_lists=False)


def test_type_as_converts_the_gradient_back() -> None:
    text = (
        f"graph(%x : {tensor_type(3, 4, dtype='Float')}, %w : {tensor_type(4, grad=False)}):\n"
        f"  %y : {T34} = aten::type_as(%x, %w)\n  return (%y)\n"
    )
    rng = np.random.default_rng(6)
    inputs = [rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32), rng.uniform(0.5, 1.5, (4,))]
    grad = check_gradient(text, inputs, rtol=1e-6)
    assert grad.df_output_vjps == [0]


def test_type_as_same_dtype() -> None:
    check_formula(binary("aten::type_as(%x, %w)", (3, 4), (4,), (3, 4)))


def test_detach_sends_no_gradient() -> None:
    text = f"graph(%x : {T34}):\n  %d : {T34} = aten::detach(%x)\n  %y : {T34} = aten::mul(%x, %d)\n  return (%y)\n"
    check_formula(text, torch_lists=False, finite_differences=False)  # torch.autograd agrees: d(x*detach(x)) = detach(x)


@pytest.mark.parametrize("kind", ["zeros_like", "ones_like"])
def test_like_factories_send_no_gradient(kind: str) -> None:
    text = (
        f"graph(%x : {T34}):\n  %n : NoneType = prim::Constant()\n  %one : int = prim::Constant[value=1]()\n"
        f"  %z : {T34} = aten::{kind}(%x, %n, %n, %n, %n, %n)\n"
        f"  %y : {T34} = aten::mul(%x, %z)\n  %u : {T34} = aten::sub(%y, %z, %one)\n  return (%u)\n"
    )
    check_formula(text, torch_lists=False)


@pytest.mark.parametrize("size", ["[1, 4]", "[4]", "[3, 1]", None])
def test_grad_sum_to_size_backward_expands(size: str | None) -> None:
    out = {"[1, 4]": (1, 4), "[4]": (4,), "[3, 1]": (3, 1), None: (3, 4)}[size]
    consts = _const("s", "int[]" if size else "NoneType", size)
    text = f"graph(%x : {T34}):\n{consts}  %y : {tensor_type(*out)} = aten::_grad_sum_to_size(%x, %s)\n  return (%y)\n"
    grad = check_formula(text)
    assert grad.captured_count == 0  # x's size is a constant


# -- dropout -----------------------------------------------------------------------------------
DROPOUT = (
    f"graph(%x : {T34}, %w : {T4}):\n"
    "  %p : float = prim::Constant[value=0.5]()\n  %t : bool = prim::Constant[value=1]()\n"
    f"  %d : {T34} = aten::dropout(%x, %p, %t)\n  %y : {T34} = aten::mul(%d, %w)\n  return (%y, %d)\n"
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dropout_backward_uses_the_forward_mask(seed: int) -> None:
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, (4,))]
    grad = check_finite_differences(DROPOUT, inputs, seed=seed, reseed=100 + seed)
    assert grad.df_output_vjps == [0, 1]
    kinds = [n.kind() for n in grad.f.nodes()]
    assert kinds.count("aten::dropout") == 1, "the original dropout must be gone: one draw per run"


def test_dropout_mask_and_output_agree() -> None:
    grad = differentiate(parse_ir(DROPOUT), mode="extended")
    x = np.random.default_rng(0).uniform(0.5, 1.5, (3, 4))
    from tests.autodiff.oracle import run_gradient

    np.random.seed(7)
    (y, d), (dx, dw) = run_gradient(grad, [x, np.ones(4)], [np.zeros((3, 4)), np.ones((3, 4))])
    kept = d != 0
    assert 0 < kept.sum() < 12
    np.testing.assert_allclose(dx, np.where(kept, 2.0, 0.0))  # the gradient of d: mask / (1 - p)
    np.testing.assert_allclose(d[kept], 2 * x[kept])


@pytest.mark.parametrize("mode", ["None", '"trunc"', '"floor"'])
def test_div_with_rounding_mode(mode: str) -> None:
    """Plain division when the mode is None; no gradient through rounded division."""
    from tests.autodiff.finite_differences import check_finite_differences
    from tests.autodiff.oracle import check_gradient, random_inputs

    mode_line = "prim::Constant()" if mode == "None" else f"prim::Constant[value={mode}]()"
    mode_type = "NoneType" if mode == "None" else "str"
    text = f"""graph(%x : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu),
      %y : Double(4, strides=[1], requires_grad=1, device=cpu)):
  %mode : {mode_type} = {mode_line}
  %q : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::div(%x, %y, %mode)
  %r : Double(3, 4, strides=[4, 1], requires_grad=1, device=cpu) = aten::mul(%q, %x)
  return (%r)
"""
    inputs = random_inputs(text, 3)
    check_gradient(text, inputs, compare_torch_lists=False)
    if mode == "None":
        check_finite_differences(text, inputs)

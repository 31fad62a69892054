"""Special functions (issue 22): the gamma family (lgamma, digamma, polygamma, mvlgamma,
the incomplete gammas igamma/igammac), the error-function family (erfinv, erfcx, ndtr,
ndtri, log_ndtr), the modified Bessel functions I0, I1 and their scaled forms, entr,
sinc, xlogy/xlog1py, nextafter, frexp, ldexp, sgn and Hurwitz zeta. (The Bessel J/Y,
K and Airy functions are in ops/bessel.py, the orthogonal polynomials in
ops/orthogonal_polynomials.py.)

Kernels are in kernels/special.py. Each gradient is derivatives.yaml's formula (or
FunctionsManual's helper, or, for the composite special_ndtr, the gradient of its
decomposition), written with graph ops in PyTorch's order of operations, so a second
derivative runs and float64 numbers agree to the last bits. PyTorch has no
derivative for zeta, and for igamma/igammac's first input (``not_implemented``):
gradview refuses them in the same words. Shapes are the unary and binary float
rules (``xlogy`` of integers is float32), ``sgn`` keeps its dtype, ``frexp`` gives the
mantissa in the input's dtype and an Int exponent.
"""

from __future__ import annotations

import math

import numpy as np

from gradview.ir import Node, TensorType, Value, constant_value
from gradview.kernels import special
from gradview.kernels.dtypes import to_dtype

from .dtype_rules import to_float
from .emit_util import emit_if
from .gradients import Emitter
from .pointwise import (
    binary_float_shapes,
    binary_shapes,
    sum_to,
    unary_float_shapes,
    unary_same_shapes,
)
from .pointwise_math import save_needed_sizes
from .registry import formula, kernel, no_gradient, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, pointwise
from .static_info import dtype_index, fail

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

_NO_DERIVATIVE = "PyTorch has no derivative for it (derivatives.yaml: not implemented)"

# -- aten::special_zeta: Hurwitz zeta; derivatives.yaml: not implemented for either input --
shape_rule("aten::special_zeta")(binary_float_shapes)
kernel("aten::special_zeta")(special.zeta)
no_gradient("aten::special_zeta", reason=_NO_DERIVATIVE)


# == issue 22: the gamma family, error functions, Bessel I0/I1, xlogy and friends ===========
# Kernels in kernels/special.py; gradients as derivatives.yaml writes them (in graph ops, in
# its order of operations, so second derivatives run and the numbers are PyTorch's).
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT1_2 = 0.70710678118654752440  # M_SQRT1_2


def _eps(node: Node) -> float:
    """std::numeric_limits<scalar_t>::epsilon() of the node's input (float64's if unknown)."""
    index = dtype_index(node.inputs()[0])
    return float(np.finfo(to_dtype(index)).eps) if index is not None and index in (5, 6, 7) else _F64_EPS


_F64_EPS = float(np.finfo(np.float64).eps)


def _unary(kind: str, fn: object, rule: object = unary_float_shapes) -> None:
    shape_rule(kind)(rule)
    kernel(kind)(fn)


_unary("aten::digamma", special.digamma)
_unary("aten::lgamma", special.lgamma)
_unary("aten::erfinv", special.erfinv)
_unary("aten::i0", special.i0)
_unary("aten::special_i0e", special.i0e)
_unary("aten::special_i1", special.i1)
_unary("aten::special_i1e", special.i1e)
_unary("aten::special_ndtr", special.ndtr)
_unary("aten::special_ndtri", special.ndtri)
_unary("aten::special_log_ndtr", special.log_ndtr)
_unary("aten::special_erfcx", special.erfcx)
_unary("aten::special_entr", special.entr)
_unary("aten::sinc", special.sinc)
_unary("aten::sgn", special.sgn, unary_same_shapes)  # sgn of a real tensor is sign


def _times(emit: Emitter, grads: Grads, factor: Value) -> Result:
    return [emit.op("aten::mul", grads[0], factor)]


@formula("aten::lgamma")
def _lgamma_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * digamma(self)``."""
    return _times(emit, grads, emit.op("aten::digamma", node.input()))


@formula("aten::digamma")
def _digamma_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * polygamma(1, self)``."""
    return _times(emit, grads, emit.op("aten::polygamma", 1, node.input()))


@formula("aten::erfinv")
def _erfinv_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``0.5 * sqrt(pi) * exp(erfinv(self)^2) * grad`` (the result is erfinv(self))."""
    y = node.output()
    scaled = emit.op("aten::mul", emit.op("aten::exp", emit.op("aten::pow", y, 2)), 0.5 * _SQRT_PI)
    return [emit.op("aten::mul", scaled, grads[0])]


@formula("aten::i0")
def _i0_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * special_i1(self)``."""
    return _times(emit, grads, emit.op("aten::special_i1", node.input()))


@formula("aten::special_i0e")
def _i0e_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * (special_i1e(self) - sgn(self) * result)``."""
    x = node.input()
    slope = emit.op("aten::sub", emit.op("aten::special_i1e", x), emit.op("aten::mul", emit.op("aten::sgn", x), node.output()))
    return _times(emit, grads, slope)


def _i1_backward(lead: str, scaled: bool):  # a backward factory
    """FunctionsManual's i1_backward / i1e_backward: ``lead(x) - result * (1/x [+ sgn x])``
    at ``x`` moved off 0 to eps, and the limit 1/2 where ``|x| <= eps``."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        x, eps = node.input(), _eps(node)
        not_tiny = emit.op("aten::gt", emit.op("aten::abs", x), eps)
        safe = emit.op("aten::where", not_tiny, x, eps)
        shift = emit.op("aten::reciprocal", safe)
        if scaled:
            shift = emit.op("aten::add", emit.op("aten::sgn", safe), shift)
        slope = emit.op("aten::sub", emit.op(lead, safe), emit.op("aten::mul", node.output(), shift))
        return _times(emit, grads, emit.op("aten::where", not_tiny, slope, 0.5))

    return backward


formula("aten::special_i1")(_i1_backward("aten::i0", scaled=False))
formula("aten::special_i1e")(_i1_backward("aten::special_i0e", scaled=True))


@formula("aten::special_ndtr")
def _ndtr_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """special_ndtr is composite in PyTorch, ``(1 + erf(x * M_SQRT1_2)) * 0.5``; its
    gradient is that chain's: erf's ``2/sqrt(pi) exp(-u^2)`` between the two scalings."""
    u = emit.op("aten::mul", node.input(), _SQRT1_2)
    bell = emit.op("aten::exp", emit.op("aten::neg", emit.op("aten::pow", u, 2)))
    through_erf = emit.op("aten::mul", emit.op("aten::mul", bell, 2.0 / _SQRT_PI), emit.op("aten::mul", grads[0], 0.5))
    return [emit.op("aten::mul", through_erf, _SQRT1_2)]


@formula("aten::special_ndtri")
def _ndtri_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * sqrt(2 pi) * exp(result^2 / 2)``."""
    half_square = emit.op("aten::div", emit.op("aten::square", node.output()), 2)
    return [emit.op("aten::mul", emit.op("aten::mul", grads[0], _SQRT_2PI), emit.op("aten::exp", half_square))]


@formula("aten::special_log_ndtr")
def _log_ndtr_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad / sqrt(2 pi) * exp(-(result + self^2 / 2))``."""
    half_square = emit.op("aten::div", emit.op("aten::pow", node.input(), 2), 2)
    bell = emit.op("aten::exp", emit.op("aten::neg", emit.op("aten::add", node.output(), half_square)))
    return [emit.op("aten::mul", emit.op("aten::div", grads[0], _SQRT_2PI), bell)]


@formula("aten::special_erfcx")
def _erfcx_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``(2 * self * result - 2 / sqrt(pi)) * grad``."""
    twice = emit.op("aten::mul", emit.op("aten::mul", node.input(), 2.0), node.output())
    return [emit.op("aten::mul", emit.op("aten::sub", twice, 2.0 / _SQRT_PI), grads[0])]


@formula("aten::special_entr")
def _entr_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * (-(1 + log(self)))``."""
    return _times(emit, grads, emit.op("aten::neg", emit.op("aten::add", emit.op("aten::log", node.input()), 1)))


@formula("aten::sinc")
def _sinc_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """FunctionsManual's sinc_backward: ``grad * (pi x cos(pi x) - sin(pi x)) / (x^2 pi)``,
    zero where ``x^2 pi == 0``."""
    x = node.input()
    x_pi = emit.op("aten::mul", x, math.pi)
    x_squared_pi = emit.op("aten::mul", emit.op("aten::mul", x, x), math.pi)
    top = emit.op("aten::sub", emit.op("aten::mul", x_pi, emit.op("aten::cos", x_pi)), emit.op("aten::sin", x_pi))
    out = emit.op("aten::mul", grads[0], emit.op("aten::div", top, x_squared_pi))
    return [emit.op("aten::where", emit.op("aten::eq", x_squared_pi, 0.0), 0.0, out)]


@formula("aten::sgn")
def _sgn_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """sgn_backward of a real tensor: zeros."""
    return [emit.op("aten::zeros_like", grads[0])]


# -- aten::polygamma(int n, Tensor self), aten::mvlgamma(Tensor self, int p) --
kernel("aten::polygamma")(special.polygamma)
kernel("aten::mvlgamma")(special.mvlgamma)
shape_rule("aten::mvlgamma")(unary_float_shapes)


@shape_rule("aten::polygamma")
def _polygamma_shapes(args: NodeArgs) -> RuleResult:
    """The tensor's sizes (it is the second argument), in a floating dtype."""
    self = args.tensor(1)
    if self is None:
        return None
    dtype = self.scalar_type and to_float(self.scalar_type)
    return [pointwise(args, [1], dtype, common=dtype)]


@formula("aten::polygamma")
def _polygamma_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad * polygamma(n + 1, self)``."""
    n, x = node.inputs()
    order = constant_value(n)
    following = order + 1 if isinstance(order, int) else emit.op("aten::add", n, 1)
    return [None, emit.op("aten::mul", grads[0], emit.op("aten::polygamma", following, x))]


@formula("aten::mvlgamma")
def _mvlgamma_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """FunctionsManual's mvlgamma_backward: ``grad * sum_i digamma(self + a_i)`` over
    ``a = arange(-p/2 + 1/2, 1/2, 1/2)``, summed in that order."""
    x, p_value = node.inputs()
    p = constant_value(p_value)
    if not isinstance(p, int):
        fail(node, "mvlgamma's gradient needs a constant p")
    total = None
    for offset in np.arange(-p / 2 + 0.5, 0.5, 0.5):
        shifted = x if offset == 0 else emit.op("aten::add", x, float(offset))
        term = emit.op("aten::digamma", shifted)
        total = term if total is None else emit.op("aten::add", total, term)
    return [emit.op("aten::mul", grads[0], total), None]


# -- aten::igamma, igammac: a gradient for `other` only (derivatives.yaml: not_implemented for self) --
shape_rule("aten::igamma", "aten::igammac")(binary_float_shapes)
kernel("aten::igamma")(special.igamma)
kernel("aten::igammac")(special.igammac)


def _igamma_backward(op: str, negate: bool):  # a backward factory
    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        """``other``: ``±grad * exp((self - 1) * log(other) - other - lgamma(self))``."""
        a, x = node.inputs()
        if a.requires_grad():
            fail(node, f"the derivative for '{op}: input' is not implemented (PyTorch's autograd raises too)")
        if not x.requires_grad():
            return [None, None]
        power = emit.op("aten::mul", emit.op("aten::sub", a, 1), emit.op("aten::log", x))
        density = emit.op("aten::exp", emit.op("aten::sub", emit.op("aten::sub", power, x), emit.op("aten::lgamma", a)))
        g = emit.op("aten::neg", grads[0]) if negate else grads[0]
        return [None, sum_to(emit, saved, "other_size", emit.op("aten::mul", g, density))]

    return backward


formula("aten::igamma", forward=save_needed_sizes("", "other_size"))(_igamma_backward("igamma", negate=False))
formula("aten::igammac", forward=save_needed_sizes("", "other_size"))(_igamma_backward("igammac", negate=True))


# -- aten::xlogy, special_xlog1py: three overloads each --
shape_rule("aten::xlogy", "aten::special_xlog1py")(binary_float_shapes)
kernel("aten::xlogy.Tensor", "aten::xlogy.Scalar_Self", "aten::xlogy.Scalar_Other")(special.xlogy)
kernel(
    "aten::special_xlog1py", "aten::special_xlog1py.self_scalar", "aten::special_xlog1py.other_scalar"
)(special.xlog1py)


def _xlog_backward(op: str, pole: float, scalar: str):  # a backward factory
    """derivatives.yaml's xlogy (``pole`` 0, ``other``) and xlog1py (``pole`` -1,
    ``other + 1``): ``self``: ``op(grad, other)``, zero where ``self == 0`` and
    ``other <= pole``; ``other``: ``grad * self / (other - pole)``."""

    def grad_self(emit: Emitter, g: Value, x: Value, y: object) -> Value:
        flat = emit.op("aten::eq", x, 0.0)
        if isinstance(y, Value) and y.type().is_tensor():
            flat = emit.op("aten::__and__", flat, emit.op("aten::le", y, pole))
        return emit.op("aten::masked_fill", emit.op(op, g, y), flat, 0.0)

    def grad_other(emit: Emitter, g: Value, x: object, y: Value) -> Value:
        shifted = y if pole == 0 else emit.op("aten::add", y, 1)
        return emit.op("aten::div", emit.op("aten::mul", g, x), shifted)

    def tensors(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        x, y = node.inputs()
        gx = sum_to(emit, saved, "self_size", grad_self(emit, grads[0], x, y)) if x.requires_grad() else None
        gy = sum_to(emit, saved, "other_size", grad_other(emit, grads[0], x, y)) if y.requires_grad() else None
        return [gx, gy]

    def self_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        x, y = node.inputs()
        return [None, grad_other(emit, grads[0], x, y)]

    def other_scalar(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
        x, y = node.inputs()
        value = constant_value(y)
        if isinstance(value, (int, float)):
            return [emit.op(op, grads[0], y) if value > pole else grad_self(emit, grads[0], x, y), None]
        above = emit.op("aten::gt", emit.op("aten::Float", y), float(pole))
        chosen = emit_if(emit, above, lambda: emit.op(op, grads[0], y), lambda: grad_self(emit, grads[0], x, y), TensorType())
        return [chosen, None]

    name = "aten::xlogy" if op == "aten::xlogy" else "aten::special_xlog1py"
    formula(f"{name}.Tensor" if name == "aten::xlogy" else name, forward=save_needed_sizes("self_size", "other_size"))(tensors)
    formula(f"{name}.{scalar[0]}")(self_scalar)
    formula(f"{name}.{scalar[1]}")(other_scalar)


_xlog_backward("aten::xlogy", 0.0, ("Scalar_Self", "Scalar_Other"))
_xlog_backward("aten::special_xlog1py", -1.0, ("self_scalar", "other_scalar"))


# -- aten::nextafter, frexp, ldexp --
shape_rule("aten::nextafter")(binary_shapes)
kernel("aten::nextafter")(special.nextafter)


@formula("aten::nextafter", forward=save_needed_sizes("self_size", ""))
def _nextafter_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self: ``where(self != other, grad, 0)``; other: ``zeros_like(other)``."""
    x, y = node.inputs()
    gx = None
    if x.requires_grad():
        gx = sum_to(emit, saved, "self_size", emit.op("aten::where", emit.op("aten::ne", x, y), grads[0], 0))
    gy = emit.op("aten::zeros_like", y) if y.requires_grad() else None
    return [gx, gy]


kernel("aten::frexp.Tensor")(special.frexp)


@shape_rule("aten::frexp")
def _frexp_shapes(args: NodeArgs) -> RuleResult:
    """The mantissa in the input's dtype, the exponent as Int, both of its sizes."""
    self = args.tensor(0)
    if self is None:
        return None
    return [pointwise(args, [0], self.scalar_type), pointwise(args, [0], "Int")]


@formula("aten::frexp.Tensor")
def _frexp_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """``grad / exp2(exponent)`` (the exponent is an integer: it has no gradient)."""
    return [emit.op("aten::div", grads[0], emit.op("aten::exp2", node.outputs()[1]))]


shape_rule("aten::ldexp")(binary_float_shapes)
kernel("aten::ldexp.Tensor")(special.ldexp)


@formula("aten::ldexp.Tensor", forward=save_needed_sizes("self_size", "other_size"))
def _ldexp_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """self: ``grad * pow(2, other)``; other: ``grad * result * M_LN2``."""
    x, y = node.inputs()
    gx = gy = None
    if x.requires_grad():
        gx = sum_to(emit, saved, "self_size", emit.op("aten::mul", grads[0], emit.op("aten::pow", 2, y)))
    if y.requires_grad():
        gy = sum_to(emit, saved, "other_size", emit.op("aten::mul", emit.op("aten::mul", grads[0], node.output()), math.log(2.0)))
    return [gx, gy]

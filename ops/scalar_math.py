"""TorchScript's scalar ops: int/float/bool arithmetic, math, comparisons,
logic and conversions on plain Python values.

Scripted code computes sizes, indices, loop bounds and messages with these
ops (``aten::add.int``, ``aten::lt.float``, ``aten::Int.Tensor``...). They
take and return Python numbers, booleans and strings, never tensors, so
they have no shape rule (the shape pass types numbers by their schema) and
no gradient: a Python number never requires grad. What they need is
TorchScript's exact semantics (int64 wrap-around, IEEE float division, the
single-precision ``.Scalar`` math), which the kernels in
:mod:`gradview.kernels.scalar_math` implement.
"""

from __future__ import annotations

from gradview.kernels import scalar_math

from .registry import kernel

__all__: list[str] = []

# -- add, sub, mul, floordiv, remainder -----------------------------------------------------------
for _name, (_on_ints, _on_floats, _on_scalars) in scalar_math.ARITHMETIC.items():
    kernel(f"aten::{_name}.int")(_on_ints)
    kernel(f"aten::{_name}.float", f"aten::{_name}.int_float", f"aten::{_name}.float_int")(_on_floats)
    kernel(f"aten::{_name}")(_on_scalars)

# -- div, pow, neg --------------------------------------------------------------------------------
kernel("aten::div.int", "aten::div.float", "aten::div")(scalar_math.div)
kernel("aten::pow.int", "aten::pow.float", "aten::pow.int_float", "aten::pow.float_int")(scalar_math.pow_)
kernel("aten::pow.Scalar_Scalar")(scalar_math.pow_scalar)
kernel("aten::pow.int_to_int")(scalar_math.pow_int_to_int)
kernel("aten::neg.int")(scalar_math.neg_int)
kernel("aten::neg.float")(scalar_math.neg_float)
kernel("aten::neg.Scalar")(scalar_math.neg_scalar)

# -- math functions: exp, log, sqrt, sin, cos, tanh, erf, log1p, expm1 ----------------------------
for _name, (_double, _single) in scalar_math.MATH.items():
    kernel(f"aten::{_name}.int", f"aten::{_name}.float")(_double)
    kernel(f"aten::{_name}.Scalar")(_single)
kernel(
    "aten::log.int_int", "aten::log.float_float", "aten::log.int_float", "aten::log.float_int",
    "aten::log.Scalar_Scalar",
)(scalar_math.log_base)

# -- comparisons: eq, ne, lt, gt, le, ge ------------------------------------------------------------
for _name, (_same, _mixed, _scalars) in scalar_math.COMPARISONS.items():
    kernel(f"aten::{_name}.int", f"aten::{_name}.float", f"aten::{_name}.str")(_same)
    kernel(f"aten::{_name}.int_float", f"aten::{_name}.float_int")(_mixed)
    kernel(f"aten::{_name}")(_scalars)
kernel("aten::eq.bool", "aten::eq.device")(scalar_math.eq_same)
kernel("aten::ne.bool", "aten::ne.device")(scalar_math.ne_same)
kernel("aten::eq.int_list", "aten::eq.float_list", "aten::eq.bool_list", "aten::eq.str_list")(scalar_math.eq_list)
kernel("aten::ne.int_list", "aten::ne.float_list", "aten::ne.bool_list", "aten::ne.str_list")(scalar_math.ne_list)
kernel("aten::eq.Tensor_list")(scalar_math.eq_tensor_list)
kernel("aten::ne.Tensor_list")(scalar_math.ne_tensor_list)

# -- logic and identity ------------------------------------------------------------------------------
kernel("aten::__not__")(scalar_math.not_)
kernel("aten::__and__.bool", "aten::__and__.int")(scalar_math.and_)
kernel("aten::__or__.bool", "aten::__or__.int")(scalar_math.or_)
kernel("aten::__xor__.bool", "aten::__xor__.int")(scalar_math.xor)
kernel("aten::__is__")(scalar_math.is_)
kernel("aten::__isnot__")(scalar_math.isnot)

# -- conversions: Int, Float, Bool ---------------------------------------------------------------------
kernel("aten::Int.Tensor")(scalar_math.int_tensor)
kernel("aten::Int.bool")(scalar_math.int_bool)
kernel("aten::Int.float")(scalar_math.int_float)
kernel("aten::Int.Scalar")(scalar_math.int_scalar)
kernel("aten::Int.str")(scalar_math.int_str)
kernel("aten::Float.str")(scalar_math.float_str)
kernel("aten::Float.Tensor")(scalar_math.float_tensor)
kernel("aten::item")(scalar_math.item)
# Whole-tensor comparisons with a Python bool result (no gradient: a bool never requires grad).
kernel("aten::equal")(scalar_math.equal)
kernel("aten::allclose")(scalar_math.allclose)
kernel("aten::Float.Scalar", "aten::Float.int", "aten::Float.bool")(scalar_math.float_)
kernel("aten::Bool.Tensor")(scalar_math.bool_tensor)
kernel("aten::Bool.int", "aten::Bool.float")(scalar_math.bool_)

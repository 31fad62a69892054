"""Shape rules for elementwise ops, dtype conversions and tensor factories.

Elementwise results broadcast their tensor inputs and take the promoted
dtype of all inputs, Python numbers included (see :mod:`.dtype_rules`):
``add(Long(3), 1.5)`` is ``Float(3)``. Ops that compute in floating point
(``sin``, true ``div``) turn integer results into the default float;
comparisons give ``Bool``.
"""

from __future__ import annotations

import math

from gradview.ops.dtype_rules import DEFAULT_FLOAT, scalar_type_name, to_float
from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import (
    NodeArgs,
    RuleResult,
    broadcast,
    fresh,
    layout_of,
    make_tensor,
    pointwise,
)
from gradview.ops.tensor_layout import contiguous_strides, is_contiguous, preserve_strides

from ..types import TensorType

__all__: list[str] = []

UNARY_SAME = (
    "aten::abs", "aten::neg", "aten::relu", "aten::sign", "aten::floor", "aten::ceil",
    "aten::round", "aten::trunc", "aten::frac", "aten::bitwise_not", "aten::leaky_relu",
    "aten::gelu", "aten::hardtanh", "aten::elu", "aten::silu", "aten::relu6", "aten::softplus",
    "aten::celu", "aten::selu", "aten::hardswish", "aten::hardsigmoid", "aten::mish",
    "aten::threshold", "aten::positive", "aten::sgn", "aten::nan_to_num", "aten::hardshrink",
)
UNARY_FLOAT = (
    "aten::sin", "aten::cos", "aten::tan", "aten::asin", "aten::acos", "aten::atan",
    "aten::sinh", "aten::cosh", "aten::tanh", "aten::asinh", "aten::acosh", "aten::atanh",
    "aten::exp", "aten::exp2", "aten::expm1", "aten::log", "aten::log2", "aten::log10",
    "aten::log1p", "aten::sqrt", "aten::rsqrt", "aten::sigmoid", "aten::erf", "aten::erfc",
    "aten::erfinv", "aten::lgamma", "aten::digamma", "aten::reciprocal", "aten::logit",
    "aten::i0", "aten::sinc", "aten::log_sigmoid",
)
UNARY_BOOL = ("aten::isnan", "aten::isinf", "aten::isfinite", "aten::logical_not", "aten::signbit")
BINARY = (
    "aten::add", "aten::sub", "aten::rsub", "aten::mul", "aten::maximum", "aten::minimum",
    "aten::fmax", "aten::fmin", "aten::remainder", "aten::fmod", "aten::floor_divide",
    "aten::bitwise_and", "aten::bitwise_or", "aten::bitwise_xor", "aten::__and__",
    "aten::__or__", "aten::__xor__", "aten::pow", "aten::heaviside", "aten::xlogy",
)
BINARY_FLOAT = ("aten::true_divide", "aten::atan2", "aten::copysign", "aten::hypot")
COMPARISONS = (
    "aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge",
    "aten::logical_and", "aten::logical_or", "aten::logical_xor",
)
# Backward kernels autodiff emits: broadcast of their tensor inputs, promoted dtype.
BACKWARD = (
    "aten::tanh_backward", "aten::sigmoid_backward", "aten::threshold_backward",
    "aten::gelu_backward", "aten::leaky_relu_backward", "aten::hardtanh_backward",
    "aten::hardshrink_backward", "aten::hardswish_backward", "aten::hardsigmoid_backward",
    "aten::silu_backward", "aten::softplus_backward", "aten::elu_backward", "aten::logit_backward",
)
# Memory formats as ``memory_format=`` arguments carry them.
_CONTIGUOUS_FORMAT = 0


def _tensor_inputs(args: NodeArgs) -> list[int]:
    return [i for i in range(len(args)) if args.tensor(i) is not None]


@shape_rule(*UNARY_SAME)
def _unary_same(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    return [pointwise(args, [0], self.scalar_type)]


@shape_rule(*UNARY_FLOAT)
def _unary_float(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    dtype = self.scalar_type and to_float(self.scalar_type)
    return [pointwise(args, [0], dtype, common=dtype)]


@shape_rule(*UNARY_BOOL)
def _unary_bool(args: NodeArgs) -> RuleResult:
    if args.tensor(0) is None:
        return None
    return [pointwise(args, [0], "Bool")]


@shape_rule(*BINARY, *BACKWARD)
def _binary(args: NodeArgs) -> RuleResult:
    tensors = _tensor_inputs(args)
    if not tensors:
        return None  # int/float arithmetic on Python numbers
    kind = args.node.kind()
    operands = [0, 1] if kind not in BACKWARD else tensors
    dtype = args.promoted(operands)
    if kind == "aten::pow" and args.tensor(0) is None:
        # pow(Scalar, Tensor) allocates a contiguous result rather than iterating.
        result = pointwise(args, tensors, dtype)
        return [fresh(result.scalar_type, result.sizes, result.device)]
    # pow(Tensor, Scalar) is a unary kernel: its exponent is not iterated over.
    numbers = [0] if kind == "aten::pow" else operands
    return [pointwise(args, tensors, dtype, numbers, common=dtype)]


@shape_rule(*BINARY_FLOAT)
def _binary_float(args: NodeArgs) -> RuleResult:
    tensors = _tensor_inputs(args)
    if not tensors:
        return None
    dtype = args.promoted([0, 1])
    dtype = dtype and to_float(dtype)
    return [pointwise(args, tensors, dtype, [0, 1], common=dtype)]


_UNKNOWN = object()


@shape_rule("aten::div")
def _div(args: NodeArgs) -> RuleResult:
    tensors = _tensor_inputs(args)
    if not tensors:
        return None
    dtype = args.promoted([0, 1])
    # div(..., rounding_mode="trunc"/"floor") keeps integers; true division makes floats.
    if len(args) < 3 or args.value(2, _UNKNOWN) is None:
        dtype = dtype and to_float(dtype)
    elif args.value(2, _UNKNOWN) is _UNKNOWN:
        dtype = None
    return [pointwise(args, tensors, dtype, [0, 1], common=dtype)]


@shape_rule(*COMPARISONS)
def _comparison(args: NodeArgs) -> RuleResult:
    tensors = _tensor_inputs(args)
    if not tensors:
        return None
    return [pointwise(args, tensors, "Bool", [0, 1], common=args.promoted([0, 1]))]


@shape_rule("aten::where")
def _where(args: NodeArgs) -> RuleResult:
    if len(args) != 3 or args.tensor(0) is None:
        return None  # where(condition) -> Tensor[] is nonzero in disguise
    dtype = args.promoted([1, 2])
    return [pointwise(args, _tensor_inputs(args), dtype, [1, 2], common=dtype, cast=[1, 2])]


@shape_rule("aten::clamp", "aten::clamp_min", "aten::clamp_max", "aten::clip")
def _clamp(args: NodeArgs) -> RuleResult:
    if args.tensor(0) is None:
        return None
    dtype = args.promoted(range(len(args)))
    return [pointwise(args, _tensor_inputs(args), dtype, common=dtype, cast=[0])]


@shape_rule("aten::lerp", "aten::addcmul", "aten::addcdiv")
def _promote_all_tensors(args: NodeArgs) -> RuleResult:
    if args.tensor(0) is None:
        return None
    tensors = _tensor_inputs(args)
    return [pointwise(args, tensors, args.promoted(tensors))]


@shape_rule("aten::masked_fill")
def _masked_fill(args: NodeArgs) -> RuleResult:
    # ATen expands self and mask together, then fills a contiguous clone of self.
    self, mask = args.tensor(0), args.tensor(1)
    if self is None or mask is None:
        return None
    return [fresh(self.scalar_type, broadcast(self.sizes, mask.sizes), self.device)]


@shape_rule("aten::square")
def _square(args: NodeArgs) -> RuleResult:
    # pow(self, 2): the int 2 turns a bool tensor into int64, and keeps every other dtype.
    self = args.tensor(0)
    if self is None:
        return None
    dtype = "Long" if self.scalar_type == "Bool" else self.scalar_type
    return [pointwise(args, [0], dtype, common=dtype)]


# In-place elementwise ops return ``self`` itself: its dtype, sizes and strides (the
# other operands may only broadcast to it, and the result is cast back to its dtype).
IN_PLACE = (
    "aten::add_", "aten::sub_", "aten::mul_", "aten::div_", "aten::relu_", "aten::sigmoid_", "aten::tanh_",
    "aten::exp_", "aten::neg_", "aten::clamp_", "aten::zero_", "aten::fill_", "aten::copy_", "aten::hardswish_",
    "aten::silu_", "aten::elu_", "aten::leaky_relu_", "aten::hardtanh_", "aten::masked_fill_", "aten::dropout_",
)


@shape_rule(*IN_PLACE)
def _in_place(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None  # add_.t and mul_.t mutate lists
    return [TensorType(self.scalar_type, self.sizes, self.strides, None, self.device)]


# -- identity-like ops and conversions --------------------------------------------------------


def _same_as(t: TensorType) -> TensorType:
    """The input's own type (the op returns the input, or an alias of it)."""
    return TensorType(t.scalar_type, t.sizes, t.strides, None, t.device)


@shape_rule("aten::detach", "aten::alias", "aten::lift_fresh")
def _identity(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    return None if self is None else [_same_as(self)]


@shape_rule("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout")
def _dropout(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    if args.value(2, None) is False:
        return [_same_as(self)]  # dropout in eval mode returns its input
    return [pointwise(args, [0], self.scalar_type)]


def _converted(self: TensorType, dtype: str | None, device: str | None, memory_format: object,
               copy: object = False) -> TensorType:
    """A copy of ``self`` with another dtype/device, laid out like ``empty_like(preserve)``.

    Converting to the same dtype and device without ``copy=True`` returns ``self``.
    """
    if dtype == self.scalar_type and device == self.device and copy is False and memory_format is None:
        return _same_as(self)
    return _like(self, dtype, device, memory_format)


def _like(self: TensorType, dtype: str | None, device: str | None, memory_format: object) -> TensorType:
    layout = layout_of(self)
    strides = None
    if layout is not None:
        if memory_format == _CONTIGUOUS_FORMAT:
            strides = contiguous_strides(layout[0])
        else:
            strides = preserve_strides(*layout)
    return make_tensor(dtype, self.sizes, strides, device)


def _dtype_arg(args: NodeArgs, i: int, default: str | None) -> str | None:
    """A ``ScalarType? dtype`` argument: None keeps ``default``; unknown gives None."""
    if args.is_none(i) or i >= len(args):
        return default
    index = args.int_value(i)
    return scalar_type_name(index) if index is not None else None


def _device_arg(args: NodeArgs, i: int, default: str | None) -> str | None:
    if args.is_none(i) or i >= len(args):
        return default
    device = args.value(i, None)
    return device if isinstance(device, str) else None


@shape_rule("aten::to")
def _to(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    first = str(args.type(1)) if len(args) > 1 else "bool"
    dtype, device = self.scalar_type, self.device
    if first == "Device" or (first == "NoneType" and len(args) == 5):
        # to.device(self, device, dtype, non_blocking, copy, memory_format) or
        # to.prim_Device(self, device?, dtype?, non_blocking, copy)
        device = _device_arg(args, 1, device)
        dtype = _dtype_arg(args, 2, dtype)
        copy_index, format_index = 4, 5
    elif args.tensor(1) is not None:  # to.other
        other = args.tensor(1)
        dtype, device = other.scalar_type, other.device  # type: ignore[union-attr]
        copy_index, format_index = 3, 4
    elif first == "bool":  # to.prim_other(self, non_blocking, copy): no memory_format
        copy_index, format_index = 2, len(args)
    else:  # to.dtype / to.prim_dtype
        dtype = _dtype_arg(args, 1, dtype)
        copy_index, format_index = 3, 4
    copy = args.value(copy_index, False)
    memory_format = args.value(format_index, None)
    return [_converted(self, dtype, device, memory_format, copy)]


@shape_rule("aten::type_as")
def _type_as(args: NodeArgs) -> RuleResult:
    self, other = args.tensor(0), args.tensor(1)
    if self is None or other is None:
        return None
    # self.to(other.options()): other's dtype and device
    return [_converted(self, other.scalar_type, other.device or self.device, None)]


@shape_rule("aten::contiguous")
def _contiguous(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    layout = layout_of(self)
    if layout is not None and is_contiguous(*layout):
        return [make_tensor(self.scalar_type, self.sizes, layout[1], self.device)]
    return [fresh(self.scalar_type, self.sizes, self.device)]


@shape_rule("aten::clone")
def _clone(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    return [_like(self, self.scalar_type, self.device, args.value(1, None))]


@shape_rule("aten::zeros_like", "aten::ones_like", "aten::empty_like", "aten::rand_like",
               "aten::randn_like", "aten::full_like")
def _factory_like(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    shift = 1 if args.node.kind() == "aten::full_like" else 0
    dtype = _dtype_arg(args, 1 + shift, self.scalar_type)
    device = _device_arg(args, 3 + shift, self.device)
    return [_like(self, dtype, device, args.value(5 + shift, None))]


@shape_rule("prim::NumToTensor", "aten::scalar_tensor")
def _num_to_tensor(args: NodeArgs) -> RuleResult:
    dtype = {"int": "Long", "float": "Double", "bool": "Bool"}.get(str(args.type(0)))
    if args.node.kind() == "aten::scalar_tensor":
        dtype = _dtype_arg(args, 1, DEFAULT_FLOAT)
    return [fresh(dtype, (), "cpu")]


# -- factories --------------------------------------------------------------------------------

_FILL_DTYPES = {"int": "Long", "float": DEFAULT_FLOAT, "bool": "Bool"}


@shape_rule("aten::zeros", "aten::ones", "aten::empty", "aten::rand", "aten::randn", "aten::full")
def _factory(args: NodeArgs) -> RuleResult:
    sizes = args.int_list(0)
    if sizes is None and str(args.type(0)) not in ("int[]", "SymInt[]"):
        return None
    shift = 1 if args.node.kind() == "aten::full" else 0
    default = _FILL_DTYPES.get(str(args.type(1))) if shift else DEFAULT_FLOAT
    dtype = _dtype_arg(args, 1 + shift, default)
    device = _device_arg(args, 3 + shift, "cpu")
    return [fresh(dtype, tuple(sizes) if sizes is not None else None, device)]


@shape_rule("aten::arange")
def _arange(args: NodeArgs) -> RuleResult:
    # arange(end, dtype, layout, device, pin), arange.start(start, end, ...),
    # arange.start_step(start, end, step, ...): count the leading numbers.
    numbers = 0
    while numbers < min(len(args), 3) and str(args.type(numbers)) in ("int", "float", "Scalar"):
        numbers += 1
    if numbers == 0:
        return None
    kinds = {str(args.type(i)) for i in range(numbers)}
    default = "Long" if kinds == {"int"} else DEFAULT_FLOAT if "Scalar" not in kinds else None
    dtype = _dtype_arg(args, numbers, default)
    device = _device_arg(args, numbers + 2, "cpu")
    bounds = [args.value(i, None) for i in range(numbers)]
    length = None
    if all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds):
        if numbers == 1:
            bounds = [0, bounds[0], 1]
        elif numbers == 2:
            bounds.append(1)
        start, end, step = bounds
        if step != 0:
            length = max(0, math.ceil((end - start) / step))
    return [fresh(dtype, (length,), device)]

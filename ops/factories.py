"""Tensor factories: ``zeros``, ``ones``, ``full``, ``arange`` and ``scalar_tensor``.

A factory makes a tensor from sizes and numbers, not from another tensor's
values, so it has no gradient: it takes no tensor input at all. (The ``*_like``
factories, ``rand_like`` included, read only their input's shape and dtype;
they are in :mod:`gradview.ops.casts`.)

The kernels (``kernels/factories.py``) follow PyTorch's dtype inference:
``zeros``/``ones`` give the default float, ``full`` takes its fill value's kind,
``arange`` gives int64 when start, end and step are all ints; the shape rules
below say the same from the types. ``dtype_arg`` and ``device_arg`` read the
optional dtype and device arguments every factory (and ``*_like`` op) takes.
"""

from __future__ import annotations

import math

from gradview.kernels import factories as kernels

from .dtype_rules import DEFAULT_FLOAT, scalar_type_name
from .registry import kernel, no_gradient, random, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, fresh

__all__ = ["dtype_arg", "device_arg"]

def dtype_arg(args: NodeArgs, i: int, default: str | None) -> str | None:
    """A ``ScalarType? dtype`` argument: None keeps ``default``; unknown gives None."""
    if args.is_none(i) or i >= len(args):
        return default
    index = args.int_value(i)
    return scalar_type_name(index) if index is not None else None


def device_arg(args: NodeArgs, i: int, default: str | None) -> str | None:
    """A ``Device? device`` argument: None keeps ``default``; unknown gives None."""
    if args.is_none(i) or i >= len(args):
        return default
    device = args.value(i, None)
    return device if isinstance(device, str) else None


@shape_rule("prim::NumToTensor", "aten::scalar_tensor")
def _num_to_tensor_shapes(args: NodeArgs) -> RuleResult:
    dtype = {"int": "Long", "float": "Double", "bool": "Bool"}.get(str(args.type(0)))
    if args.node.kind() == "aten::scalar_tensor":
        dtype = dtype_arg(args, 1, DEFAULT_FLOAT)
    return [fresh(dtype, (), "cpu")]


_FILL_DTYPES = {"int": "Long", "float": DEFAULT_FLOAT, "bool": "Bool"}


@shape_rule("aten::zeros", "aten::ones", "aten::empty", "aten::rand", "aten::randn", "aten::full")
def _factory_shapes(args: NodeArgs) -> RuleResult:
    sizes = args.int_list(0)
    if sizes is None and str(args.type(0)) not in ("int[]", "SymInt[]"):
        return None
    shift = 1 if args.node.kind() == "aten::full" else 0
    default = _FILL_DTYPES.get(str(args.type(1))) if shift else DEFAULT_FLOAT
    dtype = dtype_arg(args, 1 + shift, default)
    device = device_arg(args, 3 + shift, "cpu")
    return [fresh(dtype, tuple(sizes) if sizes is not None else None, device)]


@shape_rule("aten::arange")
def _arange_shapes(args: NodeArgs) -> RuleResult:
    # arange(end, dtype, layout, device, pin), arange.start(start, end, ...),
    # arange.start_step(start, end, step, ...): count the leading numbers.
    numbers = 0
    while numbers < min(len(args), 3) and str(args.type(numbers)) in ("int", "float", "Scalar"):
        numbers += 1
    if numbers == 0:
        return None
    kinds = {str(args.type(i)) for i in range(numbers)}
    default = "Long" if kinds == {"int"} else DEFAULT_FLOAT if "Scalar" not in kinds else None
    dtype = dtype_arg(args, numbers, default)
    device = device_arg(args, numbers + 2, "cpu")
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


# -- aten::zeros, ones, full -----------------------------------------------------------------
kernel("aten::zeros")(kernels.zeros)
kernel("aten::ones")(kernels.ones)
kernel("aten::full")(kernels.full)
# rand and randn draw from gradview's seeded generator (kernels/dropout.py), not PyTorch's.
kernel("aten::rand")(kernels.rand)
kernel("aten::randn")(kernels.randn)
random("aten::rand", "aten::randn")

# -- aten::scalar_tensor (its shape rule is NumToTensor's, above) ---------------------------------
kernel("aten::scalar_tensor")(kernels.scalar_tensor)

# -- aten::arange ----------------------------------------------------------------------------
kernel("aten::arange")(kernels.arange)
kernel("aten::arange.start")(kernels.arange_start)
kernel("aten::arange.start_step")(kernels.arange_start_step)


# == Issue 22: new_* , empty overloads, eye, linspace, logspace ==================================
# Their values never depend on a tensor input's values: no gradient (PyTorch's results do not
# require grad). empty's values are undefined in PyTorch; gradview's are zeros.
kernel("aten::new_zeros")(kernels.new_zeros)
kernel("aten::new_ones")(kernels.new_ones)
kernel("aten::new_empty")(kernels.new_empty)
kernel("aten::new_full")(kernels.new_full)
kernel("aten::empty.memory_format")(kernels.empty)
kernel("aten::empty_permuted")(kernels.empty_permuted)
kernel("aten::empty_strided")(kernels.empty_strided)
kernel("aten::eye")(kernels.eye)
kernel("aten::eye.m")(kernels.eye_m)
kernel("aten::linspace")(kernels.linspace)
kernel("aten::linspace.Tensor_Tensor", "aten::linspace.Tensor_Scalar", "aten::linspace.Scalar_Tensor")(
    kernels.linspace_tensor
)
kernel("aten::logspace")(kernels.logspace)
kernel("aten::logspace.Tensor_Tensor", "aten::logspace.Tensor_Scalar", "aten::logspace.Scalar_Tensor")(
    kernels.logspace_tensor
)

no_gradient(
    "aten::new_zeros", "aten::new_ones", "aten::new_empty", "aten::new_full",
    reason="its values do not depend on the input's values (only its dtype and device), "
    "so PyTorch's result does not require grad",
)
no_gradient(
    "aten::linspace.Tensor_Tensor", "aten::linspace.Tensor_Scalar", "aten::linspace.Scalar_Tensor",
    "aten::logspace.Tensor_Tensor", "aten::logspace.Tensor_Scalar", "aten::logspace.Scalar_Tensor",
    reason="PyTorch does not differentiate it: its start and end are read as numbers",
)


@shape_rule("aten::new_zeros", "aten::new_ones", "aten::new_empty", "aten::new_full")
def _new_factory_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    sizes = args.int_list(1)
    shift = 1 if args.node.kind() == "aten::new_full" else 0
    dtype = dtype_arg(args, 2 + shift, self.scalar_type)
    device = device_arg(args, 4 + shift, self.device)
    return [fresh(dtype, tuple(sizes) if sizes is not None else None, device)]


@shape_rule("aten::empty_permuted", "aten::empty_strided")
def _empty_with_layout_shapes(args: NodeArgs) -> RuleResult:
    sizes = args.int_list(0)
    return [fresh(dtype_arg(args, 2, DEFAULT_FLOAT), tuple(sizes) if sizes is not None else None, device_arg(args, 4, "cpu"))]


@shape_rule("aten::eye")
def _eye_shapes(args: NodeArgs) -> RuleResult:
    square = str(args.type(1)) != "int"
    n = args.int_value(0)
    m = n if square else args.int_value(1)
    first = 1 if square else 2
    return [fresh(dtype_arg(args, first, DEFAULT_FLOAT), (n, m), device_arg(args, first + 2, "cpu"))]


@shape_rule("aten::linspace", "aten::logspace")
def _space_shapes(args: NodeArgs) -> RuleResult:
    first = 3 if args.node.kind() == "aten::linspace" else 4
    return [fresh(dtype_arg(args, first, DEFAULT_FLOAT), (args.int_value(2),), device_arg(args, first + 2, "cpu"))]

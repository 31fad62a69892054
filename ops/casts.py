"""Copies, dtype casts and ``*_like`` constructors: contiguous, clone, detach,
type_as, the ``to`` overloads, zeros_like / empty_like / ones_like / full_like;
and AOTAutograd's functional forms: ``_to_copy`` (a cast that always copies; its
gradient is ``to``'s), ``copy`` (``self`` overwritten by ``src`` broadcast: PyTorch
has no derivative for it) and ``new_empty_strided``.

A cast changes how each element is stored, not which element it is, so its
gradient is the incoming gradient converted back to the input's dtype (what
``_to_copy``'s backward does in PyTorch): a no-op when the cast changed
nothing. A copy (``contiguous``, ``clone``) passes the gradient through.
``detach`` cuts the graph on purpose, and the ``*_like`` constructors read
only their input's shape and dtype, never its values: no gradient flows
through them.

Shapes: converting to the dtype and device a tensor already has, without
``copy=True``, returns the tensor itself (its type, strides included); a real
conversion allocates a tensor laid out like ``empty_like(preserve_format)``.
"""

from __future__ import annotations

from gradview.ir import Node, TensorType, Value
from gradview.kernels import casts

from .emit_util import grad_list
from .factories import device_arg, dtype_arg
from .gradients import Emitter
from .registry import formula, kernel, no_gradient, random, refuse, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, fresh, layout_of, make_tensor
from .static_info import cast_back, dtype_index, dtype_of, needs_grad, none_grads
from .tensor_layout import contiguous_strides, is_contiguous, preserve_strides

__all__ = ["save_self_dtype", "to_gradient"]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]

# Memory formats as ``memory_format=`` arguments carry them.
_CONTIGUOUS_FORMAT = 0


def _same_as(t: TensorType) -> TensorType:
    """The input's own type (the op returns the input, or an alias of it)."""
    return TensorType(t.scalar_type, t.sizes, t.strides, None, t.device)


def _like(self: TensorType, dtype: str | None, device: str | None, memory_format: object) -> TensorType:
    layout = layout_of(self)
    strides = None
    if layout is not None:
        if memory_format == _CONTIGUOUS_FORMAT:
            strides = contiguous_strides(layout[0])
        else:
            strides = preserve_strides(*layout)
    return make_tensor(dtype, self.sizes, strides, device)


def _converted(self: TensorType, dtype: str | None, device: str | None, memory_format: object,
               copy: object = False) -> TensorType:
    """A copy of ``self`` with another dtype/device, laid out like ``empty_like(preserve)``.

    Converting to the same dtype and device without ``copy=True`` returns ``self``.
    """
    if dtype == self.scalar_type and device == self.device and copy is False and memory_format is None:
        return _same_as(self)
    return _like(self, dtype, device, memory_format)


def _never_in_subgraphs(node: Node) -> bool:
    """No gradient flows through these: as in TorchScript, the slicer leaves them
    out of differentiable graphs; ``differentiate`` still copes when one requires grad."""
    return False


@formula("aten::detach", "aten::zeros_like", "aten::ones_like", supports=_never_in_subgraphs)
def _no_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    return grad_list(node)


# -- aten::detach (and the identity-like alias, lift_fresh) -------------------------------------
kernel("aten::detach")(casts.detach)
kernel("aten::alias")(casts.alias)


@shape_rule("aten::detach", "aten::alias", "aten::lift_fresh")
def _identity_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    return None if self is None else [_same_as(self)]


# -- aten::contiguous, clone -----------------------------------------------------------------------
kernel("aten::contiguous")(casts.contiguous)
kernel("aten::clone")(casts.clone)


@shape_rule("aten::contiguous")
def _contiguous_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    layout = layout_of(self)
    if layout is not None and is_contiguous(*layout):
        return [make_tensor(self.scalar_type, self.sizes, layout[1], self.device)]
    return [fresh(self.scalar_type, self.sizes, self.device)]


@shape_rule("aten::clone")
def _clone_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    return [_like(self, self.scalar_type, self.device, args.value(1, None))]


@formula("aten::contiguous", "aten::clone", "aten::alias")
def _copy_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """A copy (or alias, a view of the whole tensor) passes the gradient through unchanged."""
    return grad_list(node, grads[0])


# -- aten::to (every overload) ---------------------------------------------------------------------
kernel("aten::to.dtype")(casts.to_dtype_)
kernel("aten::to.other")(casts.to_other)
kernel("aten::to.device")(casts.to_device)
kernel("aten::to.prim_Device")(casts.to_prim_device)
kernel("aten::to.prim_dtype")(casts.to_prim_dtype)
kernel("aten::to.prim_other")(casts.to_prim_other)
kernel("aten::to.dtype_layout")(casts.to_dtype_layout)


@shape_rule("aten::to")
def _to_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    first = str(args.type(1)) if len(args) > 1 else "bool"
    dtype, device = self.scalar_type, self.device
    if len(args) == 8:
        # to.dtype_layout(self, dtype?, layout?, device?, pin_memory?, non_blocking, copy, memory_format)
        dtype, device = dtype_arg(args, 1, dtype), device_arg(args, 3, device)
        copy_index, format_index = 6, 7
    elif first == "Device" or (first == "NoneType" and len(args) == 5):
        # to.device(self, device, dtype, non_blocking, copy, memory_format) or
        # to.prim_Device(self, device?, dtype?, non_blocking, copy)
        device = device_arg(args, 1, device)
        dtype = dtype_arg(args, 2, dtype)
        copy_index, format_index = 4, 5
    elif args.tensor(1) is not None:  # to.other
        other = args.tensor(1)
        dtype, device = other.scalar_type, other.device  # type: ignore[union-attr]
        copy_index, format_index = 3, 4
    elif first == "bool":  # to.prim_other(self, non_blocking, copy): no memory_format
        copy_index, format_index = 2, len(args)
    else:  # to.dtype / to.prim_dtype
        dtype = dtype_arg(args, 1, dtype)
        copy_index, format_index = 3, 4
    copy = args.value(copy_index, False)
    memory_format = args.value(format_index, None)
    return [_converted(self, dtype, device, memory_format, copy)]


def save_self_dtype(emit: Emitter, node: Node) -> Saved:
    """The input's dtype, unless the types say the result has it already."""
    self_ = node.inputs()[0]
    if not needs_grad(self_):
        return {}
    known_in, known_out = dtype_index(self_), dtype_index(node.outputs()[0])
    if known_in is not None and known_in == known_out:
        return {"self_dtype": None}  # type: ignore[dict-item]
    return {"self_dtype": emit.const(known_in) if known_in is not None else dtype_of(emit, self_)}


@formula(
    "aten::to.dtype", "aten::to.device", "aten::to.other", "aten::to.prim_Device",
    "aten::to.prim_dtype", "aten::to.prim_other", "aten::to.dtype_layout",
    forward=save_self_dtype,
)
def to_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The gradient goes back in the input's dtype (a no-op when the cast changed nothing)."""
    if not saved:
        return none_grads(node)
    return none_grads(node, cast_back(emit, grads[0], saved["self_dtype"]))


# -- aten::type_as ---------------------------------------------------------------------------------
kernel("aten::type_as")(casts.type_as)


@shape_rule("aten::type_as")
def _type_as_shapes(args: NodeArgs) -> RuleResult:
    self, other = args.tensor(0), args.tensor(1)
    if self is None or other is None:
        return None
    # self.to(other.options()): other's dtype and device
    return [_converted(self, other.scalar_type, other.device or self.device, None)]


@formula("aten::type_as")
def _type_as_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    """The gradient converted back to the input's dtype."""
    return [emit.op("aten::type_as", grads[0], node.inputs()[0]), None]


# -- aten::zeros_like, ones_like, empty_like, full_like, rand_like, randn_like --------------------------
kernel("aten::zeros_like", "aten::empty_like")(casts.zeros_like)
kernel("aten::ones_like")(casts.ones_like)
kernel("aten::full_like")(casts.full_like)
# rand_like and randn_like draw from xp.random (never PyTorch's generator: values differ).
kernel("aten::rand_like")(casts.rand_like)
kernel("aten::randn_like")(casts.randn_like)
random("aten::rand_like", "aten::randn_like")


@shape_rule("aten::zeros_like", "aten::ones_like", "aten::empty_like", "aten::rand_like",
            "aten::randn_like", "aten::full_like")
def _factory_like_shapes(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    shift = 1 if args.node.kind() == "aten::full_like" else 0
    dtype = dtype_arg(args, 1 + shift, self.scalar_type)
    device = device_arg(args, 3 + shift, self.device)
    return [_like(self, dtype, device, args.value(5 + shift, None))]


# new_empty_strided: AOTAutograd's buffer for a functional slice write (its values are overwritten).
kernel("aten::new_empty_strided")(casts.new_empty_strided)


@shape_rule("aten::new_empty_strided")
def _new_empty_strided_shapes(args: NodeArgs) -> RuleResult:
    """new_empty_strided(self, size, stride, *, dtype?, layout?, device?, pin_memory?)."""
    self = args.tensor(0)
    if self is None:
        return None
    sizes, strides = args.int_list(1), args.int_list(2)
    dtype = dtype_arg(args, 3, self.scalar_type)
    device = device_arg(args, 5, self.device)
    known = strides is not None and sizes is not None and len(sizes) == len(strides)
    if not known or None in strides:  # type: ignore[operator]
        return [make_tensor(dtype, None if sizes is None else tuple(sizes), None, device)]
    return [make_tensor(dtype, tuple(sizes), tuple(strides), device)]  # type: ignore[arg-type]


no_gradient(
    "aten::new_empty_strided", "aten::empty_like", "aten::rand_like", "aten::randn_like", "aten::full_like",
    reason="its values do not depend on the input's values (only its shape and dtype), "
    "so PyTorch's result does not require grad",
)


# -- aten::_to_copy, copy: the functional forms AOTAutograd's graphs use ------------------------------
kernel("aten::_to_copy")(casts.to_copy)
kernel("aten::copy")(casts.copy)
formula("aten::_to_copy", forward=save_self_dtype)(to_gradient)


@shape_rule("aten::_to_copy")
def _to_copy_shapes(args: NodeArgs) -> RuleResult:
    """_to_copy(self, *, dtype?, layout?, device?, pin_memory?, non_blocking, memory_format?):
    always a new tensor, laid out like ``empty_like(preserve_format)``."""
    self = args.tensor(0)
    if self is None:
        return None
    dtype = dtype_arg(args, 1, self.scalar_type)
    device = device_arg(args, 3, self.device)
    return [_like(self, dtype, device, args.value(6, None))]


@shape_rule("aten::copy")
def _functional_copy_shapes(args: NodeArgs) -> RuleResult:
    """copy(self, src, non_blocking): self's sizes, strides, dtype and device (None for
    ``copy.t``, the list copy, whose type is its schema's)."""
    self = args.tensor(0)
    return None if self is None else [_same_as(self)]


no_gradient(
    "aten::copy",
    reason="PyTorch implements no derivative for the functional copy (its autograd raises "
    "'derivative for aten::copy is not implemented'): AOTAutograd writes it only in graphs it "
    "has already differentiated",
)


# Conversions to what gradview's arrays cannot hold: NumPy and CuPy have no
# ComplexHalf, and gradview's tensors are dense (strided) arrays.
refuse("aten::chalf", reason="its result is ComplexHalf, which NumPy cannot hold")
refuse(
    "aten::to_sparse", "aten::to_sparse_csr", "aten::to_sparse_csc", "aten::to_sparse_bsr",
    "aten::to_sparse_bsc", "aten::_to_sparse",
    reason="its result is a sparse tensor, and gradview's tensors are dense",
)

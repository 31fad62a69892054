"""Containers: TorchScript's lists, tuples and strings, and the prims on plain values.

These ops move Python values around (``len``, indexing, slicing, ``+``, the
list methods ``append``/``pop``..., ``format``, ``prim::Print``, an array's
``device``/``dtype``/``shape``, ``NumToTensor``). Their kernels are in
``kernels/kernels.py`` and ``kernels/kernels.py`` and take and return plain Python
values (``prim::TupleConstruct``/``TupleUnpack``/``ListConstruct`` compile to
plain Python in the interpreter, so they need no kernel). Most return no
tensor, so they need no shape rule; a list element read by ``__getitem__``
(or ``select.t``) has the element's type.

**The gradient of a list is a list.** A ``Tensor[]`` value's gradient is a
``Tensor[]`` value holding one gradient per element, so lists flow through
reverse mode like tensors do:

* ``prim::ListConstruct(a, b, ...)``: the list's gradient is unpacked
  (``prim::ListUnpack``) into one gradient per element.
* ``prim::ListUnpack(l)``: the elements' gradients are packed back
  (``prim::ListConstruct``) into the list's gradient. An element nobody used
  has an undefined gradient (``AutogradZero``, None at run time), so such a
  list may hold Nones.
* ``prim::TupleConstruct``/``prim::TupleUnpack``: the same with tuples.

The ops that join tensors into one or split one into a list (``cat``,
``split``...) are in :mod:`gradview.ops.concat_split`.
"""

from __future__ import annotations

from gradview.ir import ListType, Node, TensorType, TupleType, Value
from gradview.kernels import containers as kernels

from .emit_util import grad_list
from .registry import Emitter, formula, kernel, shape_rule
from .shape_toolkit import NodeArgs, RuleResult

__all__ = ["is_undefined", "list_item"]

Saved = dict[str, Value]
Grads = list[Value]
Result = list[Value | None]


def is_undefined(grad: Value) -> bool:
    """Is ``grad`` the AutogradZero of an output that received no gradient?"""
    return grad.node.kind() == "prim::AutogradZero"


def _unpack(emit: Emitter, kind: str, packed: Value, count: int) -> list[Value]:
    if count == 0:
        return []
    unpacked = emit.op(kind, packed, types=[TensorType()] * count)
    return list(unpacked) if isinstance(unpacked, tuple) else [unpacked]


# -- prim::ListConstruct, ListUnpack, TupleConstruct, TupleUnpack ----------------------------
def _holds_tensors(node: Node) -> bool:
    """Only lists and tuples of tensors carry gradients (a list of sizes does not)."""
    return node.output().type().contains_tensor()


@formula("prim::ListConstruct", supports=_holds_tensors)
def list_construct(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if is_undefined(grads[0]):
        return grad_list(node)
    return list(_unpack(emit, "prim::ListUnpack", grads[0], len(node.inputs())))


@formula("prim::TupleConstruct", supports=_holds_tensors)
def tuple_construct(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if is_undefined(grads[0]):
        return grad_list(node)
    return list(_unpack(emit, "prim::TupleUnpack", grads[0], len(node.inputs())))


@formula("prim::ListUnpack")
def list_unpack(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if all(is_undefined(g) for g in grads):
        return [None]
    return [emit.op("prim::ListConstruct", *grads, types=[ListType(TensorType())])]


@formula("prim::TupleUnpack")
def tuple_unpack(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> Result:
    if all(is_undefined(g) for g in grads):
        return [None]
    packed_type = TupleType(tuple(TensorType() for _ in grads))
    return [emit.op("prim::TupleConstruct", *grads, types=[packed_type])]


# -- lists and strings: len, indexing, slicing, +, *, in, split, join, sum -------------------
kernel("aten::len.t", "aten::len.any", "aten::len.str")(kernels.len_)
kernel("aten::len.Tensor")(kernels.len_tensor)
kernel("aten::__getitem__.t", "aten::select.t")(kernels.getitem)
kernel("aten::__getitem__.str")(kernels.getitem_str)
kernel("aten::__contains__.int_list", "aten::__contains__.str_list", "aten::__contains__.float_list")(
    kernels.contains
)
kernel("aten::list.t")(kernels.list_)
kernel("aten::list")(kernels.list_str)
kernel("aten::add.t")(kernels.add_list)
kernel("aten::add.str")(kernels.add_str)
kernel("aten::mul.left_t")(kernels.mul_list)
kernel("aten::mul.right_")(kernels.mul_list_right)
kernel("aten::slice.t")(kernels.slice_list)
kernel("aten::slice.str")(kernels.slice_str)
kernel("aten::split.str")(kernels.split_str)
kernel("aten::join")(kernels.join)
kernel("aten::sum.int")(kernels.sum_int)
kernel("aten::sum.float")(kernels.sum_float)
kernel("aten::sum.bool")(kernels.sum_bool)


def list_item(args: NodeArgs) -> RuleResult:
    elements = args.elements(0)
    index = args.int_value(1)
    if elements is not None and index is not None and -len(elements) <= index < len(elements):
        return [elements[index]]
    elem = args.type(0).elem  # type: ignore[attr-defined]
    return [elem] if isinstance(elem, TensorType) else None


@shape_rule("aten::__getitem__")
def _getitem(args: NodeArgs) -> RuleResult:
    return list_item(args) if isinstance(args.type(0), ListType) else None


# -- scripted loops' range helpers -----------------------------------------------------------
kernel("aten::__range_length")(kernels.range_length)
kernel("aten::__derive_index")(kernels.derive_index)

# -- list methods (they mutate the list in place, as TorchScript's do) -----------------------
kernel("aten::append.t")(kernels.append)
kernel("aten::_set_item.t")(kernels.set_item)
kernel("aten::extend.t")(kernels.extend)
kernel("aten::insert.t")(kernels.insert)
kernel("aten::pop.t")(kernels.pop)
kernel("aten::clear.t")(kernels.clear)
kernel("aten::reverse.t")(kernels.reverse)
kernel("aten::copy.t")(kernels.copy)

# -- tuples ----------------------------------------------------------------------------------
kernel("prim::TupleSlice")(kernels.tuple_slice)

# -- printing and formatting -----------------------------------------------------------------
kernel("aten::format")(kernels.format_)
kernel("aten::str")(kernels.str_)
kernel("prim::Print")(kernels.print_)

# -- prims on values: an array's facts, numbers to and from tensors, min/max/abs -------------
kernel("prim::device")(kernels.device)
kernel("prim::is_cuda")(kernels.is_cuda)
kernel("prim::dtype")(kernels.dtype)
kernel("prim::requires_grad")(kernels.requires_grad)
kernel("prim::shape")(kernels.shape)
kernel("prim::NumToTensor")(kernels.num_to_tensor)
kernel("prim::ImplicitTensorToNum")(kernels.implicit_tensor_to_num)
kernel("prim::Uninitialized")(kernels.uninitialized)
kernel("prim::min")(kernels.prim_min)
kernel("prim::max")(kernels.prim_max)
kernel("prim::abs")(kernels.abs_)

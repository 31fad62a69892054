"""CanonicalizeOps: write a few operators in the one form later passes expect.

Two rewrites, both from TorchScript's pass of the same name:

* **Scalar operands.** ``aten::add/sub`` (Tensor, Tensor, alpha) and
  ``aten::mul/div`` (Tensor, Tensor) whose second operand is a constant
  0-dim tensor (the tracer turns ``x * 2`` into a multiplication by the
  tensor ``2``) become the Scalar overloads with a plain number constant:
  ``aten::mul(%x, 2.5)``. Fusers and shape analysis handle that form best.
  Like TorchScript, this ignores a rare dtype difference: a 0-dim float64
  tensor can raise the result to float64 (an integer or 0-dim ``self``),
  where a plain number gives the default float dtype.
* **Constant chunks.** ``aten::chunk(x, chunks, dim)`` with constant
  ``chunks`` and ``dim`` whose list is only taken apart by
  ``prim::ListUnpack`` nodes (with ``chunks`` outputs each) becomes one
  ``prim::ConstantChunk[chunks=..., dim=...](x)`` with a tensor output per
  chunk, so no list is built at run time and the fuser can see each chunk.

The nodes replaced, and the constants that only they used, are deleted.
The executor runs it in runRequiredPasses, so every graph it runs is in
this form.

Before::

    %c : Double(requires_grad=0, device=cpu) = prim::Constant[value={2.5}]()
    %m : Tensor = aten::mul(%x, %c)
    %l : Tensor[] = aten::chunk(%m, %two, %zero)
    %a : Tensor, %b : Tensor = prim::ListUnpack(%l)

After::

    %1 : float = prim::Constant[value=2.5]()
    %m : Tensor = aten::mul(%x, %1)
    %a : Tensor, %b : Tensor = prim::ConstantChunk[chunks=2, dim=0](%m)
"""

from __future__ import annotations

from ..attributes import TensorConstant
from ..constants import constant_value
from ..graph import Graph
from ..node import Node, Value
from .rewrite_helpers import take_over

__all__ = ["canonicalize_ops"]

_TENSOR_TENSOR = (
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha) -> Tensor",
    "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha) -> Tensor",
    "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "aten::div.Tensor(Tensor self, Tensor other) -> Tensor",
)
_CHUNK = "aten::chunk(Tensor self, int chunks, int dim) -> Tensor[]"
_FLOATING = frozenset({"Float", "Double", "Half", "BFloat16"})
_INTEGRAL = frozenset({"Byte", "Char", "Short", "Int", "Long"})


def canonicalize_ops(graph: Graph) -> bool:
    """Apply both rewrites everywhere in ``graph``; True if any node was rewritten."""
    changed = False
    for node in list(graph.all_nodes()):
        # Rewrites only delete nodes without blocks, found later in this list.
        if not node.is_alive:
            continue
        if any(node.matches(schema) for schema in _TENSOR_TENSOR):
            changed |= _use_scalar_operand(graph, node)
        elif node.matches(_CHUNK):
            changed |= _use_constant_chunk(graph, node)
    return changed


def _scalar_of(value: Value) -> float | int | None:
    """The number held by a constant 0-dim float or integer tensor, else None."""
    tensor = constant_value(value)
    if not isinstance(tensor, TensorConstant) or tensor.sizes != () or tensor.values is None:
        return None
    if tensor.scalar_type in _FLOATING:
        return float(tensor.values[0])
    if tensor.scalar_type in _INTEGRAL:
        return int(tensor.values[0])
    return None  # bool and complex tensors have no matching Scalar overload


def _use_scalar_operand(graph: Graph, node: Node) -> bool:
    other = node.inputs()[1]
    number = _scalar_of(other)
    if number is None:
        return False
    with graph.insert_point(node):
        scalar = graph.insert_constant(number)
        inputs = node.inputs()
        inputs[1] = scalar
        replacement = graph.insert_node(graph.create(node.kind(), inputs))
    replacement.source_location = node.source_location
    take_over(node.output(), replacement.output())
    node.destroy()
    _drop_if_unused(other)
    return True


def _use_constant_chunk(graph: Graph, node: Node) -> bool:
    self_value, chunks_value, dim_value = node.inputs()
    chunks, dim = constant_value(chunks_value), constant_value(dim_value)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (chunks, dim)) or chunks < 1:
        return False
    unpacks = [use.user for use in node.output().uses]
    if not unpacks or any(
        user.kind() != "prim::ListUnpack" or len(user.outputs()) != chunks for user in unpacks
    ):
        return False
    with graph.insert_point(node):
        split = graph.insert_node(graph.create("prim::ConstantChunk", [self_value], chunks))
    split.i_("chunks", chunks).i_("dim", dim)
    split.source_location = node.source_location
    for unpack in unpacks:
        for old, new in zip(unpack.outputs(), split.outputs(), strict=True):
            take_over(old, new)
        unpack.destroy()
    node.destroy()
    _drop_if_unused(chunks_value)
    _drop_if_unused(dim_value)
    return True


def _drop_if_unused(value: Value) -> None:
    """Delete a constant whose last user this pass just replaced."""
    if value.node.kind() == "prim::Constant" and not value.has_uses():
        value.node.destroy()

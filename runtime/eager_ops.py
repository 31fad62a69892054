"""Nodes the executor runs with eager autograd, one at a time.

TorchScript differentiates only what sits inside a DifferentiableGraph; every
other node that produces a tensor requiring grad (in a loop body, in a group
too small to keep, or an op PyTorch's JIT does not differentiate symbolically,
such as ``sum``) is recorded by eager autograd as it runs. gradview does the
same with each such node's own gradient formula: the node is copied into a
graph of its own (its constant inputs with it), differentiated with every
formula gradview has, and run as a DifferentiableGraph of one node.

A node without a gradient is never run silently: its outputs are still
connected to autograd, through a backward node that raises one clear error
naming the node when a backward pass reaches it, as PyTorch's autograd does
for an op whose derivative is not implemented.

The eager :class:`~gradview.runtime.Tensor` records its operations the same
way (:func:`run_tensor_op`): ``x * y`` is ``aten::mul`` in a graph of its own,
differentiated with the op library's formula, so the eager API and the
executor share every kernel and gradient.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy

from gradview.autodiff import AutodiffMode, DifferentiationError, differentiate
from gradview.ir import TENSOR, Graph, ListType, Node, OptionalType, TensorType, Value, node_summary
from gradview.ir.types import TypeVar
from gradview.kernels.backend import BackendUnavailable, get_backend
from gradview.kernels.dtypes import dtype_name, result_dtype
from gradview.ops import formula_for, no_gradient_reason
from gradview.ops.inplace import READS_SELF

from .autograd.function import FunctionNode, attach
from .autograd.grad_mode import is_grad_enabled
from .differentiable_graph_op import DifferentiableGraphOp, TensorRegistry, arrays_not_scalars
from .tensor import Tensor, array_module

__all__ = [
    "EagerNodeOp", "InplaceNodeOp", "NotDifferentiableError", "PlainNodeOp", "RefusingNodeOp", "eager_op_for",
    "inplace_op_for", "run_tensor_op", "singleton_graph",
]


class NotDifferentiableError(RuntimeError):
    """A backward pass reached a node gradview has no gradient for."""


def singleton_graph(node: Node) -> tuple[Graph, list[int]]:
    """A graph holding just ``node`` (its constant inputs copied in), and the
    positions of the node's inputs it takes at run time (the non-constant
    ones; an input repeated in the node, as in ``x * x``, appears once)."""
    graph = Graph()
    mapping: dict[Value, Value] = {}
    positions: list[int] = []
    for index, value in enumerate(node.inputs()):
        if value.node.kind() == "prim::Constant":
            clone = graph.create_clone(value.node, lambda v: v)
            graph.append_node(clone)
            mapping[value] = clone.output()
        elif value not in mapping:
            mapping[value] = graph.add_input(type_=value.type())
            positions.append(index)
    clone = graph.create_clone(node, mapping.__getitem__)
    graph.append_node(clone)
    for output in clone.outputs():
        graph.register_output(output)
    return graph, positions


def _missing_gradient(node: Node) -> str | None:
    """Why the node has no gradient formula (declared or absent), or None."""
    reason = no_gradient_reason(node)
    if reason is not None or formula_for(node) is not None:
        return reason
    schema = node.maybe_schema()
    overload = schema.qualified_name if schema is not None else node.kind()
    return f"gradview has no gradient formula for {overload}"


def passes_values_through(node: Node) -> bool:
    """A generic container op (``__getitem__.t``, ``append.t``, ``list.t``: types
    ``t`` and ``t[]``) without a formula: it only moves values, whose tensors keep
    their autograd history by identity, so it runs as it is."""
    schema = node.maybe_schema()
    if schema is None or formula_for(node) is not None:
        return False
    return any(_has_type_var(argument.type) for argument in schema.arguments)


def _has_type_var(type_: Any) -> bool:
    if isinstance(type_, TypeVar):
        return True
    if isinstance(type_, ListType | OptionalType):
        return _has_type_var(type_.elem)
    return False


def eager_op_for(node: Node, backend: str, inlining: bool = True) -> EagerNodeOp | RefusingNodeOp:
    """The op that runs ``node`` with eager autograd (differentiated with every
    formula gradview has), or refuses its backward. ``inlining`` is the
    executor's autodiff-subgraph inlining switch, handed to the backward executor."""
    reason = _missing_gradient(node)
    if reason is None:
        graph, positions = singleton_graph(node)
        try:
            gradient = differentiate(graph, mode=AutodiffMode.EXTENDED)
        except DifferentiationError as exc:
            reason = str(exc)
        else:
            op = DifferentiableGraphOp(
                gradient, backend, name=f"`{node_summary(node)}`", autodiff_subgraph_inlining=inlining
            )
            return EagerNodeOp(op, positions)
    return RefusingNodeOp(node, reason, backend)


class _ThroughGraphOp:
    """Hands the run's tensor registry to the DifferentiableGraphOp ``self.op``."""

    op: DifferentiableGraphOp

    @property
    def registry(self) -> TensorRegistry | None:
        return self.op.registry

    @registry.setter
    def registry(self, value: TensorRegistry | None) -> None:
        self.op.registry = value


class EagerNodeOp(_ThroughGraphOp):
    """Runs one node with autograd, through a DifferentiableGraphOp of its singleton graph."""

    def __init__(self, op: DifferentiableGraphOp, positions: list[int]) -> None:
        self.op = op
        self.positions = positions

    def __call__(self, *inputs: Any) -> Sequence[Any]:
        return self.op(*[inputs[i] for i in self.positions])


class InplaceNodeOp:
    """Runs an in-place node (``relu_``): before it writes, every backward node
    that saved the memory it overwrites learns so, and raises if it runs."""

    def __init__(self, node: Node, inner: Any, written: list[int]) -> None:
        self.inner = inner
        self.written = written
        self.writer = f"`{node_summary(node)}`"
        self._registry: TensorRegistry | None = None

    @property
    def registry(self) -> TensorRegistry | None:
        return self._registry

    @registry.setter
    def registry(self, value: TensorRegistry | None) -> None:
        self._registry = value
        if hasattr(self.inner, "registry"):
            self.inner.registry = value

    def __call__(self, *inputs: Any) -> Sequence[Any]:
        registry = self._registry
        if registry is not None:
            for index in self.written:
                registry.written(inputs[index], self.writer)
        return self.inner(*inputs)


def inplace_op_for(
    node: Node, backend: str, with_autograd: bool, inlining: bool = True
) -> InplaceNodeOp | None:
    """The op for an in-place node, or None when the node writes nothing."""
    schema = node.maybe_schema()
    if schema is None or not schema.is_mutable:
        return None
    # Tensor writes only: list mutation (``append``) moves values and writes no tensor.
    written = [
        i for i, arg in enumerate(schema.arguments)
        if arg.is_write and i < len(node.inputs()) and isinstance(node.inputs()[i].type(), TensorType)
    ]
    if not written:
        return None
    inner: Any
    if not with_autograd:
        inner = PlainNodeOp(node, backend)
    elif schema.qualified_name in READS_SELF and written == [0]:
        inner = _OldSelfOp(node, backend, inlining)
    else:
        inner = eager_op_for(node, backend, inlining)
    return InplaceNodeOp(node, inner, written)


class _OldSelfOp(_ThroughGraphOp):
    """An in-place op whose gradient reads ``self``'s value from before the write
    (``x.mul_(y)``: the gradient of y is the old x). PyTorch's autograd keeps a
    copy of that value; so does this op: it runs the out-of-place twin
    (``mul``) with autograd on a private copy of ``self``, then writes the
    result into ``self``'s memory, which then stands for the result."""

    def __init__(self, node: Node, backend: str, inlining: bool = True) -> None:
        graph, self.positions = singleton_graph(node)
        inner = next(n for n in graph.nodes() if n.kind() == node.kind())
        twin = graph.create(node.kind().rstrip("_"), list(inner.inputs()), len(inner.outputs()))
        twin.output().set_type(inner.output().type())
        twin.insert_before(inner)
        inner.output().replace_all_uses_with(twin.output())
        inner.destroy()
        gradient = differentiate(graph, mode=AutodiffMode.EXTENDED)
        self.op = DifferentiableGraphOp(
            gradient, backend, name=f"`{node_summary(node)}`", autodiff_subgraph_inlining=inlining
        )

    def __call__(self, *inputs: Any) -> Sequence[Any]:
        registry = self.op.registry
        self_array = inputs[0]
        old_self = self_array.copy()
        if registry is not None:
            tensor = registry.tensor_of(self_array)
            if tensor is not None:
                registry.alias(old_self, tensor)
        args = [old_self if i == 0 else inputs[i] for i in self.positions]
        (result,) = self.op(*args)
        self_array[...] = result
        if registry is not None:
            produced = registry.tensor_of(result)
            if produced is not None:
                produced.data = self_array  # the written memory now holds the result
                registry.add(produced)
        return [self_array]


class PlainNodeOp:
    """Runs one node through its singleton graph, with no autograd."""

    def __init__(self, node: Node, backend: str) -> None:
        from .interpreter import compile_graph  # the interpreter imports the executor's ops

        graph, self.positions = singleton_graph(node)
        self.forward = compile_graph(graph, backend, check_inputs=False)

    def __call__(self, *inputs: Any) -> Sequence[Any]:
        return self.forward.call_on_device(*[inputs[i] for i in self.positions])


class RefusingNodeOp(PlainNodeOp):
    """Runs one node that has no gradient; its tensor outputs are connected to
    autograd through a backward node that raises NotDifferentiableError."""

    def __init__(self, node: Node, reason: str, backend: str) -> None:
        super().__init__(node, backend)
        self.message = f"cannot differentiate `{node_summary(node)}`: {reason}"
        self.registry: TensorRegistry | None = None

    def __call__(self, *inputs: Any) -> Sequence[Any]:
        args = [inputs[i] for i in self.positions]
        outputs = arrays_not_scalars(self.forward.call_on_device(*args))
        registry = self.registry
        if registry is None or not is_grad_enabled():
            return outputs
        # Tensors inside lists count too (a backward helper's list of gradients).
        edges = [registry.tensor_of(a) for a in _arrays_in(args)]
        edges = [t for t in edges if t is not None and t.requires_grad]
        if not edges:
            return outputs
        message = self.message

        def backward_fn(_grads: list[Any]) -> list[Any]:
            raise NotDifferentiableError(message)

        # Only floating-point results can require grad (as in PyTorch).
        results = _arrays_in(outputs)
        out_tensors = [Tensor(a) if getattr(a.dtype, "kind", "") in "fc" else None for a in results]
        if not any(t is not None for t in out_tensors):
            return outputs
        node = FunctionNode("NotDifferentiableBackward", backward_fn, edges, saves_state=False)
        attach(node, out_tensors)
        for tensor in out_tensors:
            if tensor is not None:
                registry.add(tensor)
        return outputs


def _arrays_in(values: Sequence[Any]) -> list[Any]:
    """The arrays among ``values``, those inside lists and tuples included, in order."""
    found: list[Any] = []
    for value in values:
        if isinstance(value, list | tuple):
            found.extend(_arrays_in(value))
        elif hasattr(value, "shape") and hasattr(value, "dtype"):
            found.append(value)
    return found


# -- the eager Tensor's operations (runtime/tensor.py) ------------------------------------------------
# ``x * y`` on Tensors that require grad runs ``aten::mul`` as a one-node graph
# differentiated with the op library's formula, the way the executor runs a node
# outside every DifferentiableGraph: the eager API has no gradient rule of its own.
# One plan per (op, constants, operand dtypes, shapes, which operands require grad).
_TENSOR_PLANS: dict[tuple[Any, ...], tuple[DifferentiableGraphOp, bool]] = {}
_MAX_PLANS = 4096


def run_tensor_op(
    name: str, kind: str, operands: Sequence[Any], arrays: Sequence[Any], constants: Sequence[Any] = (),
    *, as_list: bool = False,
) -> Tensor:
    """``kind`` on ``operands`` (Tensors, arrays, Python numbers; ``arrays`` their values on the
    op's device) then ``constants``, recorded by autograd as the backward node ``name``
    (PyTorch's: ``MulBackward0``) with the op library's gradient formula. ``as_list``: the
    operands are one ``Tensor[]`` argument. A Python number becomes a 0-d operand of the
    result's dtype (what PyTorch's wrapped number computes in)."""
    try:
        key = (
            kind, as_list, _hashable(constants) if constants else (),
            *[(a.dtype, a.shape, type(a), type(o) is Tensor and o._requires_grad)
              for o, a in zip(operands, arrays, strict=True)],
        )
    except AttributeError:  # a Python number: a wrapped 0-d operand
        odd = [type(a).__name__ for a in arrays if not hasattr(a, "shape") and not isinstance(a, numbers.Number)]
        if odd:
            raise TypeError(f"{kind} takes tensors and numbers, not {odd[0]}") from None
        dtype = result_dtype(*arrays)
        xp = array_module(next(a for a in arrays if hasattr(a, "shape")))
        wrapped = [a if hasattr(a, "shape") else xp.asarray(a, dtype=dtype) for a in arrays]
        return run_tensor_op(name, kind, operands, wrapped, constants, as_list=as_list)
    plan = _TENSOR_PLANS.get(key)
    if plan is None:
        if len(_TENSOR_PLANS) >= _MAX_PLANS:
            _TENSOR_PLANS.clear()
        needs = [isinstance(o, Tensor) and o.requires_grad for o in operands]
        plan = _TENSOR_PLANS[key] = _tensor_plan(kind, arrays, constants, needs, as_list)
    op, saves_state = plan
    # The plan's op keeps one registry: filled with the operands for the call, emptied after
    # (a Tensor's array stands for it: a host number moved to the device keeps its Tensor).
    registry = op.registry
    assert registry is not None
    by_id = registry._by_id
    for operand, array in zip(operands, arrays, strict=True):
        if isinstance(operand, Tensor):
            by_id[id(array)] = (operand, array)
    try:
        (array,) = op(*arrays)
        found = by_id.get(id(array))
    finally:
        by_id.clear()
    if found is None or found[1] is not array:
        return Tensor(array)
    out = found[0]
    node = out._grad_fn
    assert node is not None
    node.name = name
    node.saves_state = saves_state
    return out


def _backend_of(xp: Any) -> str:
    """The name of the backend whose array module is ``xp`` (the arrays' device)."""
    if xp is numpy:
        return "numpy"
    for name in ("cupy", "marker"):
        try:
            if get_backend(name).xp is xp:
                return name
        except BackendUnavailable:
            continue
    raise RuntimeError(f"no gradview backend runs arrays of {getattr(xp, '__name__', xp)}")


def _hashable(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return value


def _tensor_plan(
    kind: str, arrays: Sequence[Any], constants: Sequence[Any], needs: Sequence[bool], as_list: bool
) -> tuple[DifferentiableGraphOp, bool]:
    """The differentiated one-node graph of ``kind``, and whether its backward keeps
    tensors (PyTorch lets a backward node that keeps none run twice)."""
    graph = Graph()
    inputs = [
        graph.add_input(type_=TensorType(
            dtype_name(a.dtype), tuple(int(s) for s in a.shape), None, need,
            "cpu" if array_module(a) is numpy else "cuda:0",
        ))
        for a, need in zip(arrays, needs, strict=True)
    ]
    tensors: list[Any] = inputs
    if as_list:
        tensors = [graph.insert("prim::ListConstruct", inputs, output_types=[ListType(TENSOR)])]
    graph.insert(kind, [*tensors, *constants])
    for node in list(graph.nodes()):
        if node.kind() == kind:
            graph.register_output(node.output())
    gradient = differentiate(graph, mode=AutodiffMode.EXTENDED)
    op = DifferentiableGraphOp(gradient, _backend_of(array_module(arrays[0])), name=f"`{kind}`")
    op.registry = TensorRegistry(xp=op.xp)
    f = gradient.f
    captured = [f.inputs()[i] for i in gradient.df_input_captured_inputs]
    captured += [f.outputs()[i] for i in gradient.df_input_captured_outputs]
    saves_state = any(isinstance(v.type(), TensorType | ListType) for v in captured)
    return op, saves_state

"""The backward engine: runs the graph of ``grad_fn`` nodes in dependency order.

No recursion anywhere (graphs of tens of thousands of nodes are fine): the
graph is discovered with an explicit stack, each node's incoming edges are
counted, and nodes run in Kahn order, so a node runs once every gradient
flowing into it has been summed into its input buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy

from .function import AccumulateGrad, Node, accumulate_grad, gradient_edge, tensor_class
from .grad_mode import set_grad_enabled

__all__ = ["run_backward", "topological_order"]


def topological_order(roots: Sequence[Node]) -> list[Node]:
    """Every node reachable from ``roots``, each before all the nodes it feeds."""
    # One dict does both jobs: a node is in it once discovered, and its value
    # counts the edges into it found so far.
    deps: dict[Node, int] = {}
    stack: list[Node] = []
    for root in roots:
        if root not in deps:
            deps[root] = 0
            stack.append(root)
    while stack:
        for child, _ in stack.pop().next_edges:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                stack.append(child)
    ready = [node for node, count in deps.items() if count == 0]
    order: list[Node] = []
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_edges:
            if child is None:
                continue
            count = deps[child] - 1
            deps[child] = count
            if count == 0:
                ready.append(child)
    return order


def _expandable(shape: tuple[int, ...], desired: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``desired`` (so ``desired`` sums back down to it)."""
    if len(shape) > len(desired):
        return False
    for size, target in zip(reversed(shape), reversed(desired), strict=False):
        if size != target and size != 1:
            return False
    return True


def _validate(node: Node, index: int, grad: Any) -> Any:
    meta = node.input_meta[index] if index < len(node.input_meta) else None
    if meta is None:
        return grad
    shape, dtype = meta
    got = tuple(grad.shape)
    if got != shape:
        if not _expandable(shape, got):
            raise RuntimeError(
                f"Function {node.name} returned an invalid gradient at index {index} - got "
                f"{list(got)} but expected shape compatible with {list(shape)}"
            )
        grad = grad.sum_to_size(shape)
    if grad.dtype != dtype:
        grad = grad.to(dtype)
    return grad


def _device_name(xp: Any) -> str:
    return "cpu" if xp is numpy else "cuda:0"


def _root_on_device(index: int, tensor: Any, grad: Any) -> Any:
    """A root's gradient on another device than its output, as PyTorch's engine takes
    it (validate_outputs): a 0-d one (a number) is copied over, any other is refused."""
    if grad.data.ndim == 0:
        return tensor_class()(tensor.xp.asarray(grad.item(), dtype=grad.dtype))
    raise RuntimeError(
        f"invalid gradient at index {index} - expected device {_device_name(tensor.xp)} "
        f"but got {_device_name(grad.xp)}"
    )


def run_backward(
    roots: Sequence[tuple[Any, Any]],
    *,
    keep_graph: bool,
    create_graph: bool,
    inputs: Sequence[Any] | None = None,
    allow_unused: bool = False,
    accumulate: bool = True,
) -> tuple[Any, ...] | None:
    """Run backward from ``(tensor, gradient)`` roots.

    ``accumulate=True`` (``backward``): gradients are added into ``.grad`` of the
    leaves (only of ``inputs`` when given; non-leaf ``inputs`` get ``.grad`` too).
    ``accumulate=False`` (``grad``): returns the gradients of ``inputs``, one
    per input, None for an unused input when ``allow_unused``.
    """
    root_edges = []
    for index, (tensor, grad) in enumerate(roots):
        if not tensor.requires_grad:
            raise RuntimeError(
                f"element {index} of tensors does not require grad and does not have a grad_fn"
            )
        if grad is not None and grad.xp is not tensor.xp:
            grad = _root_on_device(index, tensor, grad)
        root_edges.append((gradient_edge(tensor), grad))

    # Where gradients are captured: node -> [(its output_nr, index into inputs)].
    captures: dict[Node, list[tuple[int, int]]] = {}
    targets: set[Node] = set()  # accumulators that backward(inputs=...) must run
    for index, tensor in enumerate(inputs or ()):
        if not tensor.requires_grad:
            raise RuntimeError(
                "can't retain_grad on Tensor that has requires_grad=False"
                if accumulate
                else "One of the differentiated Tensors does not require grad"
            )
        node, nr = gradient_edge(tensor)
        if accumulate and isinstance(node, AccumulateGrad):
            targets.add(node)
        else:
            captures.setdefault(node, []).append((nr, index))

    order = topological_order([edge[0] for edge, _ in root_edges])
    if inputs is None:
        runs = dict.fromkeys(order, True)
        wanted = runs
    else:
        runs = {}
        wanted = {}
        for node in reversed(order):
            run = node in targets or any(
                child is not None and wanted[child] for child, _ in node.next_edges
            )
            runs[node] = run
            wanted[node] = run or node in captures

    captured: list[Any] = [None] * len(inputs or ())
    buffers: dict[Node, list[Any]] = {}
    with set_grad_enabled(create_graph):
        for (node, nr), grad in root_edges:
            buffer = buffers.setdefault(node, [None] * node.num_outputs)
            buffer[nr] = grad if buffer[nr] is None else buffer[nr] + grad
        for node in order:
            buffer = buffers.pop(node, None)
            if buffer is None:
                continue
            if captures:
                for nr, index in captures.get(node, ()):
                    captured[index] = buffer[nr]
            if not runs[node]:
                continue
            if type(node) is AccumulateGrad:  # a leaf's sink (most nodes of a training step)
                if buffer[0] is not None:
                    accumulate_grad(node.variable, buffer[0])
                continue
            for grad in buffer:
                if grad is not None:
                    break
            else:
                continue  # no gradient reached the node
            outputs = node.apply(buffer)
            if not keep_graph:
                node.release()
            metas = node.input_meta
            for index, ((child, nr), grad) in enumerate(
                zip(node.next_edges, outputs, strict=False)
            ):
                if child is None or grad is None or not wanted[child]:
                    continue
                meta = metas[index] if index < len(metas) else None
                if meta is not None:
                    data = grad._data
                    if data.shape != meta[0] or data.dtype != meta[1]:  # else nothing to check
                        grad = _validate(node, index, grad)
                child_buffer = buffers.get(child)
                if child_buffer is None:
                    child_buffer = buffers[child] = [None] * child.num_outputs
                child_buffer[nr] = grad if child_buffer[nr] is None else child_buffer[nr] + grad
        if accumulate:
            for index, tensor in enumerate(inputs or ()):
                if captured[index] is not None:
                    accumulate_grad(tensor, captured[index])
            return None
    for index, grad in enumerate(captured):
        if grad is not None:
            if grad._owns_data:
                grad._owns_data = False  # the caller holds it: no .grad may take its array
        elif not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {index} appears to not have been used in "
                "the graph. Set allow_unused=True if this is the desired behavior."
            )
    return tuple(captured)

"""Backward nodes of the tape: the hook that code producing tensors uses to record them.

Every tensor that requires grad and was computed (not a leaf) points at the
node that will compute its inputs' gradients: ``tensor.grad_fn``, with
``tensor.output_nr`` saying which of the node's outputs it is. A node's
``next_edges`` are ``(node, output_nr)`` pairs, one per forward input: the
input's own ``grad_fn``, an :class:`AccumulateGrad` for a leaf that requires
grad, or ``(None, 0)`` for an input that needs no gradient.

Recording an operation that works on raw arrays (what the executor does)::

    from gradview.runtime import Tensor
    from gradview.runtime.autograd.function import FunctionNode, attach

    def mul_forward(a: Tensor, b: Tensor) -> Tensor:
        x, y = a.data, b.data
        out = Tensor(x * y)

        def backward_fn(grad_outputs):      # one entry per output, None if no grad
            (g,) = grad_outputs
            return [g * y, g * x]           # one gradient (array or None) per input

        node = FunctionNode("MulBackward", backward_fn, [a, b])
        attach(node, [out])                 # sets out.grad_fn / output_nr / requires_grad
        return out

``backward_fn`` receives and returns arrays of the inputs' array module. The
engine sums a gradient down to its input's shape when it was broadcast, casts
it to the input's dtype, and rejects any other shape. After a backward pass
without ``retain_graph`` the engine calls :meth:`FunctionNode.release`, which
drops ``backward_fn`` (and the arrays its closure saved); running the node again
raises PyTorch's "Trying to backward through the graph a second time" error.
Pass ``saves_state=False`` for a node that saved nothing (PyTorch lets such a
node run twice). With ``differentiable=True`` ``backward_fn`` receives and
returns :class:`~gradview.runtime.Tensor` objects instead, and gradients it
computes with eager tensor operations are themselves differentiable
(``create_graph=True``); the DifferentiableGraph nodes (runtime/differentiable_graph_op.py),
which also record the eager Tensor's operations, use this form. Gradients
from a non-differentiable ``backward_fn`` are constants in a ``create_graph``
pass.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from .grad_mode import is_grad_enabled

__all__ = [
    "SECOND_BACKWARD_MESSAGE",
    "AccumulateGrad",
    "FunctionNode",
    "Node",
    "attach",
    "gradient_edge",
    "owned_tensor",
    "take_owned",
]

SECOND_BACKWARD_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)

Edge = tuple["Node | None", int]


@functools.cache
def tensor_class() -> type:
    from ..tensor import Tensor  # tensor.py imports this module

    return Tensor


def _is_tensor(value: Any) -> bool:
    return isinstance(value, tensor_class())


def gradient_edge(tensor: Any) -> Edge:
    """Where a gradient for ``tensor`` goes: its grad_fn, its accumulator, or nowhere."""
    if tensor.grad_fn is not None:
        return (tensor.grad_fn, tensor.output_nr)
    if tensor.requires_grad:
        return (AccumulateGrad.of(tensor), 0)
    return (None, 0)


class Node:
    """A backward function in the graph: gradients of its outputs -> of its inputs."""

    name: str = "Node"

    def __init__(self) -> None:
        self.next_edges: list[Edge] = []
        self.input_meta: list[tuple[tuple[int, ...], Any] | None] = []
        self.num_outputs = 1

    def apply(self, grads: list[Any]) -> list[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def release(self) -> None:
        """Free what the node saved for its backward; the default saves nothing."""

    @property
    def next_functions(self) -> tuple[Edge, ...]:
        """The next edges as a tuple, like PyTorch's ``grad_fn.next_functions``."""
        return tuple(self.next_edges)

    def __repr__(self) -> str:
        return f"<{self.name}>"


class AccumulateGrad(Node):
    """The sink for a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    name = "AccumulateGrad"

    def __init__(self, variable: Any) -> None:
        super().__init__()
        self.variable = variable

    @staticmethod
    def of(tensor: Any) -> AccumulateGrad:
        """The leaf's single accumulator (cached so every edge meets at one node)."""
        acc = tensor._grad_accumulator
        if acc is None:
            acc = AccumulateGrad(tensor)
            tensor._grad_accumulator = acc
        return acc

    def apply(self, grads: list[Any]) -> list[Any]:
        if grads and grads[0] is not None:
            accumulate_grad(self.variable, grads[0])
        return []


def owned_tensor(array: Any) -> Any:
    """A Tensor of ``array`` that nothing else references (a fresh result of a
    backward function): accumulating it into an empty ``.grad`` may keep the
    array instead of copying it, once (the flag is taken by the first taker)."""
    tensor = tensor_class()(array)
    tensor._owns_data = True
    return tensor


def take_owned(tensor: Any) -> bool:
    """Whether ``tensor``'s array was handed over (see owned_tensor); it is not any more."""
    if tensor._owns_data:
        tensor._owns_data = False
        return True
    return False


def accumulate_grad(variable: Any, grad: Any) -> None:
    """Add ``grad`` into ``variable.grad``; keeps the graph when grad mode is on (create_graph)."""
    Tensor = tensor_class()  # the class, looked up once

    if is_grad_enabled():  # create_graph: the accumulated gradient stays differentiable
        variable.grad = grad if variable.grad is None else variable.grad + grad
        return
    if variable.grad is None:
        data = grad._data
        # A gradient its producer handed over (see owned_tensor) becomes .grad
        # as it is, like PyTorch's AccumulateGrad stealing an unshared buffer
        # (the Tensor too: made by the producer, only the engine's buffer held it).
        if take_owned(grad):
            variable.grad = grad
        else:
            variable.grad = Tensor(data.copy() if hasattr(data, "copy") else data)
    elif (
        variable.grad.grad_fn is None
        and variable.grad.data.shape == grad.data.shape
        and (variable.grad.data.dtype == grad.data.dtype)
    ):
        variable.grad.data += grad.data  # in place, like PyTorch
    else:
        variable.grad = Tensor(variable.grad.data + grad.data)


class FunctionNode(Node):
    """A backward node built from a ``backward_fn``; see the module docstring.

    ``inputs`` are the forward inputs in order; entries that are not tensors
    (numbers, lists, None) get no edge, and ``backward_fn`` should return None
    in their place (anything it returns there is ignored).
    """

    def __init__(
        self,
        name: str,
        backward_fn: Callable[[list[Any]], Sequence[Any]],
        inputs: Sequence[Any],
        *,
        differentiable: bool = False,
        saves_state: bool = True,
    ) -> None:
        super().__init__()
        self.name = name
        self.backward_fn: Callable[[list[Any]], Sequence[Any]] | None = backward_fn
        self.differentiable = differentiable
        self.saves_state = saves_state
        self.released = False
        for value in inputs:
            if _is_tensor(value):
                self.next_edges.append(gradient_edge(value))
                self.input_meta.append((tuple(value.data.shape), value.data.dtype))
            else:
                self.next_edges.append((None, 0))
                self.input_meta.append(None)

    @classmethod
    def from_edges(
        cls,
        name: str,
        backward_fn: Callable[[list[Any]], Sequence[Any]],
        next_edges: list[Edge],
        input_meta: list[tuple[tuple[int, ...], Any] | None],
        *,
        differentiable: bool = False,
        saves_state: bool = True,
    ) -> FunctionNode:
        """A node whose caller worked out the edges and input metadata itself
        (one per forward input, as ``__init__`` makes them from the inputs)."""
        node = cls(name, backward_fn, (), differentiable=differentiable, saves_state=saves_state)
        node.next_edges = next_edges
        node.input_meta = input_meta
        return node

    @property
    def requires_grad(self) -> bool:
        """Whether any input needs a gradient (otherwise recording the node is pointless)."""
        return any(node is not None for node, _ in self.next_edges)

    def release(self) -> None:
        if self.saves_state:
            self.backward_fn = None
            self.released = True

    def apply(self, grads: list[Any]) -> list[Any]:
        if self.backward_fn is None:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        if self.differentiable:
            results = list(self.backward_fn(list(grads)))
        else:
            Tensor = tensor_class()

            arrays = [None if g is None else g.data for g in grads]
            results = [
                None if r is None else (r if isinstance(r, Tensor) else Tensor(r))
                for r in self.backward_fn(arrays)
            ]
        if len(results) != len(self.next_edges):
            raise RuntimeError(
                f"function {self.name} returned an incorrect number of gradients "
                f"(expected {len(self.next_edges)}, got {len(results)})"
            )
        return results


def attach(node: FunctionNode, outputs: Sequence[Any]) -> bool:
    """Make ``node`` the ``grad_fn`` of ``outputs`` (output ``i`` is the node's output ``i``).

    Does nothing and returns False when no input requires grad or grad mode is
    off (``no_grad``), so callers can always call it; returns True otherwise.
    """
    if not node.requires_grad or not is_grad_enabled():
        return False
    node.num_outputs = len(outputs)
    for index, out in enumerate(outputs):
        if out is None:
            continue
        out._grad_fn = node
        out._output_nr = index
        out._requires_grad = True
    return True

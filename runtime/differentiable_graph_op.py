"""DifferentiableGraphOp: run a DifferentiableGraph's forward graph and hook
its backward graph into autograd, as TorchScript's DifferentiableGraphOp does.

Running the node:

1. the inputs are detached (f runs on plain arrays, without autograd);
2. ``f`` runs; its outputs are the real outputs followed by captured temporaries;
3. if autograd is on and an input that ``df`` differentiates requires grad,
   a backward node is created whose next edges are those inputs
   (``df_output_vjps``), holding the captured values (``df_input_captured_inputs``
   from the inputs, ``df_input_captured_outputs`` from f's outputs); the
   outputs listed in ``df_input_vjps`` become its outputs;
4. on backward, ``df`` runs through its own GraphExecutor on the incoming
   gradients (None for undefined ones, which lets its executor specialize on
   AutogradZero) and the captures, and its tuple is unpacked into one gradient
   per edge; an undefined gradient for an edge that needs one becomes zeros
   (DifferentiableGraphBackward's produceOutput).

Autograd identity travels by array identity: the executor maps each input
array back to its Tensor, and each op registers the Tensors it creates, so a
DifferentiableGraph fed by another one is chained in the tape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gradview.autodiff import Gradient

from .autograd.function import FunctionNode, attach
from .autograd.grad_mode import is_grad_enabled
from .tensor import Tensor

__all__ = ["DifferentiableGraphOp", "TensorRegistry"]


class TensorRegistry:
    """Array identity -> the Tensor that holds it, for one run of a plan."""

    def __init__(self) -> None:
        self._by_id: dict[int, Tensor] = {}

    def add(self, tensor: Tensor) -> None:
        self._by_id[id(tensor.data)] = tensor

    def tensor_of(self, value: Any) -> Tensor | None:
        found = self._by_id.get(id(value))
        return found if found is not None and found.data is value else None


class DifferentiableGraphOp:
    """Callable the interpreter uses for one ``prim::DifferentiableGraph`` node."""

    def __init__(self, gradient: Gradient, backend: str = "numpy") -> None:
        from .executor import GraphExecutor  # noqa: PLC0415 - the executor builds these ops
        from .interpreter import compile_graph  # noqa: PLC0415

        assert gradient.df is not None
        self.gradient = gradient
        self.forward = compile_graph(gradient.f, backend, check_inputs=False)
        self.backward_executor = GraphExecutor(gradient.df, backend=backend)
        self.registry: TensorRegistry | None = None

    def __call__(self, *inputs: Any) -> Sequence[Any]:
        grad = self.gradient
        outputs = self.forward(*inputs)
        real = list(outputs[: grad.f_real_outputs])
        registry = self.registry
        if registry is None or not is_grad_enabled():
            return real
        edges = [registry.tensor_of(inputs[i]) if _is_array(inputs[i]) else None for i in grad.df_output_vjps]
        if not any(t is not None and t.requires_grad for t in edges):
            return real
        captured = [inputs[i] for i in grad.df_input_captured_inputs] + [
            outputs[i] for i in grad.df_input_captured_outputs
        ]
        edge_inputs = [t if t is not None else Tensor(inputs[i]) for t, i in zip(edges, grad.df_output_vjps, strict=True)]
        shapes = [getattr(inputs[i], "shape", None) for i in grad.df_output_vjps]
        dtypes = [getattr(inputs[i], "dtype", None) for i in grad.df_output_vjps]
        backward_executor = self.backward_executor

        def backward_fn(grad_outputs: list[Any]) -> list[Any]:
            (packed,) = backward_executor.run(list(grad_outputs) + captured, grad_enabled=False)
            results = list(packed) if isinstance(packed, tuple | list) else [packed]
            import numpy  # noqa: PLC0415 - zeros only when an edge needs a defined gradient

            return [
                r if r is not None or shape is None else numpy.zeros(shape, dtype=dtype)
                for r, shape, dtype in zip(results, shapes, dtypes, strict=True)
            ]

        node = FunctionNode("DifferentiableGraphBackward", backward_fn, edge_inputs)
        out_tensors: list[Tensor] = []
        for index in grad.df_input_vjps:
            value = outputs[index]
            tensor = Tensor(value) if _is_array(value) else Tensor(_placeholder(value))
            out_tensors.append(tensor)
        attach(node, out_tensors)
        for tensor, index in zip(out_tensors, grad.df_input_vjps, strict=True):
            if index < grad.f_real_outputs and _is_array(outputs[index]):
                registry.add(tensor)
        return real


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _placeholder(value: Any) -> Any:
    import numpy  # noqa: PLC0415

    return numpy.zeros(())

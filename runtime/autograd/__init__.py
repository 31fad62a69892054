"""gradview.runtime.autograd: reverse-mode differentiation of eager tensors.

Mirrors ``torch.autograd``: :func:`backward` adds gradients into the ``.grad``
of leaves, :func:`grad` returns them. Both accept one tensor or a sequence,
with the same defaults, validation and error messages as PyTorch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import function
from .engine import run_backward
from .function import AccumulateGrad, FunctionNode, Node, attach, tensor_class
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled

__all__ = [
    "AccumulateGrad",
    "FunctionNode",
    "Node",
    "attach",
    "backward",
    "enable_grad",
    "function",
    "grad",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
]


def _as_tuple(values: Any, length: int | None = None) -> tuple[Any, ...]:
    if values is None:
        return (None,) * (length or 0)
    if isinstance(values, tensor_class()):
        return (values,)
    return tuple(values)


def _make_grads(
    outputs: Sequence[Any], grads: Sequence[Any], is_grads_batched: bool
) -> tuple[Any, ...]:
    """Check given gradients against their outputs; make implicit ones for scalars."""
    tensor = tensor_class()
    new_grads = []
    for index, (out, grad) in enumerate(zip(outputs, grads, strict=False)):
        if isinstance(grad, tensor):
            out_shape = tuple(out.shape)
            grad_shape = tuple(grad.shape[1:]) if is_grads_batched else tuple(grad.shape)
            if out_shape != grad_shape:
                if is_grads_batched:
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each "
                        "grad_output as the batch dimension. The sizes of the remaining "
                        "dimensions are expected to match the shape of corresponding output, "
                        f"but a mismatch was detected: grad_output[{index}] has a shape of "
                        f"{grad_shape} and output[{index}] has a shape of {out_shape}. If you "
                        "only want some tensors in `grad_output` to be considered batched, "
                        "consider using vmap."
                    )
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{index}] has a shape of {grad_shape} and "
                    f"output[{index}] has a shape of {out_shape}."
                )
            new_grads.append(grad)
        elif grad is None:
            if out.requires_grad:
                if out.data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out.data.dtype.kind not in "f":
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out.data.dtype}"
                    )
                new_grads.append(tensor(out.xp.ones_like(out.data)))
            else:
                new_grads.append(None)
        else:
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(grad).__name__}"
            )
    return tuple(new_grads)


def _check_counts(outputs: Sequence[Any], grads: Sequence[Any]) -> None:
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Add the gradients of ``tensors`` (weighted by ``grad_tensors``) into leaves' ``.grad``.

    ``grad_tensors`` may be omitted (or None per tensor) only for scalar outputs.
    ``retain_graph`` defaults to ``create_graph``; without it the graph's saved
    values are freed. ``inputs`` restricts accumulation to those tensors.
    """
    tensor = tensor_class()
    if inputs is not None and not isinstance(inputs, tensor) and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs = _as_tuple(tensors)
    input_tuple = None if inputs is None else _as_tuple(inputs)
    grads = _make_grads(outputs, _as_tuple(grad_tensors, len(outputs)), is_grads_batched=False)
    _check_counts(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(
        list(zip(outputs, grads, strict=True)),
        keep_graph=retain_graph,
        create_graph=create_graph,
        inputs=input_tuple,
        accumulate=True,
    )


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """Return the gradients of ``outputs`` with respect to ``inputs`` (a tuple, one per input).

    ``allow_unused`` defaults to ``materialize_grads``; an unused input gives None,
    or zeros with ``materialize_grads`` (requiring grad under ``create_graph``, as
    PyTorch 2.13 does). With ``is_grads_batched`` the first
    dimension of every ``grad_outputs`` tensor is a batch of vectors, and each
    result gets that batch dimension in front.
    """
    tensor = tensor_class()
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    t_outputs = _as_tuple(outputs)
    t_inputs = _as_tuple(inputs)
    if len(t_inputs) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _make_grads(
        t_outputs, _as_tuple(grad_outputs, len(t_outputs)), is_grads_batched=is_grads_batched
    )
    _check_counts(t_outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph

    def vjp(vectors: Sequence[Any], keep: bool) -> tuple[Any, ...]:
        result = run_backward(
            list(zip(t_outputs, vectors, strict=True)),
            keep_graph=keep,
            create_graph=create_graph,
            inputs=t_inputs,
            allow_unused=allow_unused,
            accumulate=False,
        )
        assert result is not None
        return result

    if is_grads_batched:
        result = _batched_vjp(vjp, grads, t_inputs, retain_graph, create_graph)
    else:
        result = vjp(grads, retain_graph)

    if materialize_grads:
        result = tuple(
            g if g is not None else tensor(inp.xp.zeros_like(inp.data), requires_grad=create_graph)
            for g, inp in zip(result, t_inputs, strict=True)
        )
    return result


def _batched_vjp(
    vjp: Any, grads: Sequence[Any], inputs: Sequence[Any], retain_graph: bool, create_graph: bool
) -> tuple[Any, ...]:
    """One backward pass per row of the batched grad_outputs; results stacked on dim 0."""
    tensor = tensor_class()
    if create_graph:
        raise NotImplementedError("is_grads_batched=True with create_graph=True is not supported")
    sizes = {g.shape[0] for g in grads if g is not None}
    if len(sizes) > 1:
        raise RuntimeError(f"is_grads_batched: grad_outputs have different batch sizes {sizes}")
    batch = sizes.pop() if sizes else 1
    rows = []
    for row in range(batch):
        vectors = [None if g is None else tensor(g.data[row]) for g in grads]
        rows.append(vjp(vectors, retain_graph or row < batch - 1))
    stacked = []
    for index, inp in enumerate(inputs):
        column = [r[index] for r in rows]
        if all(c is None for c in column):
            stacked.append(None)
            continue
        zeros = inp.xp.zeros_like(inp.data)
        stacked.append(tensor(inp.xp.stack([zeros if c is None else c.data for c in column])))
    return tuple(stacked)

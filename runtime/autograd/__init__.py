"""gradview.runtime.autograd: reverse-mode differentiation of eager tensors.

Mirrors ``torch.autograd``: :func:`backward` adds gradients into the ``.grad``
of leaves, :func:`grad` returns them. Both accept one tensor or a sequence,
with the same defaults, validation and error messages as PyTorch.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from . import function
from .checks import as_tuple as _as_tuple
from .checks import check_counts as _check_counts
from .checks import make_grads as _make_grads
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
    "variable",
]


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Add the gradients of ``tensors`` (weighted by ``grad_tensors``) into leaves' ``.grad``.

    ``grad_tensors`` may be omitted (or None per tensor) only for scalar outputs.
    ``retain_graph`` defaults to ``create_graph``; without it the graph's saved
    values are freed. ``inputs`` restricts accumulation to those tensors.
    ``grad_variables`` is the deprecated old name of ``grad_tensors`` (a FutureWarning).
    """
    tensor = tensor_class()
    if grad_variables is not None:
        warnings.warn(
            "`grad_variables` is deprecated. Use `grad_tensors` instead.",
            FutureWarning,
            stacklevel=2,
        )
        if grad_tensors is not None:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
        grad_tensors = grad_variables
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
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """Return the gradients of ``outputs`` with respect to ``inputs`` (a tuple, one per input).

    ``allow_unused`` defaults to ``materialize_grads``; an unused input gives None,
    or zeros with ``materialize_grads`` (requiring grad under ``create_graph``, as
    PyTorch 2.13 does). With ``is_grads_batched`` the first
    dimension of every ``grad_outputs`` tensor is a batch of vectors, and each
    result gets that batch dimension in front. ``only_inputs`` is deprecated and
    ignored (False warns), as in PyTorch.
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
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
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
    """One backward pass per row of the batched grad_outputs; results stacked on dim 0.

    Under ``create_graph`` the rows are differentiable and so is the stacking
    (recorded even inside ``no_grad``, as the engine records the rows), so the
    batched result requires grad exactly when PyTorch's vmapped one does.
    """
    from ..tensor import stack  # tensor.py imports this package

    tensor = tensor_class()
    sizes = [g.shape[0] for g in grads if g is not None]
    if len(set(sizes)) > 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    batch = sizes[0] if sizes else 1
    rows = []
    for row in range(batch):
        vectors = [None if g is None else g.select(0, row) for g in grads]
        rows.append(vjp(vectors, retain_graph or row < batch - 1))
    stacked = []
    with set_grad_enabled(create_graph):
        for index, inp in enumerate(inputs):
            column = [r[index] for r in rows]
            if all(c is None for c in column):
                stacked.append(None)
                continue
            zeros = tensor(inp.xp.zeros_like(inp.data))
            stacked.append(stack([zeros if c is None else c for c in column]))
    return tuple(stacked)


def variable(*args: Any, **kwargs: Any) -> Any:
    """Removed long ago in PyTorch (``torch.autograd.variable``); raises its error."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


# PyTorch hangs its Variable class on the function; a gradview Tensor plays that part.
variable.Variable = tensor_class()  # type: ignore[attr-defined]

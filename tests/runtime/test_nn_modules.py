"""Acceptance: the common torch.nn modules, one training step through gradview.

For each module, traced and scripted: ``from_torch`` gives the graph and its
inputs (example inputs, parameters, buffers); GraphExecutor runs it with
every floating-point example input and every parameter requiring grad; the
outputs, each of their gradients (of a fixed random weighting of the
outputs), and the buffers after the step (BatchNorm's running statistics)
equal eager PyTorch's on the same module to 1e-6 in float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import from_torch
from gradview.runtime import Tensor
from gradview.runtime.autograd import grad
from gradview.runtime.executor import GraphExecutor

from .nn_modules import CASES, build_case

PARAMS = [(name, how) for name in CASES for how in ("trace", "script") if how == "trace" or CASES[name].scripts]


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [item for element in value for item in _flatten(element)]
    return [value]


def _is_float(value: Any) -> bool:
    return hasattr(value, "dtype") and np.dtype(value.dtype).kind == "f"


@pytest.mark.parametrize(("name", "how"), PARAMS, ids=[f"{n}-{h}" for n, h in PARAMS])
def test_training_step_matches_pytorch(name: str, how: str) -> None:
    module, inputs = build_case(name)
    graph, values = from_torch(module, inputs, how=how)
    module, inputs = build_case(name)  # fresh: from_torch may have run the module
    n_inputs, n_params = len(inputs), len(list(module.parameters()))
    # Leaves: floating-point example inputs and every parameter.
    leaves = [i for i, v in enumerate(values) if i < n_inputs + n_params and _is_float(v)]
    tensors = [Tensor(np.array(v), requires_grad=i in leaves) if hasattr(v, "shape") else v for i, v in enumerate(values)]
    outputs = [o for o in _flatten(GraphExecutor(graph).run(tensors)) if isinstance(o, Tensor)]

    torch_inputs = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in inputs]
    expected = [o for o in _flatten(module(*torch_inputs)) if isinstance(o, torch.Tensor)]
    assert len(outputs) == len(expected)
    rng = np.random.default_rng(1)
    weights = [rng.standard_normal(tuple(e.shape)) for e in expected]
    for ours, theirs in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-9)

    ours_loss = sum((o * Tensor(w)).sum() for o, w in zip(outputs, weights, strict=True) if _is_float(o.data))
    torch_loss = sum((e * torch.tensor(w)).sum() for e, w in zip(expected, weights, strict=True) if e.is_floating_point())
    torch_leaves = [t for t in torch_inputs if t.is_floating_point()] + list(module.parameters())
    theirs = torch.autograd.grad(torch_loss, torch_leaves, allow_unused=True)
    ours = grad([ours_loss], [tensors[i] for i in leaves], allow_unused=True)
    for index, mine, reference in zip(leaves, ours, theirs, strict=True):
        if reference is None:
            assert mine is None or not np.any(mine.numpy()), f"input {index}: torch gives no gradient"
            continue
        assert mine is not None, f"input {index} ({graph.inputs()[index].debug_name()}): no gradient"
        np.testing.assert_allclose(
            mine.numpy(), reference.numpy(), rtol=1e-6, atol=1e-9,
            err_msg=f"gradient of input {index} ({graph.inputs()[index].debug_name()})",
        )
    # Buffers (running statistics) changed in place as torch's did.
    buffers = [b for _, b in module.named_buffers()]
    for value, buffer in zip(tensors[n_inputs + n_params :], buffers, strict=True):
        np.testing.assert_allclose(np.asarray(value.data), buffer.detach().numpy(), rtol=1e-6, atol=1e-9)

"""Check ``differentiate`` against torch: the Gradient's bookkeeping against
``torch._C._jit_differentiate`` and the numbers against ``torch.autograd.grad``.

``check_gradient(text, inputs)`` differentiates the graph, runs ``f`` and
``df`` with gradview's interpreter (df's inputs: a random gradient for each
real output in df_input_vjps, None for captured temporaries, then the
captured inputs and outputs), and compares the forward outputs and the
vector-Jacobian products with torch.autograd.grad on the original graph
(built with torch._C._create_function_from_graph), to ``rtol``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from gradview.autodiff import Gradient, differentiate
from gradview.ir import TensorType, parse_ir
from gradview.runtime import run_graph

__all__ = ["check_gradient", "torch_gradient", "random_inputs", "reference_callable"]


def random_inputs(text: str, seed: int, scalars: dict[str, Any] | None = None) -> list[Any]:
    """Inputs of the declared shapes and dtypes (uniform in [0.5, 1.5] to keep log/sqrt defined)."""
    rng = np.random.default_rng(seed)
    graph = parse_ir(text)
    values = []
    for value in graph.inputs():
        type_ = value.type()
        if isinstance(type_, TensorType) and type_.sizes is not None:
            values.append(rng.uniform(0.5, 1.5, size=tuple(type_.sizes)))
        else:
            values.append((scalars or {})[value.debug_name()])
    return values


def torch_gradient(text: str) -> Any:
    return torch._C._jit_differentiate(torch._C.parse_ir(text))


def reference_callable(text: str) -> Any:
    """The original graph as a torch function returning a tuple of its outputs."""
    graph = torch._C.parse_ir(text)
    # torch 2.13's Graph has no createTuple: this packs the outputs (one or
    # several) into a prim::TupleConstruct that becomes the only output.
    graph.makeMultiOutputIntoTuple()
    return torch._C._create_function_from_graph("reference", graph)


def run_gradient(grad: Gradient, inputs: list[Any], output_grads: list[Any]) -> tuple[list[Any], list[Any]]:
    """Run f, then df with the given gradients of the real outputs; returns (outputs, vjps)."""
    assert grad.df is not None
    forward = run_graph(grad.f, inputs)
    vjps = []
    for index in grad.df_input_vjps:
        vjps.append(output_grads[index] if index < grad.f_real_outputs else None)
    captured = [inputs[i] for i in grad.df_input_captured_inputs] + [forward[i] for i in grad.df_input_captured_outputs]
    (packed,) = run_graph(grad.df, vjps + captured)
    return forward[: grad.f_real_outputs], list(packed)


def check_gradient(
    text: str, inputs: list[Any], seed: int = 0, rtol: float = 1e-7, compare_torch_lists: bool = True,
    mode: str = "extended",
) -> Gradient:
    """Differentiate ``text`` and assert it agrees with torch (structure and numbers).

    The formula tests use gradview's whole formula library (``mode="extended"``);
    the conformance cases check PyTorch's own mode."""
    grad = differentiate(parse_ir(text), mode=mode)
    grad.f.lint()
    assert grad.df is not None
    grad.df.lint()
    if compare_torch_lists:
        theirs = torch_gradient(text)
        assert grad.f_real_outputs == theirs.f_real_outputs
        assert list(grad.df_output_vjps) == list(theirs.df_output_vjps)
        real = [i for i in theirs.df_input_vjps if i < theirs.f_real_outputs]
        assert [i for i in grad.df_input_vjps if i < grad.f_real_outputs] == real
        ours_captured = grad.captured_count
        torch_captured = len(theirs.df_input_captured_inputs) + len(theirs.df_input_captured_outputs)
        assert ours_captured <= torch_captured, f"{ours_captured} captures, torch needs {torch_captured}"

    rng = np.random.default_rng(seed + 1000)
    fn = reference_callable(text)
    # Integer and bool arrays (indices, masks) cannot require grad; a float input requires
    # grad unless its type says requires_grad=0 (class weights, a total weight).
    declared = [value.requires_grad() for value in parse_ir(text).inputs()]
    t_inputs = [
        torch.tensor(v, requires_grad=bool(np.issubdtype(v.dtype, np.floating)) and wants)
        if isinstance(v, np.ndarray) else v
        for v, wants in zip(inputs, declared, strict=True)
    ]
    t_outputs = list(fn(*t_inputs))
    output_grads = [rng.standard_normal(o.shape) if isinstance(o, torch.Tensor) else None for o in t_outputs]
    forward, vjps = run_gradient(grad, inputs, output_grads)
    for ours, theirs in zip(forward, t_outputs, strict=True):
        np.testing.assert_allclose(ours, theirs.detach().numpy(), rtol=rtol, atol=1e-12)

    wanted = [t_inputs[i] for i in grad.df_output_vjps]
    pairs = [
        (o, torch.tensor(g))
        for o, g, index in zip(t_outputs, output_grads, range(len(t_outputs)), strict=True)
        if index in grad.df_input_vjps and isinstance(o, torch.Tensor) and o.requires_grad
    ]
    expected = torch.autograd.grad([p[0] for p in pairs], wanted, [p[1] for p in pairs], allow_unused=True)
    assert len(vjps) == len(expected)
    for index, (ours, theirs) in enumerate(zip(vjps, expected, strict=True)):
        if theirs is None:
            assert ours is None or not np.any(ours), f"vjp {index}: torch has none"
            continue
        assert ours is not None, f"vjp {index} is undefined, torch computes one"
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=rtol, atol=1e-10, err_msg=f"vjp {index}")
    return grad

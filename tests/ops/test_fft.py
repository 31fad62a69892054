"""The FFT family beyond the op_db sweep: second derivatives through the
complex-to-real transforms' gradient op, the refusal of complex results, and
PyTorch's promotion of integer inputs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.runtime import Tensor, autograd
from gradview.runtime.executor import GraphExecutor
from gradview.runtime.interpreter import GraphCompileError


def _irfft(x: torch.Tensor) -> torch.Tensor:
    return torch.fft.irfft(x * x, n=9, dim=0, norm="ortho")


def _hfft(x: torch.Tensor) -> torch.Tensor:
    return torch.fft.hfft(x * x, n=6)


def _irfftn(x: torch.Tensor) -> torch.Tensor:
    return torch.fft.irfftn(x * x, s=[5, 4], norm="forward")


def _hfft2(x: torch.Tensor) -> torch.Tensor:
    return torch.fft.hfft2(x * x, s=[2, 7])


@pytest.mark.parametrize("fn", [_irfft, _hfft, _irfftn, _hfft2])
def test_second_derivative_of_a_c2r_transform_equals_torch(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """The gradient op's own gradient is the forward transform: grad of grad matches torch."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5))
    out_shape = tuple(fn(torch.tensor(x)).shape)
    v = rng.standard_normal(out_shape)
    w = rng.standard_normal(x.shape)

    tx, tv = torch.tensor(x, requires_grad=True), torch.tensor(v, requires_grad=True)
    (t_first,) = torch.autograd.grad(fn(tx), [tx], tv, create_graph=True)
    t_second = torch.autograd.grad((t_first * torch.tensor(w)).sum(), [tx, tv])

    executor = GraphExecutor(parse_ir(str(torch.jit.script(fn).inlined_graph)))
    gx, gv = Tensor(x.copy(), requires_grad=True), Tensor(v.copy(), requires_grad=True)
    (out,) = executor.run([gx])
    (first,) = autograd.grad([out], [gx], [gv], create_graph=True)
    second = autograd.grad([(first * Tensor(w)).sum()], [gx, gv])

    np.testing.assert_allclose(first.detach().numpy(), t_first.detach().numpy(), rtol=1e-12, atol=1e-13)
    for ours, theirs in zip(second, t_second, strict=True):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-12, atol=1e-13)


def _plain_irfft(x: torch.Tensor) -> torch.Tensor:
    return torch.fft.irfft(x)


def _rfft_abs(x: torch.Tensor) -> torch.Tensor:
    return torch.fft.rfft(x).abs()


def test_integer_input_of_irfft_computes_in_the_default_float() -> None:
    """promote_tensor_fft: an int64 half spectrum gives a float32 signal, as in torch."""
    graph = parse_ir(str(torch.jit.script(_plain_irfft).inlined_graph))
    x = np.arange(6, dtype=np.int64)
    (out,) = GraphExecutor(graph).run([Tensor(x)])
    expected = torch.fft.irfft(torch.tensor(x))
    assert out.numpy().dtype == np.float32
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


def test_a_complex_transform_is_refused_naming_the_op() -> None:
    graph = parse_ir(str(torch.jit.script(_rfft_abs).inlined_graph))
    with pytest.raises(GraphCompileError, match=r"gradview does not run aten::fft_rfft: its result is complex"):
        GraphExecutor(graph).run([Tensor(np.ones(4))])

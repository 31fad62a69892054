"""Gradients at the device edge (issue 11, point 4), with the marker backend playing a GPU.

* A host Tensor handed to an executor on a device is copied there as PyTorch's
  ``x.to("cuda")`` is: a recorded copy, so its gradient lands on the host, in
  ``.grad`` and in what ``autograd.grad`` returns, and a device leaf's on the
  device (PyTorch: a gradient has its leaf's device).
* A ``grad_outputs`` tensor on another device than its output is refused up
  front with PyTorch's message (engine.cpp ``validate_outputs``: "invalid
  gradient at index 0 - expected device cuda:0 but got cpu"); a 0-d one (a
  number) is copied over, as PyTorch's engine does.

The numbers are compared with eager torch (CPU); torch's own device messages
need CUDA, so they are written out here as engine.cpp formats them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import parse_ir
from gradview.kernels import get_backend
from gradview.kernels.marker_backend import DeviceArray
from gradview.runtime import Tensor
from gradview.runtime.autograd import backward, grad
from gradview.runtime.executor import GraphExecutor

MARKER = get_backend("marker")
GRAPH = """graph(%x : Tensor, %w : Tensor):
  %s : Tensor = aten::sin(%x)
  %a : Tensor = aten::mul(%s, %w)
  %y : Tensor = aten::mul(%a, %x)
  return (%y)
"""
X = np.array([1.0, -0.5, 2.0])
W = np.array([0.5, 1.5, -2.0])


def _torch_graph(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) * w * x


def _leaves() -> tuple[Tensor, Tensor]:
    """x on the host, w already on the device; both require grad."""
    return Tensor(X.copy(), requires_grad=True), Tensor(MARKER.to_device(W), requires_grad=True)


def _on_host(value: Any) -> bool:
    return type(value.data) is np.ndarray


def _on_device(value: Any) -> bool:
    return type(value.data) is DeviceArray


def test_backward_puts_each_gradient_on_its_leafs_device() -> None:
    x, w = _leaves()
    executor = GraphExecutor(parse_ir(GRAPH), backend="marker")
    t_x, t_w = torch.tensor(X, requires_grad=True), torch.tensor(W, requires_grad=True)
    for _ in range(2):  # the second run reuses the plan and accumulates into .grad
        (y,) = executor.run([x, w])
        assert _on_device(y)
        y.sum().backward()
        _torch_graph(t_x, t_w).sum().backward()
        assert _on_host(x.grad), type(x.grad.data).__name__
        assert _on_device(w.grad), type(w.grad.data).__name__
        np.testing.assert_allclose(x.grad.numpy(), t_x.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(w.grad.numpy(), t_w.grad.numpy(), rtol=1e-12)
    assert executor.cache_misses == 1 and executor.cache_hits == 1


def test_grad_returns_each_gradient_on_its_inputs_device_and_double_backward_too() -> None:
    x, w = _leaves()
    (y,) = GraphExecutor(parse_ir(GRAPH), backend="marker").run([x, w])
    gx, gw = grad([y.sum()], [x, w], create_graph=True)
    assert _on_host(gx) and _on_device(gw)
    assert gx.requires_grad and gw.requires_grad
    ggx, ggw = grad([gx.sum(), gw.sum()], [x, w])  # two roots, one per device
    assert _on_host(ggx) and _on_device(ggw)
    t_x, t_w = torch.tensor(X, requires_grad=True), torch.tensor(W, requires_grad=True)
    t_gx, t_gw = torch.autograd.grad(_torch_graph(t_x, t_w).sum(), [t_x, t_w], create_graph=True)
    t_ggx, t_ggw = torch.autograd.grad(t_gx.sum() + t_gw.sum(), [t_x, t_w])
    for ours, theirs in ((gx, t_gx), (gw, t_gw), (ggx, t_ggx), (ggw, t_ggw)):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)


def test_a_host_input_that_needs_no_gradient_is_moved_without_a_copy_node() -> None:
    """(Only a Tensor that requires grad gets a recorded copy; the others keep being the edge.)"""
    x = Tensor(X.copy())
    (y,) = GraphExecutor(parse_ir(GRAPH), backend="marker").run([x, Tensor(MARKER.to_device(W))])
    assert _on_device(y) and not y.requires_grad


def test_a_grad_output_on_another_device_is_refused_with_torchs_message() -> None:
    x, w = _leaves()
    (y,) = GraphExecutor(parse_ir(GRAPH), backend="marker").run([x, w])
    with pytest.raises(RuntimeError) as caught:
        grad([y], [x], [Tensor(np.ones(3))])
    assert str(caught.value) == "invalid gradient at index 0 - expected device cuda:0 but got cpu"
    with pytest.raises(RuntimeError) as caught:
        y.backward(Tensor(np.ones(3)))
    assert str(caught.value) == "invalid gradient at index 0 - expected device cuda:0 but got cpu"
    assert x.grad is None and w.grad is None  # refused before anything ran
    # The index is the output's; a device gradient for a host output is refused too.
    host = Tensor(X.copy(), requires_grad=True) * 2.0
    with pytest.raises(RuntimeError) as caught:
        ones = Tensor(MARKER.to_device(np.ones(3)))
        backward([y, host], [ones, ones])
    assert str(caught.value) == "invalid gradient at index 1 - expected device cpu but got cuda:0"


def test_shape_mismatch_is_reported_before_the_device() -> None:
    """torch checks shapes in Python (_make_grads) before its engine checks devices."""
    x, w = _leaves()
    (y,) = GraphExecutor(parse_ir(GRAPH), backend="marker").run([x, w])
    shape = r"^Mismatch in shape: grad_output\[0\] has a shape of torch.Size\(\[2\]\)"
    with pytest.raises(RuntimeError, match=shape):
        grad([y], [x], [Tensor(np.ones(2))])


def test_a_0d_grad_output_on_the_host_is_copied_to_its_outputs_device() -> None:
    x, w = _leaves()
    (y,) = GraphExecutor(parse_ir(GRAPH), backend="marker").run([x, w])
    total = y.sum()
    assert _on_device(total)
    gx, gw = grad([total], [x, w], [Tensor(np.array(2.0))])
    t_x, t_w = torch.tensor(X, requires_grad=True), torch.tensor(W, requires_grad=True)
    t_gx, t_gw = torch.autograd.grad(_torch_graph(t_x, t_w).sum(), [t_x, t_w], torch.tensor(2.0))
    assert _on_host(gx) and _on_device(gw)
    np.testing.assert_allclose(gx.numpy(), t_gx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), t_gw.numpy(), rtol=1e-12)

"""The catalogue's sample calls for the neural-network ops of issue 22 (losses,
activations, norms, pooling and sampling): see op_gradient_samples.py, which
imports this module at its end to add them to SAMPLES.

Inputs PyTorch does not differentiate (class weights, soft_margin_loss's target)
are frozen: PyTorch refuses a gradient for them, as gradview does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .op_gradient_samples import S, Sample, add, f, ints, pos

__all__: list[str] = []


def _signs(*shape: int) -> np.ndarray:
    return np.where(f(*shape) > 0, 1.0, -1.0)


def _probabilities(*shape: int) -> np.ndarray:
    return f(*shape, lo=0.05, hi=0.95)


def _with_backward(name: str, sample: Sample, grad: np.ndarray | None = None) -> None:
    """The op's sample, and its ``gradview::name_backward``'s: the same arguments after ``grad``."""
    add(name, sample)
    grad = np.array(0.7) if grad is None else grad  # a reduced loss
    add(f"gradview::{name}_backward", S(grad, *sample.args, frozen=tuple(i + 1 for i in sample.frozen)))


# -- losses -------------------------------------------------------------------------------------
_with_backward("l1_loss", S(f(3, 4), f(3, 4), 1))
_with_backward("smooth_l1_loss", S(f(3, 4), f(3, 4), 2, 0.5))
_with_backward("huber_loss", S(f(3, 4), f(3, 4), 1, 0.5))
_P, _Q = _probabilities(3, 4), _probabilities(3, 4)
_with_backward("binary_cross_entropy", S(_P, _Q, pos(3, 4), 1, frozen=(2,)))
_with_backward("binary_cross_entropy_with_logits", S(f(3, 4), _Q, pos(3, 4), pos(4), 1, frozen=(2, 3)))
_with_backward("kl_div", S(f(3, 4), _probabilities(3, 4), 1, False))
_with_backward("soft_margin_loss", S(f(3, 4), _signs(3, 4), 1, frozen=(1,)))
_with_backward("margin_ranking_loss", S(f(4), f(4), _signs(4), 0.1, 1))
_with_backward("hinge_embedding_loss", S(f(3, 4), _signs(3, 4), 0.5, 1))
_with_backward("poisson_nll_loss", S(f(3, 4), pos(3, 4) * 2, True, True, 1e-8, 1))
_with_backward("cosine_embedding_loss", S(f(3, 4), f(3, 4), _signs(3), 0.2, 1, frozen=(2,)))
_with_backward("triplet_margin_loss", S(f(3, 4), f(3, 4), f(3, 4), 1.0, 2.0, 1e-6, True, 1))
_with_backward("multi_margin_loss", S(f(3, 4), ints(1, 0, 3), 2, 0.8, pos(4), 1, frozen=(4,)))
_with_backward("multilabel_margin_loss", S(f(3, 4), ints(3, 0, -1, 1, 2, 1, 0, 3, -1, 0, 0, 0).reshape(3, 4), 1))
_LOG_PROBS = np.log(np.random.default_rng(3).dirichlet(np.ones(4), size=(6, 2)))
_CTC_TARGETS = ints(1, 2, 3, 3, 1, 0).reshape(2, 3)
add("ctc_loss.IntList", S(_LOG_PROBS, _CTC_TARGETS, [6, 5], [3, 2], 0, 1, False))
add("ctc_loss.Tensor", S(_LOG_PROBS, _CTC_TARGETS, ints(6, 5), ints(3, 2), 0, 2, True))
add("gradview::ctc_loss_backward", S(np.array(0.7), _LOG_PROBS, _CTC_TARGETS, [6, 5], [3, 2], 0, 1, False))
add("gradview::ctc_loss_backward.Tensor", S(f(2), _LOG_PROBS, _CTC_TARGETS, ints(6, 5), ints(3, 2), 0, 0, True))


# -- activations --------------------------------------------------------------------------------
add("celu", S(f(3, 4) * 3, 0.7))
add("selu mish log_sigmoid log_sigmoid_forward", S(f(3, 4) * 3))
add("softshrink", S(f(3, 4), 0.3))
add("glu", S(f(3, 4), 1))
add("prelu", S(f(2, 3, 4), pos(3)))
add("mish_backward", S(f(3, 4), f(3, 4) * 3))
add("softshrink_backward", S(f(3, 4), f(3, 4), 0.3))
add("log_sigmoid_backward", S(f(3, 4), f(3, 4), pos(3, 4), frozen=(2,)))
add("glu_backward", S(f(3, 2), f(3, 4), 1))
add("gradview::prelu_backward", S(f(2, 3, 4), f(2, 3, 4), pos(3)))

# -- norms ----------------------------------------------------------------------------------------
# (the running statistics are written in place: they take no gradient)
add("_batch_norm_with_update", S(f(4, 3, 2), pos(3), f(3), f(3), pos(3), 0.1, 1e-5, frozen=(3, 4)))
add("instance_norm", S(f(2, 3, 4), pos(3), f(3), None, None, True, 0.1, 1e-5, False))
add("gradview::instance_norm_backward", S(f(2, 3, 4), f(2, 3, 4), pos(3), f(3), None, None, True, 0.1, 1e-5,
                                          False))
add("rms_norm", S(f(2, 3, 4), [3, 4], pos(3, 4), 1e-6))
add("gradview::rms_norm_backward", S(f(2, 3, 4), f(2, 3, 4), [3, 4], pos(3, 4), 1e-6))

def _vjp(name: str, overload: str) -> Callable[..., Any]:
    """The oracle of a gradview backward op taking (grad, the forward's arguments): the
    forward's vjp under create_graph, so it can be differentiated again."""

    def oracle(grad: torch.Tensor, x: torch.Tensor, *args: Any) -> torch.Tensor:
        leaf = x.detach().requires_grad_(True) if not x.requires_grad else x
        out = getattr(getattr(torch.ops.aten, name), overload)(leaf, *args)
        return torch.autograd.grad(out, leaf, grad, create_graph=True)[0]

    return oracle


def _scatter_at(grad: torch.Tensor, x: torch.Tensor, indices: torch.Tensor, dims: int) -> torch.Tensor:
    """pool_indices_backward: each gradient added at its index, in the input's shape."""
    flat = torch.zeros(x.shape, dtype=grad.dtype).flatten(-dims)
    return flat.scatter_add(-1, indices.flatten(-dims), grad.flatten(-dims)).view(x.shape)


def _gather_at(grad: torch.Tensor, indices: torch.Tensor, dims: int) -> torch.Tensor:
    """unpool_backward (max_pool_double_backward): the gradient read at each index."""
    return grad.flatten(-dims).gather(-1, indices.flatten(-dims)).view_as(indices)


# -- pooling --------------------------------------------------------------------------------------
add("max_pool1d max_pool1d_with_indices", S(f(2, 3, 7), [3], [2], [1], [1], True))
add("max_pool3d max_pool3d_with_indices", S(f(1, 2, 4, 5, 4), [2, 3, 2], [2, 1, 2], [1, 1, 0], [1, 1, 1], False))
add("avg_pool1d", S(f(2, 3, 7), [3], [2], [1], True, False))
add("avg_pool3d", S(f(1, 2, 4, 5, 4), [2, 3, 2], [2, 1, 2], [1, 1, 0], False, True, None))
add("avg_pool3d_backward", S(f(1, 2, 3, 5, 2), f(1, 2, 4, 5, 4), [2, 3, 2], [2, 1, 2], [1, 1, 0], False, True,
                             None))
add("gradview::avg_pool1d_backward", S(f(2, 3, 4), f(2, 3, 7), [3], [2], [1], True, False,
                                       torch=_vjp("avg_pool1d", "default")))
add("adaptive_max_pool1d", S(f(2, 3, 7), [3]))
add("adaptive_max_pool2d", S(f(2, 3, 5, 7), [2, 3]))
add("adaptive_max_pool3d", S(f(1, 2, 4, 5, 3), [2, 3, 2]))
add("gradview::pool_indices_backward", S(f(2, 3, 3), f(2, 3, 7), ints(*range(0, 18)).reshape(2, 3, 3) % 7, 1,
                                         torch=_scatter_at))
_UNPOOL2D = np.stack([np.random.default_rng(i).permutation(16)[:4] for i in range(6)]).reshape(2, 3, 2, 2)
add("max_unpool2d", S(f(2, 3, 2, 2), _UNPOOL2D, [4, 4]))
_UNPOOL3D = np.stack([np.random.default_rng(i).permutation(27)[:8] for i in range(2)]).reshape(1, 2, 2, 2, 2)
add("max_unpool3d", S(f(1, 2, 2, 2, 2), _UNPOOL3D, [3, 3, 3], [1, 1, 1], [0, 0, 0]))
add("gradview::unpool_backward", S(f(2, 3, 4, 4), _UNPOOL2D, 2, torch=_gather_at))

# -- upsampling, im2col, col2im --------------------------------------------------------------------
_UPSAMPLE = {
    "upsample_nearest1d": 1, "upsample_nearest2d": 2, "upsample_nearest3d": 3, "_upsample_nearest_exact1d": 1,
    "_upsample_nearest_exact2d": 2, "_upsample_nearest_exact3d": 3, "upsample_linear1d": 1,
    "upsample_bilinear2d": 2, "upsample_trilinear3d": 3, "upsample_bicubic2d": 2, "_upsample_bilinear2d_aa": 2,
}
for _name, _dims in _UPSAMPLE.items():
    _aligned = [False] if ("linear" in _name or "cubic" in _name) else []
    _shape, _out = (2, 3, 4, 3, 5)[: 2 + _dims], [5, 2, 7][:_dims]
    _plain = S(f(*_shape), _out, *_aligned, *([1.3] * _dims))
    _vec = S(f(*_shape), None, *_aligned, [1.5] * _dims)
    add(_name, _plain)
    add(f"{_name}.vec", _vec)
    add(f"gradview::{_name}_backward", S(f(2, 3, *_out), *_plain.args, torch=_vjp(_name, "default")))
    _vec_out = [int(n * 1.5) for n in _shape[2:]]
    add(f"gradview::{_name}_vec_backward", S(f(2, 3, *_vec_out), *_vec.args, torch=_vjp(_name, "vec")))
add("im2col", S(f(2, 3, 5, 6), [2, 3], [1, 2], [1, 0], [2, 1]))
add("col2im", S(f(2, 18, 6), [5, 6], [2, 3], [1, 2], [1, 0], [2, 1]))
add("grid_sampler_2d", S(f(2, 3, 4, 5), f(2, 3, 2, 2) * 1.2, 0, 2, False))
add("grid_sampler", S(f(2, 3, 4, 5), f(2, 3, 2, 2) * 1.2, 2, 1, True))
add("grid_sampler_3d", S(f(1, 2, 3, 4, 5), f(1, 2, 2, 3, 3) * 1.2, 0, 0, True))
add("grid_sampler_2d_backward", S(f(2, 3, 3, 2), f(2, 3, 4, 5), f(2, 3, 2, 2) * 1.2, 0, 2, False, [True, True]))
add("grid_sampler_3d_backward", S(f(1, 2, 2, 2, 3), f(1, 2, 3, 4, 5), f(1, 2, 2, 3, 3) * 1.2, 0, 1, True,
                                  [True, True]))

# -- rrelu and fractional max pooling (their own generator: the samples above keep their values) ---
_own = np.random.default_rng(2611)
_RRELU_X = _own.uniform(-1, 1, (3, 4))
add("rrelu", S(_RRELU_X, 0.1, 0.3, False))
add("gradview::rrelu_noise", S(_RRELU_X, 0.1, 0.3, False,
                               torch=lambda x, lower, upper, training: torch.where(x > 0, 1.0, (lower + upper) / 2)))
_FRACTIONAL_X2, _FRACTIONAL_X3 = _own.uniform(-1, 1, (2, 3, 7, 6)), _own.uniform(-1, 1, (1, 2, 6, 5, 5))
_FRACTIONAL_U2, _FRACTIONAL_U3 = _own.random((2, 3, 2)), _own.random((1, 2, 3))
add("fractional_max_pool2d", S(_FRACTIONAL_X2, [2, 2], [4, 3], _FRACTIONAL_U2, frozen=(3,)))
add("fractional_max_pool3d", S(_FRACTIONAL_X3, [2, 2, 2], [3, 3, 2], _FRACTIONAL_U3, frozen=(3,)))
_FRACTIONAL_I2 = torch.ops.aten.fractional_max_pool2d(
    torch.tensor(_FRACTIONAL_X2), [2, 2], [4, 3], torch.tensor(_FRACTIONAL_U2))[1].numpy()
_FRACTIONAL_I3 = torch.ops.aten.fractional_max_pool3d(
    torch.tensor(_FRACTIONAL_X3), [2, 2, 2], [3, 3, 2], torch.tensor(_FRACTIONAL_U3))[1].numpy()
add("fractional_max_pool2d_backward", S(_own.uniform(-1, 1, (2, 3, 4, 3)), _FRACTIONAL_X2, [2, 2], [4, 3],
                                        _FRACTIONAL_I2))
add("fractional_max_pool3d_backward", S(_own.uniform(-1, 1, (1, 2, 3, 3, 2)), _FRACTIONAL_X3, [2, 2, 2],
                                        [3, 3, 2], _FRACTIONAL_I3))

"""One sample call per overload that has a gradient formula or a declared
no-gradient and returns a tensor (tests/ops/test_catalog.py runs each through the
executor and compares with PyTorch).

A sample lists the call's arguments in schema order (``kw`` holds keyword-only
and later arguments by name); NumPy float64 arrays become graph inputs that
require grad (except the positions in ``frozen``), integer and bool arrays
inputs that do not, lists of arrays ``Tensor[]`` inputs, and everything else
constants. ScalarType arguments are ints (float64 = 7, float32 = 6, int64 = 4).
The oracle is ``torch.ops.aten.<op>.<overload>`` unless ``torch`` gives a
function (the ``gradview::`` helpers, written with PyTorch ops).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

__all__ = [
    "SAMPLES", "Sample", "index_backward", "matmul_grad_other", "matmul_grad_self", "pad_backward",
]

_rng = np.random.default_rng(20240610)
F64, F32, I64 = 7, 6, 4


@dataclass(frozen=True)
class Sample:
    args: tuple[Any, ...]
    kw: dict[str, Any] = field(default_factory=dict)
    torch: Callable[..., Any] | None = None  # the oracle, when not torch.ops.aten.<op>.<overload>
    frozen: tuple[int, ...] = ()  # argument positions whose float arrays do not require grad
    random: bool = False  # the values are random (or uninitialised): compare shapes and flags only


def S(
    *args: Any,
    torch: Callable[..., Any] | None = None,
    frozen: tuple[int, ...] = (),
    random: bool = False,
    **kw: Any,
) -> Sample:
    return Sample(args, kw, torch, frozen, random)


def f(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    """A float64 array, uniform in [lo, hi)."""
    return _rng.uniform(lo, hi, shape)


def pos(*shape: int) -> np.ndarray:
    return f(*shape, lo=0.5, hi=1.5)


def ints(*values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def mask(*shape: int) -> np.ndarray:
    return _rng.random(shape) > 0.5


SAMPLES: dict[str, Sample] = {}


def add(names: str, sample: Sample) -> None:
    for name in names.split():
        SAMPLES[name if "::" in name else f"aten::{name}"] = sample


# -- pointwise --------------------------------------------------------------------------------
_UNARY = (
    "abs atan cos cosh erf erfc exp exp2 expm1 neg relu relu6 sigmoid sign silu sin sinh tan tanh "
    "ceil floor round trunc frac hardsigmoid hardswish square detach t_copy clone"
)
add(_UNARY, S(f(3, 4)))
add("contiguous", S(f(4, 3).T))
add("alias", S(f(3, 4)))
add("acos asin", S(f(3, 4, lo=-0.9, hi=0.9)))
add("log log10 log1p log2 reciprocal rsqrt sqrt", S(pos(3, 4)))
add("round.decimals", S(f(3, 4) * 10, decimals=1))
add("logit", S(f(3, 4, lo=0.1, hi=0.9), 0.05))
add("gelu", S(f(3, 4), approximate="tanh"))
add("leaky_relu", S(f(3, 4), 0.2))
add("elu", S(f(3, 4), 1.2, 0.9, 1.1))
add("hardtanh", S(f(3, 4), -0.5, 0.5))
add("hardshrink", S(f(3, 4), 0.4))
add("softplus", S(f(3, 4), 2.0, 1.0))
add("threshold", S(f(3, 4), 0.1, -2.0))
for op in ("add", "sub", "rsub"):
    add(f"{op}.Tensor", S(f(3, 4), f(4), alpha=2))
    add(f"{op}.Scalar", S(f(3, 4), 1.5, 2))
add("mul.Tensor atan2 maximum minimum max.other min.other", S(f(3, 4), f(4)))
add("mul.Scalar", S(f(3, 4), 1.5))
add("div.Tensor", S(f(3, 4), pos(4)))
add("div.Scalar", S(f(3, 4), 1.5))
add("div.Tensor_mode", S(f(3, 4) * 4, pos(4), rounding_mode="floor"))
add("div.Scalar_mode", S(f(3, 4) * 4, 1.5, rounding_mode="trunc"))
add("floor_divide", S(f(3, 4) * 4, pos(4)))
add("floor_divide.Scalar", S(f(3, 4) * 4, 0.7))
add("remainder.Tensor fmod.Tensor", S(f(3, 4) * 4, pos(4)))
add("remainder.Scalar fmod.Scalar", S(f(3, 4) * 4, 0.7))
add("remainder.Scalar_Tensor", S(2.5, pos(3, 4)))
add("pow.Tensor_Tensor", S(pos(3, 4), f(4)))
add("pow.Tensor_Scalar", S(f(3, 4), 3))
add("pow.Scalar", S(1.7, f(3, 4)))
add("addcmul", S(f(3, 4), f(3, 1), f(4), value=0.5))
add("lerp.Scalar", S(f(3, 4), f(4), 0.3))
add("lerp.Tensor", S(f(3, 4), f(4), f(3, 1)))
add("clamp", S(f(3, 4), -0.5, 0.5))
add("clamp.Tensor", S(f(3, 4), f(4) * 0.5 - 0.3, f(3, 1) * 0.5 + 0.3))
add("clamp_min", S(f(3, 4), -0.2))
add("clamp_max", S(f(3, 4), 0.2))
add("clamp_min.Tensor clamp_max.Tensor", S(f(3, 4), f(4)))
add("masked_fill.Scalar", S(f(3, 4), mask(4), 2.0))
add("masked_fill.Tensor", S(f(3, 4), mask(3, 4), np.array(2.5)))
add("where.self", S(mask(3, 4), f(3, 4), f(4)))
add("where.ScalarOther", S(mask(3, 4), f(3, 4), 2.0))
add("where.ScalarSelf", S(mask(3, 4), 2.0, f(3, 4)))
add("where.Scalar", S(mask(3, 4), 2.0, -1.0))
add("asinh deg2rad rad2deg angle positive real resolve_conj resolve_neg conj_physical", S(f(3, 4)))
add("isnan isinf isfinite isposinf isneginf isreal signbit logical_not", S(f(3, 4)))
add("acosh", S(f(3, 4, lo=1.1, hi=3.0)))
add("atanh", S(f(3, 4, lo=-0.9, hi=0.9)))
add("nan_to_num", S(np.array([0.5, np.nan, np.inf, -np.inf, -2.0]), 1.0, 2.0, -3.0))
add("copysign.Tensor hypot logaddexp logaddexp2 fmax fmin heaviside", S(f(3, 4), f(4)))
add("logical_and logical_or logical_xor", S(f(3, 4), f(4)))
add("copysign.Scalar", S(f(3, 4), -1.5))
add("float_power.Tensor_Tensor", S(pos(3, 4), f(4)))
add("float_power.Tensor_Scalar", S(f(3, 4), 3))
add("float_power.Scalar", S(1.7, f(3, 4)))
add("addcdiv", S(f(3, 4), f(3, 1), pos(4), value=0.5))
add("isclose", S(f(3, 4), f(4), 0.5, 0.1, False))
add("isin.Tensor_Tensor", S(ints(1, 2, 3, 4), ints(2, 4)))
add("isin.Tensor_Scalar", S(ints(1, 2, 3, 4), 3))
add("isin.Scalar_Tensor", S(3, ints(1, 2, 3, 4)))
add("hash_tensor", S(f(3, 4), [1]))
add("where", S(mask(3, 4)))
add("eq.Tensor ne.Tensor lt.Tensor le.Tensor gt.Tensor ge.Tensor", S(f(3, 4), f(4)))
add("eq.Scalar ne.Scalar lt.Scalar le.Scalar gt.Scalar ge.Scalar", S(f(3, 4), 0.1))
add("__and__.Tensor __or__.Tensor __xor__.Tensor", S(mask(3, 4), mask(4)))
add("__and__.Scalar __or__.Scalar __xor__.Scalar", S(ints(3, 5, 6), 3))
add("type_as", S(f(3, 4), np.zeros(2, dtype=np.float32)))
add("dropout", S(f(3, 4), 0.5, False))
add("_grad_sum_to_size", S(f(2, 3, 4), [3, 1]))
add("zeros_like ones_like", S(f(3, 4)))
add("empty_like rand_like randn_like", S(f(3, 4), random=True))
add("full_like", S(f(3, 4), 2.0))
add("_autocast_to_full_precision", S(f(3, 4), True, True))
add("_autocast_to_reduced_precision", S(f(3, 4), True, True, 5, 15))
add("to.dtype", S(f(3, 4), F32))
add("to.device", S(f(3, 4), "cpu", F32))
add("to.other", S(f(3, 4), np.zeros(2, dtype=np.float32)))
add("to.prim_Device", S(f(3, 4), "cpu", F32))
add("to.prim_dtype", S(f(3, 4), F32))
add("to.prim_other", S(f(3, 4), False, False))
add("to.dtype_layout", S(f(3, 4), F32, None, "cpu", None, False, False, None))

# -- in place (run on a clone of the input, as PyTorch requires of a leaf) ----------------------
add("add_.Tensor sub_.Tensor", S(f(3, 4), f(4), alpha=2))
add("add_.Scalar sub_.Scalar", S(f(3, 4), 1.5, 2))
add("mul_.Tensor", S(f(3, 4), f(4)))
add("div_.Tensor", S(f(3, 4), pos(4)))
add("mul_.Scalar div_.Scalar", S(f(3, 4), 1.5))
add("div_.Tensor_mode", S(f(3, 4) * 4, pos(4), rounding_mode="floor"))
add("div_.Scalar_mode", S(f(3, 4) * 4, 1.5, rounding_mode="trunc"))
add("relu_ sigmoid_ tanh_ exp_ neg_ hardswish_ silu_ zero_", S(f(3, 4)))
add("clamp_", S(f(3, 4), -0.5, 0.5))
add("clamp_.Tensor", S(f(3, 4), f(4) * 0.5 - 0.3, f(3, 1) * 0.5 + 0.3))
add("fill_.Scalar", S(f(3, 4), 2.0))
add("fill_.Tensor", S(f(3, 4), np.array(2.5)))
add("copy_", S(f(3, 4), f(4), False))
add("copy_.Tensor", S(f(3, 4), f(4)))
add("elu_", S(f(3, 4), 1.2, 0.9, 1.1))
add("leaky_relu_", S(f(3, 4), 0.2))
add("hardtanh_", S(f(3, 4), -0.5, 0.5))
add("masked_fill_.Scalar", S(f(3, 4), mask(4), 2.0))
add("masked_fill_.Tensor", S(f(3, 4), mask(3, 4), np.array(2.5)))
add("dropout_", S(f(3, 4), 0.5, False))

# -- activation backward kernels --------------------------------------------------------------
add("tanh_backward sigmoid_backward", S(f(3, 4), f(3, 4) * 0.9))
add("silu_backward hardswish_backward hardsigmoid_backward", S(f(3, 4), f(3, 4) * 4))
add("threshold_backward", S(f(3, 4), f(3, 4), 0.1))
add("gelu_backward", S(f(3, 4), f(3, 4), approximate="tanh"))
add("leaky_relu_backward", S(f(3, 4), f(3, 4), 0.2, False))
add("hardtanh_backward", S(f(3, 4), f(3, 4) * 2, -0.5, 0.5))
add("hardshrink_backward", S(f(3, 4), f(3, 4), 0.4))
add("softplus_backward", S(f(3, 4), f(3, 4), 2.0, 1.0))
add("elu_backward", S(f(3, 4), 1.2, 0.9, 1.1, False, f(3, 4)))
add("logit_backward", S(f(3, 4), f(3, 4, lo=0.1, hi=0.9), 0.05))

# -- reductions and statistics ----------------------------------------------------------------
add("sum mean", S(f(3, 4)))
add("sum.dim_IntList mean.dim", S(f(2, 3, 4), [0, 2], True))
add("nanmean", S(f(2, 3, 4), [1]))
add("prod", S(f(3, 4)))
add("prod.dim_int", S(f(3, 4), 1, True))
add("amax amin", S(np.round(f(3, 4) * 2) / 2, [1]))
add("max min", S(np.round(f(3, 4) * 2) / 2))
add("max.dim min.dim", S(f(3, 4), 1, True))
add("kthvalue", S(f(3, 4), 2, 1))
add("topk", S(f(3, 4), 2, 0))
add("sort", S(f(3, 4), 1, True))
add("sort.stable", S(f(3, 4), stable=True, dim=0))
add("argmax argmin", S(f(3, 4), 1))
add("cumsum", S(f(3, 4), 1, dtype=F32))
add("logsumexp", S(f(2, 3, 4), [0, 2]))
add("norm.Scalar", S(f(3, 4), 3))
add("norm.ScalarOpt_dim", S(f(3, 4), 2, [1], True))
add("norm.ScalarOpt_dim_dtype", S(f(3, 4), 1, [0], False, dtype=F64))
add("norm.ScalarOpt_dtype", S(f(3, 4), 2, dtype=F64))
add("std var", S(f(3, 4), False))
add("std.dim var.dim", S(f(3, 4), [1], True, True))
add("std.correction var.correction", S(f(2, 3, 4), [0, 2], correction=2, keepdim=False))
add("all any", S(mask(3, 4)))
add("all.dim any.dim", S(mask(3, 4), 1))
add("all.dims any.dims", S(mask(3, 4), [0]))
add("nonzero", S(f(3, 4)))
add("_dim_arange", S(f(3, 4), 1))

# -- views and copies -------------------------------------------------------------------------
add("view reshape _unsafe_view", S(f(3, 4), [2, 6]))
add("view.dtype", S(f(3, 4), F64))
add("view_as", S(f(3, 4), f(2, 6)))
add("flatten.using_ints", S(f(2, 3, 4), 1, 2))
add("unflatten.int", S(f(3, 4), 1, [2, 2]))
add("squeeze squeeze_copy", S(f(3, 1, 4)))
add("squeeze.dim squeeze_copy.dim", S(f(3, 1, 4), 1))
add("squeeze.dims squeeze_copy.dims", S(f(3, 1, 4, 1), [1, 3]))
add("unsqueeze unsqueeze_copy", S(f(3, 4), 1))
add("t", S(f(3, 4)))
add("transpose.int", S(f(2, 3, 4), 0, 2))
add("permute permute_copy", S(f(2, 3, 4), [2, 0, 1]))
add("expand", S(f(3, 1), [2, 3, 4]))
add("expand_as", S(f(3, 1), f(2, 3, 4)))
add("select.int", S(f(3, 4), 1, -1))
add("slice.Tensor", S(f(5, 4), 0, 1, 5, 2))
add("narrow", S(f(3, 5), 1, -3, 2))
add("narrow.Tensor", S(f(3, 5), 1, np.array(1), 3))
add("repeat", S(f(3, 2), [2, 1, 3]))
add("sum_to_size", S(f(2, 3, 4), [3, 1]))
add("pad", S(f(2, 3, 4), [1, 2, 0, 1], "reflect"))
add("index.Tensor", S(f(4, 3), [ints(0, 2, 2), None]))
add("index.Tensor_hacked_twin", S(f(4, 3), [ints(0, 2, 2), ints(1, 1, 0)]))
add("cat", S([f(2, 3), f(1, 3)], 0))
add("stack", S([f(2, 3), f(2, 3)], 1))
add("broadcast_tensors", S([f(3, 1), f(4), f(1, 1)]))
add("meshgrid", S([f(2), f(3)]))
add("meshgrid.indexing", S([f(2), f(3)], indexing="xy"))
add("chunk unsafe_chunk", S(f(5, 3), 2, 0))
add("split.Tensor unsafe_split.Tensor", S(f(5, 3), 2, 0))
add("split split.sizes split_with_sizes", S(f(5, 3), [1, 4], 0))
add("unbind.int", S(f(2, 3), 1))

# -- view backward kernels --------------------------------------------------------------------
add("select_backward", S(f(3), [2, 3], 0, 1))
add("slice_backward", S(f(2, 3), [5, 3], 0, 1, 5, 2))
add("value_selecting_reduction_backward", S(f(3), 1, ints(0, 3, 1), [3, 4], False))
add("gradview::split_with_sizes_backward", S([f(1, 3), None], [1, 4], 0, [5, 3]))
add("gradview::split_backward", S([f(2, 3), None, f(1, 3)], 2, 0, [5, 3]))
add("gradview::chunk_backward", S([f(3, 3), None], 2, 0, [5, 3]))
add("gradview::unbind_backward", S([f(3), None], 0, [2, 3]))


def matmul_grad_self(grad: torch.Tensor, other: torch.Tensor, self_size: list[int]) -> torch.Tensor:
    """matmul's vjp for self, as a differentiable PyTorch program."""
    self = torch.zeros(self_size, dtype=grad.dtype, requires_grad=True)
    return torch.autograd.grad(torch.matmul(self, other), self, grad, create_graph=True)[0]


def matmul_grad_other(grad: torch.Tensor, self: torch.Tensor, other_size: list[int]) -> torch.Tensor:
    """matmul's vjp for other, likewise."""
    other = torch.zeros(other_size, dtype=grad.dtype, requires_grad=True)
    return torch.autograd.grad(torch.matmul(self, other), other, grad, create_graph=True)[0]


add("gradview::matmul_grad_self", S(f(2, 5), f(3, 5), [2, 3], torch=matmul_grad_self))


def repeat_backward(grad: torch.Tensor, repeats: list[int], self_size: list[int]) -> torch.Tensor:
    """repeat's vjp, likewise."""
    self = torch.zeros(self_size, dtype=grad.dtype, requires_grad=True)
    return torch.autograd.grad(self.repeat(repeats), self, grad, create_graph=True)[0]


add("gradview::repeat_backward", S(f(2, 3, 2), [2, 1, 2], [3, 1], torch=repeat_backward))
add("gradview::matmul_grad_other", S(f(2, 5), f(2, 3), [3, 5], torch=matmul_grad_other))


def index_backward(grad: torch.Tensor, self_size: list[int], indices: list[Any]) -> torch.Tensor:
    """index's vjp, as a differentiable PyTorch program."""
    self = torch.zeros(self_size, dtype=grad.dtype, requires_grad=True)
    out = torch.ops.aten.index.Tensor(self, indices)
    return torch.autograd.grad(out, self, grad, create_graph=True)[0]


def pad_backward(grad: torch.Tensor, self_size: list[int], pad: list[int], mode: str) -> torch.Tensor:
    """pad's vjp, likewise."""
    self = torch.zeros(self_size, dtype=grad.dtype, requires_grad=True)
    return torch.autograd.grad(F.pad(self, pad, mode), self, grad, create_graph=True)[0]


add("gradview::index_backward", S(f(3, 3), [4, 3], [ints(0, 2, 2), None], torch=index_backward))
add("gradview::meshgrid_backward", S([f(2, 3), None], [f(2), f(3)], "ij"))
add("gradview::pad_backward", S(f(2, 6), [2, 3], [1, 2], "reflect", torch=pad_backward))
add("gradview::cat_backward", S(f(3, 2), [1, 2], 0))
add("gradview::broadcast_tensors_backward", S([f(3, 4), None], [f(4), f(3, 1)]))

# -- linear algebra ---------------------------------------------------------------------------
add("mm", S(f(3, 4), f(4, 2)))
add("mm.dtype", S(f(3, 4), f(4, 2), F64))
add("bmm", S(f(2, 3, 4), f(2, 4, 2)))
add("bmm.dtype", S(f(2, 3, 4), f(2, 4, 2), F64))
add("addmm", S(f(2), f(3, 4), f(4, 2), beta=0.5, alpha=2))
add("addmm.dtype", S(f(3, 2), f(3, 4), f(4, 2), F64))
add("baddbmm", S(f(3, 2), f(2, 3, 4), f(2, 4, 2), beta=0.5, alpha=2))
add("baddbmm.dtype", S(f(2, 3, 2), f(2, 3, 4), f(2, 4, 2), F64))
add("mv", S(f(3, 4), f(4)))
add("dot", S(f(4), f(4)))
add("matmul", S(f(2, 3, 4), f(4)))
add("linear", S(f(2, 3, 4), f(5, 4), f(5)))
add("bilinear", S(f(4, 3), f(4, 2), f(5, 3, 2), f(5)))
add("gradview::bilinear_backward", S(f(4, 5), f(4, 3), f(4, 2), f(5, 3, 2),
    [True, True, True, True]))

# -- softmax, losses --------------------------------------------------------------------------
add("softmax.int log_softmax.int _safe_softmax", S(f(3, 4), 1))
add("_softmax _log_softmax", S(f(3, 4), 1, False))
add("_softmax_backward_data _log_softmax_backward_data", S(f(3, 4), f(3, 4, lo=0.1, hi=0.4), 1,
    F64))
_target, _target2d = ints(0, 3, 1, 1, 2), np.array([[0, 2], [1, 1]], dtype=np.int64)
add("mse_loss", S(f(3, 4), f(3, 4), 1))
add("mse_loss_backward", S(np.array(0.7), f(3, 4), f(3, 4), 1))
add("nll_loss nll_loss_nd", S(f(5, 4), _target, pos(4), 1, 3, frozen=(2,)))
add("nll_loss2d", S(f(2, 3, 2, 1), _target2d[:, :, None], None, 2, -100))
add("nll_loss_forward", S(f(5, 4), _target, None, 1, -100))
add("nll_loss2d_forward", S(f(2, 3, 2, 1), _target2d[:, :, None], None, 1, -100))
add("nll_loss_backward", S(np.array(0.7), f(5, 4), _target, None, 1, -100, np.array(5.0),
    frozen=(6,)))
add("nll_loss2d_backward", S(f(2, 2, 1), f(2, 3, 2, 1), _target2d[:, :, None], None, 0, -100,
    np.array(4.0), frozen=(6,)))
add("cross_entropy_loss", S(f(5, 4), _target, pos(4), 1, -100, 0.1, frozen=(2,)))
add("gradview::cross_entropy_loss_backward", S(np.array(0.7), f(5, 4), _target, None, 1, -100, 0.1,
    [True, False]))
add("gradview::nll_loss_nd_backward", S(np.array(0.7), f(5, 4), _target, None, 1, -100))

# -- convolutions and pools -------------------------------------------------------------------
_x2d, _w2d = f(2, 4, 5, 5), f(6, 2, 3, 3)  # groups=2
add("conv2d", S(_x2d, _w2d, f(6), [2, 1], [1, 0], [1, 2], 2))
add("conv2d.padding", S(_x2d, _w2d, f(6), [1, 1], "same", [1, 2], 2))
add("conv1d", S(f(2, 3, 7), f(4, 3, 3), f(4), [2], [1], [1], 1))
add("conv1d.padding", S(f(3, 7), f(4, 3, 4), None, [1], "same", [1], 1))
add("convolution", S(_x2d, _w2d, f(6), [1, 2], [1, 1], [1, 1], False, [0, 0], 2))
add("_convolution", S(_x2d, _w2d, f(6), [1, 2], [1, 1], [1, 1], False, [0, 0], 2, False, False,
    False, False))
add("_convolution.deprecated", S(_x2d, _w2d, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 2, False,
    False, False))
add("_convolution_mode", S(_x2d, _w2d, f(6), [1, 1], "same", [1, 1], 2))
add("_slow_conv2d_forward", S(f(2, 3, 5, 5), f(4, 3, 3, 3), [3, 3], f(4), [1, 2], [1, 1]))
add("_slow_conv2d_backward.output_mask", S(f(2, 4, 5, 3), f(2, 3, 5, 5), f(4, 3, 3, 3), [3, 3],
    [1, 2], [1, 1], [True, True, True]))
add("convolution_backward", S(f(2, 6, 3, 5), _x2d, _w2d, [6], [2, 1], [1, 1], [1, 1], False, [0, 0],
    2, [True, True, True]))


def _conv(
    i: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, s: Any, p: Any, d: Any, g: int
) -> torch.Tensor:
    return (F.conv2d if w.dim() == 4 else F.conv1d)(i, w, b, s, p, d, g)


def _conv_backward(
    go: torch.Tensor,
    i: torch.Tensor,
    w: torch.Tensor,
    s: Any,
    p: Any,
    d: Any,
    g: int,
    mask_: list[bool],
) -> tuple[torch.Tensor, ...]:
    """conv_backward as a differentiable PyTorch program: the vjp of the convolution."""
    out = _conv(i, w, None, s, p, d, g)
    gi, gw = torch.autograd.grad(out, (i, w), go, create_graph=True)
    dims = [0, *range(2, go.dim())] if go.dim() == w.dim() else list(range(1, go.dim()))
    return gi, gw, go.sum(dims)


add("gradview::conv", S(_x2d, _w2d, f(6), [2, 1], [1, 0], [1, 2], 2, torch=_conv))
add("gradview::conv.padding", S(f(4, 5, 5), _w2d, None, [1, 1], "same", [2, 1], 2, torch=_conv))
add("gradview::conv_backward", S(f(2, 6, 3, 5), _x2d, _w2d, [2, 1], [1, 1], [1, 1], 2,
    [True, True, True], torch=_conv_backward))
add("gradview::conv_backward.padding", S(f(2, 6, 5, 5), _x2d, _w2d, [1, 1], "same", [1, 2], 2,
    [True, True, True], torch=_conv_backward))
_pool_x = f(2, 3, 5, 5)
add("max_pool2d max_pool2d_with_indices", S(_pool_x, [2, 2], [2, 1], [1, 0], [1, 1], True))
_pool_indices = torch.ops.aten.max_pool2d_with_indices(torch.from_numpy(_pool_x), [2, 2], [2, 2])
_pool_indices = _pool_indices[1].numpy()


def _at_maxima(grad: torch.Tensor, *args: Any) -> torch.Tensor:
    """max_pool2d_double_backward: the gradient read at each window's maximum."""
    indices = args[-1]
    return grad.flatten(-2).gather(-1, indices.flatten(-2)).view_as(indices)


add("max_pool2d_with_indices_backward", S(f(2, 3, 2, 2), _pool_x, [2, 2], [2, 2], [0, 0], [1, 1],
    False, _pool_indices))
add("gradview::max_pool2d_double_backward", S(f(2, 3, 5, 5), _pool_x, [2, 2], [2, 2], [0, 0],
    [1, 1], False, _pool_indices, frozen=(1,), torch=_at_maxima))
add("avg_pool2d", S(_pool_x, [3, 2], [2, 1], [1, 0], True, False, None))
add("avg_pool2d_backward", S(f(2, 3, 3, 4), _pool_x, [3, 2], [2, 1], [1, 0], False, True, None))
add("adaptive_avg_pool2d _adaptive_avg_pool2d", S(_pool_x, [2, 3]))
add("adaptive_avg_pool1d", S(f(2, 3, 7), [3]))
add("_adaptive_avg_pool2d_backward", S(f(2, 3, 2, 3), _pool_x))
_pool3d_x = f(2, 2, 5, 4, 6)
add("adaptive_avg_pool3d _adaptive_avg_pool3d", S(_pool3d_x, [2, 3, 4]))
add("_adaptive_avg_pool3d_backward", S(f(2, 2, 2, 3, 4), _pool3d_x))

# -- normalization ----------------------------------------------------------------------------
_bn_x = f(4, 3, 2)
add("batch_norm", S(_bn_x, pos(3), f(3), pos(3), pos(3), True, 0.1, 1e-5, False, frozen=(3, 4)))
add("native_batch_norm", S(_bn_x, pos(3), f(3), pos(3), pos(3), True, 0.1, 1e-5, frozen=(3, 4)))
add("_native_batch_norm_legit", S(_bn_x, pos(3), f(3), pos(3), pos(3), True, 0.1, 1e-5,
    frozen=(3, 4)))
add("_native_batch_norm_legit.no_stats", S(_bn_x, pos(3), f(3), True, 0.1, 1e-5))
add("_native_batch_norm_legit_functional", S(_bn_x, pos(3), f(3), pos(3), pos(3), True, 0.1, 1e-5,
    frozen=(3, 4)))
add("_native_batch_norm_legit_no_training", S(_bn_x, pos(3), f(3), f(3), pos(3), 0.1, 1e-5,
    frozen=(3, 4)))
add("native_batch_norm_backward", S(f(4, 3, 2), _bn_x, pos(3), None, None, f(3), pos(3), True, 1e-5,
    [True, True, True]))
add("layer_norm", S(f(2, 3, 4), [3, 4], pos(3, 4), f(3, 4), 1e-5))
add("native_layer_norm", S(f(2, 3, 4), [4], pos(4), f(4), 1e-5))
add("native_layer_norm_backward", S(f(2, 4), f(2, 4), [4], f(2, 1), pos(2, 1), pos(4), f(4),
    [True, True, True]))
add("group_norm", S(f(2, 4, 3), 2, pos(4), f(4), 1e-5))
add("native_group_norm", S(f(2, 4, 3), pos(4), f(4), 2, 4, 3, 2, 1e-5))
add("native_group_norm_backward", S(f(2, 4, 3), f(2, 4, 3), f(2, 2), pos(2, 2), pos(4), 2, 4, 3, 2,
    [True, True, True]))

# -- embeddings -------------------------------------------------------------------------------
_idx, _offsets = ints(1, 0, 3, 1, 4), ints(0, 2)
add("embedding", S(f(5, 3), ints(1, 0, 3, 1), 1))
add("embedding_backward", S(f(4, 3), ints(1, 0, 3, 1), 5, 1, False, False))
add("embedding_dense_backward", S(f(4, 3), ints(1, 0, 3, 1), 5, -1, True))
add("embedding_bag", S(f(5, 3), _idx, _offsets, False, 1, False, None, False))
add("embedding_bag.padding_idx", S(f(5, 3), _idx, _offsets, False, 0, False, f(5), False, 1))
add("_embedding_bag", S(f(5, 3), _idx, _offsets, False, 2, False, None, False, -1))
_bag = torch.ops.aten._embedding_bag(
    torch.from_numpy(f(5, 3)), torch.from_numpy(_idx), torch.from_numpy(_offsets), False, 1
)
_offset2bag, _bag_size, _max_indices = (t.numpy() for t in _bag[1:])
add("_embedding_bag_backward", S(f(2, 3), _idx, _offsets, _offset2bag, _bag_size, _max_indices, 5,
    False, 1, False, None, -1))
add("_embedding_bag_dense_backward", S(f(2, 3), _idx, _offset2bag, _bag_size, _max_indices, 5,
    False, 1, None, -1))
add("_embedding_bag_per_sample_weights_backward", S(f(2, 3), f(5, 3), _idx, _offsets, _offset2bag,
    0, -1))

# -- recurrent and attention ------------------------------------------------------------------
_I, _H = 3, 2


def _cell_weights(gates: int) -> list[np.ndarray]:
    return [f(gates * _H, _I), f(gates * _H, _H), f(gates * _H), f(gates * _H)]


def _layer_params(gates: int, layers: int = 1) -> list[np.ndarray]:
    params = _cell_weights(gates)
    for _ in range(layers - 1):
        params += [f(gates * _H, _H), f(gates * _H, _H), f(gates * _H), f(gates * _H)]
    return params


add("lstm_cell", S(f(2, _I), [f(2, _H), f(2, _H)], *_cell_weights(4)))
add("gru_cell", S(f(2, _I), f(2, _H), *_cell_weights(3)))
add("lstm.input", S(f(2, 4, _I), [f(2, 2, _H), f(2, 2, _H)], _layer_params(4, 2), True, 2, 0.0,
    False, False, True))
add("gru.input", S(f(4, 2, _I), f(1, 2, _H), _layer_params(3), True, 1, 0.0, False, False, False))
_packed, _batch_sizes = f(5, _I), ints(2, 2, 1)
add("lstm.data", S(_packed, _batch_sizes, [f(1, 2, _H), f(1, 2, _H)], _layer_params(4), True, 1,
    0.0, False, False))
add("gru.data", S(_packed, _batch_sizes, f(1, 2, _H), _layer_params(3), True, 1, 0.0, False, False))
add("gradview::lstm_cell_backward", S(f(2, _H), f(2, _H), f(2, _I), [f(2, _H), f(2, _H)],
    *_cell_weights(4)))
add("gradview::gru_cell_backward", S(f(2, _H), f(2, _I), f(2, _H), *_cell_weights(3)))
add("gradview::lstm_backward", S(f(4, 2, _H), None, None, f(4, 2, _I), None,
    [f(1, 2, _H), f(1, 2, _H)], _layer_params(4), True, 1, False, False))
add("gradview::gru_backward", S(f(4, 2, _H), f(1, 2, _H), f(4, 2, _I), None, f(1, 2, _H),
    _layer_params(3), True, 1, False, False))
_q, _k, _v = f(2, 3, 4), f(2, 5, 4), f(2, 5, 4)
add("scaled_dot_product_attention", S(_q, _k, _v, f(3, 5), 0.0, False, scale=0.7))
add("gradview::scaled_dot_product_attention_backward", S(f(2, 3, 4), _q, _k, _v, None, False, None,
    False, [True, True, True, False]))
_E, _heads = 4, 2
add("_native_multi_head_attention", S(f(2, 3, _E), f(2, 3, _E), f(2, 3, _E), _E, _heads,
    f(3 * _E, _E), f(3 * _E), f(_E, _E), f(_E), None, True, True, None))
add("_transformer_encoder_layer_fwd", S(f(2, 3, _E), _E, _heads, f(3 * _E, _E), f(3 * _E),
    f(_E, _E), f(_E), False, False, 1e-5, pos(_E), f(_E), pos(_E), f(_E), f(8, _E), f(8), f(_E, 8),
    f(_E), None, None))

# -- the ops AOTAutograd's graphs (torch.compile) call ------------------------------------------
add("_to_copy", S(f(3, 4), dtype=F32))
add("copy", S(f(3, 4), f(4)))
add("slice_scatter", S(f(5, 4), f(5, 2), 1, 1, 4, 2))
add("new_empty_strided", S(f(3, 4), [2, 3], [3, 1], random=True))
add("var_mean", S(f(3, 4), False))
add("var_mean.dim", S(f(3, 4), [1], True, True))
add("var_mean.correction", S(f(2, 3, 4), [0, 2], correction=2, keepdim=False))
# p=0 in training keeps every element: the output is exact although the mask is gradview's own.
add("native_dropout", S(f(3, 4), 0.0, True))
add("native_dropout_backward", S(f(3, 4), mask(3, 4), 2.0))

# -- dropout and random draws (gradview's seeded values: shapes, flags and zero gradients) -------------
# In evaluation the dropouts are the identity: exact (tests/kernels/test_dropout.py checks training).
add("feature_dropout alpha_dropout feature_alpha_dropout", S(f(2, 3, 4), 0.5, False))
add("feature_dropout_ alpha_dropout_ feature_alpha_dropout_", S(f(2, 3, 4), 0.5, False))
add("bernoulli", S(f(3, 4, lo=0.1, hi=0.9), random=True))
add("bernoulli.p bernoulli_.float", S(f(3, 4), 0.3, random=True))
add("bernoulli.Tensor bernoulli_.Tensor", S(f(3, 4), f(3, 4, lo=0.1, hi=0.9), random=True))
add("normal.Tensor_Tensor", S(f(3, 4), pos(4), random=True))
add("normal.Tensor_float", S(f(3, 4), 0.5, random=True))
add("normal.float_Tensor", S(0.5, pos(3, 4), random=True))
add("normal_ log_normal_", S(f(3, 4), 0.5, 0.7, random=True))
add("uniform_", S(f(3, 4), -1.0, 2.0, random=True))
add("exponential_", S(f(3, 4), 2.0, random=True))
add("geometric_", S(f(3, 4), 0.3, random=True))
add("cauchy_", S(f(3, 4), 0.0, 1.0, random=True))
add("multinomial", S(pos(2, 5), 3, False, random=True))
# (Eager gives randint_like of a tensor requiring grad a NotImplemented grad_fn; TorchScript's
# PropagateRequiresGrad, which gradview follows, says its result needs none.)
add("randint_like", S(f(3, 4), 10, random=True, frozen=(0,)))
add("randint_like.low_dtype", S(f(3, 4), 2, 10, random=True, frozen=(0,)))
add("gradview::dropout_noise", S(f(2, 3, 4), 0.5, True, True, False, random=True))
_fq, _fk, _fv = f(2, 3, 5, 4), f(2, 3, 6, 4), f(2, 3, 6, 4)
add("_scaled_dot_product_flash_attention_for_cpu", S(_fq, _fk, _fv, 0.0, True, scale=0.7))
_fout, _flse = (
    t.numpy()
    for t in torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        torch.tensor(_fq), torch.tensor(_fk), torch.tensor(_fv), 0.0, True, scale=0.7
    )
)
add("_scaled_dot_product_flash_attention_for_cpu_backward", S(f(2, 3, 5, 4), _fq, _fk, _fv, _fout,
    _flse, 0.0, True, scale=0.7, frozen=(4, 5)))

# -- issue 22's ops, one module per family (each adds to SAMPLES): neural-network ops; shape,
# view, layout and factory ops
from . import op_gradient_samples_nn, op_gradient_samples_reductions, op_gradient_samples_shapes  # noqa: E402, F401, I001
from . import op_gradient_samples_fft  # noqa: E402, F401 - the FFT family
from . import op_gradient_samples_linalg  # noqa: E402, F401 - torch.linalg and its aliases
from . import op_gradient_samples_indexing  # noqa: E402, F401 - the indexing family
from . import op_gradient_samples_special  # noqa: E402, F401 - the special functions
from . import op_gradient_samples_bessel  # noqa: E402, F401 - the Bessel family
from . import op_gradient_samples_orthogonal_polynomials  # noqa: E402, F401 - the orthogonal polynomials

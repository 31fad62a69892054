"""The catalogue's sample calls for issue 22's reductions, scans, sorts, statistics,
searches, histograms and products: see op_gradient_samples.py, which imports this
module at its end to add them to SAMPLES."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .op_gradient_samples import S, add, f

__all__: list[str] = []

_sorted = np.sort(f(6))
add("count_nonzero", S(f(3, 4), 1))
add("count_nonzero.dim_IntList", S(f(3, 4), [0, 1]))
add("searchsorted.Tensor", S(_sorted, f(3, 4), frozen=(0, 1)))
add("searchsorted.Scalar", S(_sorted, 0.25, frozen=(0,)))
add("bucketize.Tensor", S(f(3, 4), _sorted, frozen=(0, 1)))
add("bucketize.Scalar", S(0.25, _sorted, frozen=(1,)))
add("histc", S(f(3, 4), 5, -1.0, 1.0, frozen=(0,)))
add("histogram.bin_ct", S(f(3, 4), 5, frozen=(0,)))
add("histogram.bins_tensor", S(f(3, 4), _sorted, frozen=(0, 1)))
add("histogramdd", S(f(5, 2), [3, 4], frozen=(0,)))
add("histogramdd.int_bins", S(f(5, 2), 3, frozen=(0,)))
add("histogramdd.TensorList_bins", S(f(5, 2), [np.sort(f(4)), np.sort(f(3))], frozen=(0,)))
add("_unique2", S(np.round(f(3, 4)), True, True, True, frozen=(0,)))
add("unique_consecutive", S(np.round(f(3, 4)), True, True, 1, frozen=(0,)))
add("unique_dim", S(np.round(f(3, 4)), 0, True, True, True, frozen=(0,)))

# -- products ----------------------------------------------------------------------------------
add("addmv", S(f(3), f(3, 4), f(4), beta=0.5, alpha=2.0))
add("addr", S(f(3, 4), f(3), f(4), beta=0.5, alpha=2.0))
add("addbmm", S(f(3, 5), f(2, 3, 4), f(2, 4, 5), beta=0.5, alpha=2.0))
add("inner", S(f(2, 4), f(3, 4)))
add("outer", S(f(3), f(4)))
add("vdot", S(f(4), f(4)))
add("tensordot", S(f(2, 3, 4), f(4, 3, 5), [1, 2], [1, 0]))
add("einsum", S("ij,jk->ik", [f(2, 3), f(3, 4)]))
add("trace", S(f(3, 4)))


def _vjp(forward: Callable[..., torch.Tensor], tensors: int) -> Callable[..., Any]:
    """The vjp of ``forward(*args)`` with respect to its first ``tensors`` arguments."""

    def vjp(grad: torch.Tensor, *args: Any) -> Any:
        leaves = [a.detach().requires_grad_(True) for a in args[:tensors]]
        found = torch.autograd.grad(forward(*leaves, *args[tensors:]), leaves, grad, create_graph=True)
        return found if tensors > 1 else found[0]

    return vjp


add("gradview::inner_backward", S(f(2, 3), f(2, 4), f(3, 4), torch=_vjp(torch.inner, 2)))
add("gradview::tensordot_backward", S(f(2, 5), f(2, 3, 4), f(4, 3, 5), [1, 2], [1, 0],
                                      torch=_vjp(lambda a, b, da, db: torch.tensordot(a, b, (da, db)), 2)))
add("gradview::trace_backward", S(np.full((), 0.7), f(3, 4), torch=_vjp(torch.trace, 1)))


def _einsum_vjp(grad: torch.Tensor, equation: str, tensors: list[torch.Tensor], path: Any = None) -> Any:
    leaves = [t.detach().requires_grad_(True) for t in tensors]
    return list(torch.autograd.grad(torch.einsum(equation, *leaves), leaves, grad, create_graph=True))


add("gradview::einsum_backward", S(f(2, 4), "ij,jk->ik", [f(2, 3), f(3, 4)], torch=_einsum_vjp))

# -- sorts and scans ---------------------------------------------------------------------------
add("argsort", S(f(3, 4), 1, True))
add("argsort.stable", S(f(3, 4), stable=True, dim=0))
add("msort", S(f(3, 4)))
add("cummax cummin", S(f(3, 4), 1))
_with_zeros = f(3, 5)
_with_zeros[0, 1] = _with_zeros[1, 2] = _with_zeros[1, 4] = 0.0
add("cumprod", S(_with_zeros, 1))
add("logcumsumexp", S(f(3, 4), 0))
_cm = torch.cummax(torch.tensor(_with_zeros), 1)
add("gradview::cummaxmin_backward", S(f(3, 5), _with_zeros, _cm.indices.numpy(), 1,
                                      torch=lambda g, x, i, d: torch.zeros_like(x).scatter_add(d, i, g)))
add("gradview::cumprod_backward", S(f(3, 5), _with_zeros, 1, None,
                                    torch=_vjp(lambda x, d, t: torch.cumprod(x, d, dtype=t), 1)))
add("gradview::logcumsumexp_backward", S(f(3, 4), f(3, 4), 0, torch=_vjp(torch.logcumsumexp, 1)))

# -- statistics --------------------------------------------------------------------------------
add("nansum", S(np.where(f(3, 4) > 0.5, np.nan, f(3, 4)), [1], False))
add("aminmax", S(f(3, 4), dim=1, keepdim=True))
add("median nanmedian", S(f(3, 5)))
add("median.dim nanmedian.dim", S(f(3, 5), 1, False))
add("mode", S(np.round(f(3, 6) * 2), 1, False))
add("std_mean", S(f(3, 4), False))
add("std_mean.dim", S(f(3, 4), [1], True, True))
add("std_mean.correction", S(f(3, 4), [0], correction=2, keepdim=False))
_amm = f(3, 4)
_low, _high = (t.numpy() for t in torch.aminmax(torch.tensor(_amm), dim=1))


def _aminmax_vjp(g_min: Any, g_max: Any, x: torch.Tensor, *rest: Any) -> Any:
    leaf = x.detach().requires_grad_(True)
    low, high = torch.aminmax(leaf, dim=1)
    return torch.autograd.grad((low, high), leaf, (g_min, g_max), create_graph=True)[0]


add("gradview::aminmax_backward", S(f(3), f(3), _amm, _low, _high, 1, False, frozen=(3, 4), torch=_aminmax_vjp))
_qx, _q = f(3, 5), np.array([0.2, 0.5, 0.9])
_qx[1, 2] = np.nan
add("quantile nanquantile", S(_qx, _q, 1, False, interpolation="linear"))
add("quantile.scalar nanquantile.scalar", S(_qx, 0.3, 0, True, interpolation="midpoint"))


def _quantile_vjp(op: Any) -> Any:
    def vjp(grad: torch.Tensor, x: torch.Tensor, q: Any, *args: Any) -> Any:
        leaves = [x.detach().requires_grad_(True)]
        if isinstance(q, torch.Tensor):
            q = q.detach().requires_grad_(True)
            leaves.append(q)
        found = torch.autograd.grad(op(leaves[0], q, *args[:2], interpolation=args[2]), leaves, grad,
                                    create_graph=True)
        return found if len(found) > 1 else found[0]

    return vjp


for _name in ("quantile", "nanquantile"):
    _op = getattr(torch, _name)
    add(f"gradview::{_name}_backward", S(f(3, 3), _qx, _q, 1, False, "linear", torch=_quantile_vjp(_op)))
    add(f"gradview::{_name}_scalar_backward", S(f(1, 5), _qx, 0.3, 0, True, "lower", torch=_quantile_vjp(_op)))

# -- distances ---------------------------------------------------------------------------------
add("dist", S(f(3, 4), f(4), 3))
add("pairwise_distance", S(f(3, 4), f(3, 4), 1.5, 1e-6, True))
add("cosine_similarity", S(f(3, 4), f(1, 4), 1, 1e-8))
add("cdist", S(f(2, 3, 4), f(2, 5, 4), 2.0, None))
add("pdist", S(f(4, 3), 2.0))


def _pair_vjp(op: Any) -> Any:
    def vjp(grad: torch.Tensor, a: torch.Tensor, b: torch.Tensor, *args: Any) -> Any:
        leaves = [a.detach().requires_grad_(True), b.detach().requires_grad_(True)]
        return torch.autograd.grad(op(*leaves, *args), leaves, grad, create_graph=True)

    return vjp


add("gradview::dist_backward", S(np.full((), 0.7), f(3, 4), f(4), 3, torch=_pair_vjp(torch.dist)))
add("gradview::pairwise_distance_backward", S(f(3, 1), f(3, 4), f(3, 4), 1.5, 1e-6, True,
                                              torch=_pair_vjp(torch.pairwise_distance)))
add("gradview::cosine_similarity_backward", S(f(3), f(3, 4), f(1, 4), 1, 1e-8,
                                              torch=_pair_vjp(torch.cosine_similarity)))
add("gradview::cdist_backward", S(f(2, 3, 5), f(2, 3, 4), f(2, 5, 4), 1.0, None,
                                  torch=_pair_vjp(lambda a, b, p, m: torch.cdist(a, b, p))))
add("gradview::pdist_backward", S(f(6), f(4, 3), 2.0, torch=_vjp(torch.pdist, 1)))

# -- differences and integrals -----------------------------------------------------------------
add("diff", S(f(3, 4), 2, 1, f(3, 1), f(3, 2)))
add("trapezoid.x trapz.x cumulative_trapezoid.x", S(f(3, 4), np.sort(f(4)), dim=1))
add("trapezoid.dx cumulative_trapezoid.dx", S(f(3, 4), dx=0.5, dim=0))
add("trapz.dx", S(f(3, 4), dx=0.5, dim=0))
_coords = [np.sort(f(4)), np.sort(f(5))]
add("gradient.scalarint", S(f(4, 5), spacing=2.0, dim=None, edge_order=1))
add("gradient.scalararray", S(f(4, 5), spacing=0.5, dim=[1], edge_order=2))
add("gradient.array", S(f(4, 5), dim=[0, 1], edge_order=1))
add("gradient.scalarrayint", S(f(4, 5), spacing=[1.5], dim=1, edge_order=2))
add("gradient.scalarrayarray", S(f(4, 5), spacing=[1.5, 0.5], dim=[0, 1], edge_order=1))
add("gradient.tensorarrayint", S(f(4, 5), spacing=[_coords[1]], dim=1, edge_order=2, frozen=(1,)))
add("gradient.tensorarray", S(f(4, 5), spacing=_coords, dim=[0, 1], edge_order=1, frozen=(1,)))


def _diff_vjp(grad: torch.Tensor, x: torch.Tensor, n: int, dim: int, pre: torch.Tensor, app: torch.Tensor) -> Any:
    leaves = [t.detach().requires_grad_(True) for t in (x, pre, app)]
    return torch.autograd.grad(torch.diff(leaves[0], n, dim, leaves[1], leaves[2]), leaves, grad, create_graph=True)


add("gradview::diff_backward", S(f(3, 5), f(3, 4), 2, 1, f(3, 1), f(3, 2), torch=_diff_vjp))
for _name, _fn in (("trapezoid", torch.trapezoid), ("trapz", torch.trapz),
                   ("cumulative_trapezoid", torch.cumulative_trapezoid)):
    _out = tuple(_fn(torch.zeros(3, 4), torch.zeros(4), dim=1).shape)
    add(f"gradview::{_name}_x_backward", S(f(*_out), f(3, 4), np.sort(f(4)), 1,
                                          torch=_vjp(lambda y, x, d, fn=_fn: fn(y, x, dim=d), 2)))
    _out = tuple(_fn(torch.zeros(3, 4), dx=0.5, dim=0).shape)
    add(f"gradview::{_name}_dx_backward", S(f(*_out), f(3, 4), 0.5, 0,
                                           torch=_vjp(lambda y, dx, d, fn=_fn: fn(y, dx=dx, dim=d), 1)))


def _gradient_vjp(*names: str) -> Any:
    """The vjp of torch.gradient with respect to its input, for the backward's arguments
    ``grads, self, <names...>, edge_order``."""

    def vjp(grads: list[torch.Tensor], x: torch.Tensor, *args: Any) -> Any:
        leaf = x.detach().requires_grad_(True)
        kwargs = dict(zip(names, args[:-1], strict=True))
        if isinstance(kwargs.get("spacing"), list) and kwargs["spacing"] and isinstance(kwargs["spacing"][0], float):
            kwargs["spacing"] = tuple(kwargs["spacing"])
        outs = torch.gradient(leaf, **kwargs, edge_order=args[-1])
        return torch.autograd.grad(outs, leaf, grads, create_graph=True)[0]

    return vjp


add("gradview::gradient_scalarint_backward", S([f(4, 5), f(4, 5)], f(4, 5), 2.0, None, 1,
                                                torch=_gradient_vjp("spacing", "dim")))
add("gradview::gradient_scalararray_backward", S([f(4, 5)], f(4, 5), 0.5, [1], 2, torch=_gradient_vjp("spacing", "dim")))
add("gradview::gradient_array_backward", S([f(4, 5), f(4, 5)], f(4, 5), [0, 1], 1, torch=_gradient_vjp("dim")))
add("gradview::gradient_scalarrayint_backward", S([f(4, 5)], f(4, 5), [1.5], 1, 2, torch=_gradient_vjp("spacing", "dim")))
add("gradview::gradient_scalarrayarray_backward", S([f(4, 5), f(4, 5)], f(4, 5), [1.5, 0.5], [0, 1], 1,
                                                     torch=_gradient_vjp("spacing", "dim")))
add("gradview::gradient_tensorarrayint_backward", S([f(4, 5)], f(4, 5), [_coords[1]], 1, 2, frozen=(2,),
                                                     torch=_gradient_vjp("spacing", "dim")))
add("gradview::gradient_tensorarray_backward", S([f(4, 5), f(4, 5)], f(4, 5), _coords, [0, 1], 1, frozen=(2,),
                                                  torch=_gradient_vjp("spacing", "dim")))

# -- cov, corrcoef, cross ------------------------------------------------------------------------
add("cov", S(f(3, 5), correction=1, fweights=np.array([1, 2, 1, 3, 1]), aweights=f(5, lo=0.5, hi=1.0)))
add("corrcoef", S(f(3, 5)))
add("cross", S(f(2, 3), f(2, 3), 1))


def _cov_vjp(grad: torch.Tensor, x: torch.Tensor, correction: int, fw: Any, aw: Any) -> Any:
    leaves = [x.detach().requires_grad_(True), aw.detach().requires_grad_(True)]
    out = torch.cov(leaves[0], correction=correction, fweights=fw, aweights=leaves[1])
    return torch.autograd.grad(out, leaves, grad, create_graph=True)


add("gradview::cov_backward", S(f(3, 3), f(3, 5), 1, np.array([1, 2, 1, 3, 1]), f(5, lo=0.5, hi=1.0),
                                torch=_cov_vjp))
add("gradview::corrcoef_backward", S(f(3, 3), f(3, 5), torch=_vjp(torch.corrcoef, 1)))
add("gradview::cross_backward", S(f(2, 3), f(2, 3), f(2, 3), 1,
                                  torch=_vjp(lambda a, b, d: torch.cross(a, b, dim=d), 2)))
add("renorm", S(f(3, 4), 2, 0, 0.5))
add("gradview::renorm_backward", S(f(3, 4), f(3, 4), 2, 0, 0.5, torch=_vjp(torch.renorm, 1)))

"""PropagateRequiresGrad on results PyTorch never lets require grad although their
input does: the ``*_like`` factories (their values do not depend on the input's)
and ``view.dtype`` (a reinterpretation of the bits), checked against eager PyTorch.
(TorchScript cannot trace or script ``view.dtype``, so the graph is written by hand.)"""

from __future__ import annotations

import torch

from gradview.ir import parse_ir
from gradview.ir.passes.propagate_requires_grad import propagate_requires_grad

GRAPH = """graph(%x : Double(2, 3, strides=[3, 1], requires_grad=1, device=cpu)):
  %none : NoneType = prim::Constant()
  %two : float = prim::Constant[value=2.]()
  %f64 : int = prim::Constant[value=7]()
  %i64 : int = prim::Constant[value=4]()
  %e : Tensor = aten::empty_like(%x, %none, %none, %none, %none, %none)
  %r : Tensor = aten::rand_like(%x, %none, %none, %none, %none, %none)
  %n : Tensor = aten::randn_like(%x, %none, %none, %none, %none, %none)
  %f : Tensor = aten::full_like(%x, %two, %none, %none, %none, %none, %none)
  %z : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %v : Tensor = aten::view(%x, %f64)
  %w : Tensor = aten::view(%x, %i64)
  %m : Tensor = aten::mul(%x, %two)
  return (%e, %r, %n, %f, %z, %v, %w, %m)
"""


def eager(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    a = torch.ops.aten
    return (
        torch.empty_like(x),
        torch.rand_like(x),
        torch.randn_like(x),
        torch.full_like(x, 2.0),
        torch.zeros_like(x),
        a.view.dtype(x, torch.float64),
        a.view.dtype(x, torch.int64),
        x * 2.0,
    )


def test_like_factories_and_dtype_views_do_not_require_grad() -> None:
    x = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
    expected = [r.requires_grad for r in eager(x)]
    assert expected == [False] * 7 + [True]
    graph = parse_ir(GRAPH)
    propagate_requires_grad(graph)
    kinds = [v.node.maybe_schema().qualified_name for v in graph.outputs()]
    assert kinds[5:7] == ["aten::view.dtype", "aten::view.dtype"]
    flags = [v.type().requires_grad for v in graph.outputs()]
    assert flags == expected, list(zip(kinds, flags, strict=True))

"""Shape rules of the backward helpers (each declared in its op family, gradview.ops).

PyTorch's own ops are traced (every value typed by PyTorch), their types reset,
and ``propagate_input_shapes`` must find them again; running each graph must give
arrays of the inferred types. The ``gradview::`` helpers have no PyTorch twin:
their graphs are written by hand and checked against what their kernels return.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from gradview.ir import TensorType, parse_ir
from gradview.ir.passes.propagate_input_shapes import propagate_input_shapes

from ..ir.passes.shape_oracle import (
    agrees_where_known,
    reset_copy,
    run_and_compare_types,
    traced_text,
    type_mismatches,
)

pytestmark = pytest.mark.filterwarnings("ignore")

A = torch.ops.aten


def _x(*shape: int, dtype: torch.dtype = torch.double) -> torch.Tensor:
    return torch.randn(shape, dtype=dtype)


TRACED: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "select_backward": (
        lambda g: (A.select_backward(g, [2, 3, 4], 1, -1), A.select_backward(g[0], [3, 4], 0, 2)),
        (_x(2, 4),),
    ),
    "slice_backward": (
        lambda g: (
            A.slice_backward(g, [5, 4], 0, 1, 5, 2),
            A.slice_backward(g.t(), [4, 5], 1, 0, 2, 1),
        ),
        (_x(2, 4),),
    ),
    "value_selecting": (
        lambda g, i: (
            A.value_selecting_reduction_backward(g, 1, i, [3, 4], False),
            A.value_selecting_reduction_backward(g.unsqueeze(1), 1, i.unsqueeze(1), [3, 4], True),
        ),
        (_x(3), torch.tensor([0, 3, 1])),
    ),
}


@pytest.mark.parametrize("case", TRACED)
def test_traced_types_are_found_again(case: str) -> None:
    fn, inputs = TRACED[case]
    reference, graph = reset_copy(traced_text(fn, inputs))
    propagate_input_shapes(graph)
    graph.lint()
    assert agrees_where_known(reference, graph) == []
    assert type_mismatches(reference, graph) == []
    assert run_and_compare_types(graph, [t.numpy() for t in inputs]) > 0


# -- gradview's helpers, written by hand ----------------------------------------------------------
def _double(*shape: int) -> str:
    return f"Double({', '.join(map(str, shape))}, device=cpu)"


HELPERS: dict[str, tuple[str, list[Any], list[str]]] = {
    # (graph, inputs, the inferred type of each returned value)
    "joined_pieces": (
        f"""graph(%a : {_double(1, 3)}, %b : {_double(4, 3)}, %c : {_double(3)}):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %sizes : int[] = prim::Constant[value=[5, 3]]()
  %split : int[] = prim::Constant[value=[1, 4]]()
  %ub : int[] = prim::Constant[value=[2, 3]]()
  %l : Tensor?[] = prim::ListConstruct(%a, %b)
  %m : Tensor?[] = prim::ListConstruct(%none, %none, %a)
  %n : Tensor?[] = prim::ListConstruct(%c, %none)
  %s : Tensor = gradview::split_with_sizes_backward(%l, %split, %zero, %sizes)
  %t : Tensor = gradview::split_backward(%m, %two, %zero, %sizes)
  %u : Tensor = gradview::unbind_backward(%n, %zero, %ub)
  return (%s, %t, %u)
""",
        [np.ones((1, 3)), np.ones((4, 3)), np.ones(3)],
        [_double(5, 3), _double(5, 3), _double(2, 3)],
    ),
    "sized_by_argument": (
        f"""graph(%g : {_double(2, 5)}, %o : {_double(3, 5)}, %s : {_double(2, 3)}, %i : Long(3, device=cpu)):
  %none : NoneType = prim::Constant()
  %self_size : int[] = prim::Constant[value=[2, 3]]()
  %other_size : int[] = prim::Constant[value=[3, 5]]()
  %pad_size : int[] = prim::Constant[value=[2, 2]]()
  %pad : int[] = prim::Constant[value=[1, 2]]()
  %mode : str = prim::Constant[value="constant"]()
  %index_size : int[] = prim::Constant[value=[4, 5]]()
  %gs : Tensor = gradview::matmul_grad_self(%g, %o, %self_size)
  %go : Tensor = gradview::matmul_grad_other(%g, %s, %other_size)
  %gp : Tensor = gradview::pad_backward(%g, %pad_size, %pad, %mode)
  %indices : Tensor?[] = prim::ListConstruct(%i)
  %gi : Tensor = gradview::index_backward(%o, %index_size, %indices)
  return (%gs, %go, %gp, %gi)
""",
        [np.ones((2, 5)), np.ones((3, 5)), np.ones((2, 3)), np.array([0, 3, 3])],
        [_double(2, 3), _double(3, 5), _double(2, 2), _double(4, 5)],
    ),
    "losses_and_bilinear": (
        f"""graph(%g : Double(device=cpu), %x : {_double(5, 4)}, %t : Long(5, device=cpu),
      %gb : {_double(4, 5)}, %x1 : {_double(4, 3)}, %x2 : {_double(4, 2)}, %w : {_double(5, 3, 2)}):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %ignore : int = prim::Constant[value=-100]()
  %smooth : float = prim::Constant[value=0.1]()
  %mask2 : bool[] = prim::Constant[value=[1, 0]]()
  %mask4 : bool[] = prim::Constant[value=[1, 1, 1, 1]]()
  %dx : Tensor, %dt : Tensor = gradview::cross_entropy_loss_backward(%g, %x, %t, %none, %one, %ignore, %smooth, %mask2)
  %dn : Tensor = gradview::nll_loss_nd_backward(%g, %x, %t, %none, %one, %ignore)
  %d1 : Tensor, %d2 : Tensor, %dw : Tensor, %db : Tensor = gradview::bilinear_backward(%gb, %x1, %x2, %w, %mask4)
  return (%dx, %dn, %d1, %d2, %dw, %db)
""",
        [
            np.array(0.7),
            np.ones((5, 4)),
            np.array([0, 3, 1, 1, 2]),
            np.ones((4, 5)),
            np.ones((4, 3)),
            np.ones((4, 2)),
            np.ones((5, 3, 2)),
        ],
        [_double(5, 4), _double(5, 4), _double(4, 3), _double(4, 2), _double(5, 3, 2), _double(5)],
    ),
    "list_results": (
        f"""graph(%g : {_double(3, 4)}, %a : {_double(4)}, %b : {_double(3, 1)}, %c : {_double(3, 2)},
      %d : {_double(3)}, %e : {_double(4)}):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %lengths : int[] = prim::Constant[value=[1, 2]]()
  %ij : str = prim::Constant[value="ij"]()
  %grads : Tensor?[] = prim::ListConstruct(%g, %none)
  %tensors : Tensor[] = prim::ListConstruct(%a, %b)
  %bt : Tensor?[] = gradview::broadcast_tensors_backward(%grads, %tensors)
  %ga : Tensor, %gb : Tensor = prim::ListUnpack(%bt)
  %axes : Tensor[] = prim::ListConstruct(%d, %e)
  %mg : Tensor?[] = gradview::meshgrid_backward(%grads, %axes, %ij)
  %ma : Tensor, %mb : Tensor = prim::ListUnpack(%mg)
  %pieces : Tensor[] = gradview::cat_backward(%c, %lengths, %zero)
  %p0 : Tensor, %p1 : Tensor = prim::ListUnpack(%pieces)
  return (%ga, %ma, %p0, %p1)
""",
        [np.ones((3, 4)), np.ones(4), np.ones((3, 1)), np.ones((3, 2)), np.ones(3), np.ones(4)],
        [_double(4), _double(3), _double(1, 2), _double(2, 2)],
    ),
}


@pytest.mark.parametrize("case", HELPERS)
def test_backward_helpers_have_their_inputs_shapes(case: str) -> None:
    text, inputs, expected = HELPERS[case]
    graph = parse_ir(text)
    propagate_input_shapes(graph)
    graph.lint()
    found = []
    for value in graph.outputs():
        t = value.type()
        assert isinstance(t, TensorType), f"%{value.debug_name()}: {t}"
        found.append(str(TensorType(t.scalar_type, t.sizes, None, None, t.device)))
    assert found == expected
    assert run_and_compare_types(graph, inputs) >= len(expected)

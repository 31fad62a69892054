"""The catalogue's sample calls for issue 22's shape, view, layout and factory ops
(flips, diagonals, windows, stacks and splits, padding, factories): see
op_gradient_samples.py, which imports this module at its end to add them to SAMPLES.

gradview's own backward helpers are checked against PyTorch's vjp of the forward
op, computed with ``create_graph`` so their own gradients are compared too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .op_gradient_samples import F64, S, add, f, ints

__all__: list[str] = []


def _vjp(forward: Callable[..., torch.Tensor]) -> Callable[..., Any]:
    """The vjp of ``forward(self, *args)`` for a gradient and the input's sizes."""

    def vjp(grad: torch.Tensor, *args: Any) -> Any:
        *rest, self_size = args
        self = torch.zeros(self_size, dtype=grad.dtype, requires_grad=True)
        return torch.autograd.grad(forward(self, *rest), self, grad, create_graph=True)[0]

    return vjp


def _as_strided_backward(grad: torch.Tensor, input_sizes: list[int], *args: Any) -> torch.Tensor:
    return _vjp(lambda x: torch.as_strided(x, *args))(grad, input_sizes)


def _list_vjp(forward: Callable[[list[torch.Tensor]], torch.Tensor]) -> Callable[..., Any]:
    """The vjp of ``forward(tensors)`` for every tensor of the list, differentiable again."""

    def vjp(grad: torch.Tensor, tensors: list[torch.Tensor], *_: Any) -> Any:
        leaves = [t.detach().requires_grad_() for t in tensors]
        return list(torch.autograd.grad(forward(leaves), leaves, grad, create_graph=True))

    return vjp


# -- views (ops/views.py) ---------------------------------------------------------------------
add("flip", S(f(3, 4, 2), [0, 2]))
add("fliplr flipud", S(f(3, 4)))
add("roll", S(f(3, 4), [1, -2], [0, 1]))
add("rot90", S(f(3, 4, 2), 3, [2, 0]))
add("diag", S(f(4), 1))
add("diag_embed", S(f(2, 3), 1, 0, 2))
add("diagflat", S(f(2, 2), -1))
add("diagonal diagonal_copy", S(f(3, 4, 2), 1, 1, 0))
add("diagonal_backward", S(f(2, 2), [3, 4, 2], 1, 1, 0))
add("tril triu", S(f(2, 3, 4), 1))
add("narrow_copy", S(f(5, 3), 0, 1, 3))
add("unfold unfold_copy", S(f(2, 7), 1, 3, 2))
add("unfold_backward", S(f(2, 3, 3), [2, 7], 1, 3, 2))
add("movedim.intlist", S(f(2, 3, 4), [0, 2], [2, 1]))
add("movedim.int", S(f(2, 3, 4), 0, 2))
add("ravel", S(f(3, 4)))
add("reshape_as", S(f(3, 4), f(2, 6), frozen=(1,)))
add("numpy_T", S(f(2, 3, 4)))
add("mT mH", S(f(2, 3, 4)))
add("matrix_H", S(f(3, 4)))
add("broadcast_to expand_copy", S(f(3, 1), [2, 3, 4]))
add("atleast_1d atleast_2d atleast_3d", S(f(3)))
add("atleast_1d.Sequence atleast_2d.Sequence atleast_3d.Sequence", S([f(3), f(2, 2)]))
add("gradview::reshape_each", S([f(1, 3), None], [f(3), f(2, 2)]))
add("alias_copy", S(f(3, 4)))
add("view_copy", S(f(3, 4), [2, 6]))
add("transpose_copy.int", S(f(2, 3, 4), 0, 2))
add("as_strided as_strided_copy", S(f(4, 3), [3, 3], [3, 1], 1))
add(
    "gradview::as_strided_backward",
    S(f(3, 3), [4, 3], [3, 3], [3, 1], 1, torch=_as_strided_backward),
)
add("tile", S(f(2, 3), [2, 1, 2]))
add("gradview::tile_backward", S(f(2, 2, 6), [2, 1, 2], [2, 3], torch=_vjp(torch.tile)))
add("repeat_interleave.self_int", S(f(2, 3), 2, 1))
add(
    "gradview::repeat_interleave_backward",
    S(f(2, 6), 2, 1, [2, 3], torch=_vjp(lambda x, r, d: torch.repeat_interleave(x, r, d))),
)
add("repeat_interleave.self_Tensor", S(f(2, 3), ints(1, 0, 2), 1))
add(
    "gradview::repeat_interleave_tensor_backward",
    S(f(2, 3), ints(1, 0, 2), 1, [2, 3], torch=_vjp(lambda x, r, d: torch.repeat_interleave(x, r, d))),
)
add("kron", S(f(2, 3), f(3, 2)))


def _kron_backward(grad: torch.Tensor, self: torch.Tensor, other: torch.Tensor) -> Any:
    a = self.detach().requires_grad_()
    b = other.detach().requires_grad_()
    return torch.autograd.grad(torch.kron(a, b), (a, b), grad, create_graph=True)


add("gradview::kron_backward", S(f(6, 6), f(2, 3), f(3, 2), frozen=(1, 2), torch=_kron_backward))

# -- stacks and splits (ops/concat_split.py) --------------------------------------------------
add("hstack vstack dstack column_stack", S([f(3), f(3)]))
add("gradview::stack_backward", S(f(6), [f(3), f(3)], "hstack", frozen=(1,), torch=_list_vjp(torch.hstack)))
# (With a None among the gradients the filled zeros would require grad as the list does,
# where torch's fresh zeros do not: the sample passes defined gradients only.)
add("gradview::fill_undefined", S([f(3), f(2, 2)], [f(3), f(2, 2)], frozen=(1,), torch=lambda g, like: list(g)))
add("hsplit.int", S(f(2, 4), 2))
add("hsplit.array", S(f(2, 5), [1, 3]))
add("vsplit.int", S(f(4, 2), 2))
add("vsplit.array", S(f(5, 2), [3, 1]))
add("dsplit.int", S(f(2, 2, 4), 2))
add("dsplit.array", S(f(2, 2, 5), [2]))
add("tensor_split.sections", S(f(5, 2), 3, 0))
add("tensor_split.indices", S(f(2, 5), [1, 4], 1))
add("tensor_split.tensor_indices_or_sections", S(f(2, 5), ints(1, 3), 1))
add("gradview::split_pieces_backward", S([f(2, 2), f(2, 2)], [2, 4], "hsplit.int", [2], 0, torch=lambda g, size, *_: (
    _vjp(lambda x: torch.cat(torch.hsplit(x, 2)))(torch.cat(g), size)
)))
add("split_with_sizes_copy", S(f(5, 3), [1, 4], 0))
add("unbind_copy.int", S(f(2, 3), 1))
add("block_diag", S([f(2, 3), f(2), f(1, 1)]))
add("gradview::block_diag_backward", S(f(4, 6), [f(2, 3), f(2), f(1, 1)], frozen=(1,), torch=_list_vjp(
    lambda ts: torch.block_diag(*ts)
)))
add("cartesian_prod", S([f(2), f(3)]))
add("gradview::cartesian_prod_backward", S(f(6, 2), [f(2), f(3)], frozen=(1,), torch=_list_vjp(
    lambda ts: torch.cartesian_prod(*ts)
)))
add("combinations", S(f(4), 3, True))
add(
    "gradview::combinations_backward",
    S(f(6, 2), [4], 2, False, torch=lambda g, size, r, w: _vjp(lambda x: torch.combinations(x, r, w))(g, size)),
)
add("_chunk_cat", S([f(2, 3), f(2, 5)], 1, 2))

# -- padding and shuffles (ops/tensor_layout.py) ------------------------------------------------
add("constant_pad_nd", S(f(2, 3, 4), [1, -1, 2, 0], 0.5))
add("pixel_shuffle", S(f(1, 8, 2, 3), 2))
add("pixel_unshuffle", S(f(1, 2, 4, 6), 2))
add("channel_shuffle", S(f(2, 6, 3), 3))

# -- factories (ops/factories.py): no gradient; the Tensor overloads read start and end as numbers
add("new_zeros new_ones", S(f(2, 3), [3, 1]))
add("new_empty", S(f(2, 3), [3, 1], random=True))
add("new_full", S(f(2, 3), [3, 1], 1.5))
add("linspace.Tensor_Tensor", S(f(), f(), 5, dtype=F64))
add("linspace.Tensor_Scalar", S(f(), 2.5, 5, dtype=F64))
add("linspace.Scalar_Tensor", S(-1.5, f(), 5, dtype=F64))
add("logspace.Tensor_Tensor", S(f(), f(), 5, 2.0, dtype=F64))
add("logspace.Tensor_Scalar", S(f(), 2.5, 5, 2.0, dtype=F64))
add("logspace.Scalar_Tensor", S(-1.5, f(), 5, 2.0, dtype=F64))

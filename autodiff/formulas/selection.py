"""Gradient formulas of ops that *select* elements: max and min (whole tensor
or along a dim), topk, kthvalue and max pooling.

Such an op copies some input elements to its output, so its backward routes
each output gradient to the element it was copied from, and every other
element gets 0. The question is only *which* element:

* ops that return indices say it: ``max.dim``, ``min.dim``, ``kthvalue`` and
  ``topk`` scatter the gradient into a zero tensor of the input's size at
  those indices (``aten::value_selecting_reduction_backward``, PyTorch's own
  backward of them), and ``max_pool2d_with_indices`` hands its indices to
  ``max_pool2d_with_indices_backward``. Their indices output carries no
  gradient (for topk, kthvalue and max pooling only the values' gradient
  even enters the GradOf: ``need_trim_grad``), and the backward captures
  the indices, not the input;
* ``max(x)``/``min(x)`` over the whole tensor return no index, and PyTorch
  splits the gradient *evenly* among ties: each element equal to the result
  gets ``g / count`` (``evenly_distribute_backward``);
* ``max_pool2d`` returns no indices either: its backward recomputes them from
  the input (``max_pool2d_with_indices``), so it captures only the input.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ops.registry import Emitter, formula
from gradview.ops.static_info import (
    NOT_CONSTANT,
    const,
    fail,
    input_at,
    needs_grad,
    none_grads,
    size_of,
)

Saved = dict[str, Value]
Grads = list[Value]



def _size_forward(emit: Emitter, node: Node) -> Saved:
    self_ = node.inputs()[0]
    return {"self_size": size_of(emit, self_)} if needs_grad(self_) else {}


def _scatter_back(emit: Emitter, node: Node, saved: Saved, grad: Value, dim: Value | int, keepdim: Value | bool) -> list[Value | None]:
    if not saved:
        return none_grads(node)
    indices = node.outputs()[1]
    return none_grads(
        node, emit.op("aten::value_selecting_reduction_backward", grad, dim, indices, saved["self_size"], keepdim)
    )


@formula("aten::max.dim", "aten::min.dim", forward=_size_forward)
def max_dim(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    keepdim = input_at(node, 2)
    return _scatter_back(emit, node, saved, grads[0], node.inputs()[1], False if keepdim is None else keepdim)


@formula("aten::kthvalue", forward=_size_forward)
def kthvalue(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    # kthvalue(self, k, dim=-1, keepdim=False)
    dim, keepdim = input_at(node, 2), input_at(node, 3)
    return _scatter_back(
        emit, node, saved, grads[0], -1 if dim is None else dim, False if keepdim is None else keepdim
    )


@formula("aten::topk", forward=_size_forward)
def topk(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    # topk(self, k, dim=-1, largest=True, sorted=True): the k values keep the dim.
    dim = input_at(node, 2)
    return _scatter_back(emit, node, saved, grads[0], -1 if dim is None else dim, True)


@formula("aten::max", "aten::min")
def max_all(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """``g / count`` to each element equal to the result (NaN counts as equal to a NaN result)."""
    x, result = node.inputs()[0], node.output()
    if not needs_grad(x):
        return none_grads(node)
    hits = emit.op("aten::eq", x, result)
    # A NaN result: the NaNs are the maxima. isnan(v) is v != v.
    nan_result = emit.op("aten::ne", result, result)
    nans = emit.op("aten::mul", emit.op("aten::ne", x, x), nan_result)
    mask = emit.op("aten::add", emit.op("aten::type_as", hits, x), emit.op("aten::type_as", nans, x), 1)
    share = emit.op("aten::div", grads[0], emit.op("aten::sum", mask, None))
    return none_grads(node, emit.op("aten::mul", mask, share))


# -- max pooling --------------------------------------------------------------------
def _pool_args(node: Node) -> list[Value | int | bool | list[int]]:
    """kernel_size, stride, padding, dilation, ceil_mode, with the schema's defaults."""
    defaults: list[object] = [None, [], [0, 0], [1, 1], False]
    args: list[Value | int | bool | list[int]] = []
    for index, default in enumerate(defaults, start=1):
        value = input_at(node, index)
        if value is None:
            if default is None:
                fail(node, "max_pool2d needs a kernel_size")
            args.append(default)  # type: ignore[arg-type]
        else:
            # A list built by prim::ListConstruct of constants becomes a constant
            # (constants are copied into the backward, values would be captured).
            known = const(value)
            args.append(value if known is NOT_CONSTANT else known)
    return args


@formula("aten::max_pool2d_with_indices")
def max_pool2d_with_indices(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    indices = node.outputs()[1]
    grad = emit.op("aten::max_pool2d_with_indices_backward", grads[0], x, *_pool_args(node), indices)
    return none_grads(node, grad)


@formula("aten::max_pool2d")
def max_pool2d(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    args = _pool_args(node)
    _, indices = emit.op("aten::max_pool2d_with_indices", x, *args)
    return none_grads(node, emit.op("aten::max_pool2d_with_indices_backward", grads[0], x, *args, indices))

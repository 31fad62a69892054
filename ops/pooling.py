"""Pooling: max and average pooling over 2-d windows, and adaptive average pooling; the
1-d and 3-d pools, adaptive max pooling and max_unpool at the end (one N-d kernel each).

A pool slides a window over the last two dims and reduces each window to one
value: its maximum (``max_pool2d``) or its mean (``avg_pool2d``). The output
size per dim is ``(S + 2p - d(k - 1) - 1) // s + 1`` (rounded up with
``ceil_mode``, without a last window that would start in the padding). The
*adaptive* pools choose the windows themselves so that the output has
``output_size``: output cell ``i`` averages input rows ``floor(i * H / OH)`` to
``ceil((i + 1) * H / OH)``.

**Gradients.** Average pooling is linear: each output is a weighted sum of the
inputs in its window, so the gradient spreads each output gradient back over
the window with the same weights. The backward kernels need the input only
for its shape (PyTorch's formulas capture the input all the same):

* ``avg_pool2d`` -> ``avg_pool2d_backward(g, x, kernel, stride, padding,
  ceil_mode, count_include_pad, divisor_override)``;
* ``adaptive_avg_pool2d`` (and ``_adaptive_avg_pool2d``) ->
  ``_adaptive_avg_pool2d_backward(g, x)``;
* ``adaptive_avg_pool1d`` is the 2-d pool of a height-1 input, as
  TorchScript writes its gradient: ``unsqueeze(-2)`` the gradient and the
  input, pool back, ``squeeze(-2)``.

Max pooling routes each output gradient to the one input element that won
its window: ``max_pool2d_with_indices`` returns the winners' flat positions
(``indices``) and ``max_pool2d_with_indices_backward`` scatter-adds the
gradient there.

The backward kernels are linear in the incoming gradient too, so their own
gradient (double backward) is the forward pool again; the input they take
for its shape gets zeros, as in PyTorch. The max-pool backward's gradient
reads the incoming gradient at the windows' maxima (a gradview helper,
PyTorch's ``max_pool_double_backward``).
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.kernels import pooling as pool_kernels

from .nn import like_input
from .registry import Emitter, formula, kernel, schema, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, Sizes, fresh
from .static_info import NOT_CONSTANT, const, fail, full_size, input_at, needs_grad, none_grads

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]


# -- shared by the formulas ------------------------------------------------------------------------
def _absent(grad: Value) -> bool:
    return grad.node.kind() == "prim::AutogradZero"


def _args(node: Node, first: int, defaults: list[object]) -> list[object]:
    """Inputs ``first``... with the schema's defaults for left-out ones; constant
    lists (even when built by ListConstruct) become constants in the backward."""
    args: list[object] = []
    for index, default in enumerate(defaults, start=first):
        value = input_at(node, index)
        if value is None:
            args.append(default)
        else:
            known = const(value)
            args.append(value if known is NOT_CONSTANT else known)
    return args


def _zeros_like(emit: Emitter, x: Value) -> Value:
    return emit.op("aten::zeros_like", x, None, None, None, None, None)


# -- aten::max_pool2d, max_pool2d_with_indices, avg_pool2d: the output sizes -----------------------
kernel("aten::max_pool2d")(pool_kernels.max_pool2d)
kernel("aten::max_pool2d_with_indices")(pool_kernels.max_pool2d_with_indices)
kernel("aten::avg_pool2d")(pool_kernels.avg_pool2d)


def _pooled_size(size: int | None, kernel: int, stride: int, pad: int, dilation: int,
                 ceil_mode: bool) -> int | None:
    if size is None:
        return None
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


@shape_rule("aten::max_pool2d", "aten::max_pool2d_with_indices", "aten::avg_pool2d")
def _max_pool2d(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    kind = args.node.kind()
    kernel, stride, padding = args.int_list(1), args.int_list(2), args.int_list(3)
    # avg_pool2d(self, kernel, stride, padding, ceil_mode, ...) has no dilation.
    dilation = [1] if kind == "aten::avg_pool2d" else args.int_list(4)
    ceil_mode = args.value(4 if kind == "aten::avg_pool2d" else 5, None)
    sizes: Sizes | None = None
    lists = (kernel, stride, padding, dilation)
    if x.sizes is not None and len(x.sizes) in (3, 4):
        sizes = x.sizes[:-2] + (None, None)
        if all(v is not None and None not in v for v in lists) and isinstance(ceil_mode, bool):
            k, s, p, d = ([v[0], v[-1]] for v in lists)  # type: ignore[index]
            if not stride:
                s = k
            sizes = x.sizes[:-2] + tuple(
                _pooled_size(x.sizes[-2 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(2)
            )
    out = fresh(x.scalar_type, sizes, x.device)
    if kind == "aten::max_pool2d_with_indices":
        return [out, fresh("Long", sizes, x.device)]
    return [out]


# avg_pool2d(self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None)
_AVG_DEFAULTS: list[object] = [None, [], [0, 0], False, True, None]


@formula("aten::avg_pool2d")
def avg_pool2d(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    args = _args(node, 1, _AVG_DEFAULTS)
    return none_grads(node, emit.op("aten::avg_pool2d_backward", grads[0], x, *args))


# -- the gradients of max_pool2d and max_pool2d_with_indices: through the indices of the maxima --
# max_pool2d_with_indices hands its indices to max_pool2d_with_indices_backward; max_pool2d
# returns none, so its backward recomputes them from the input (it captures only the input).
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


# -- aten::adaptive_avg_pool1d/2d/3d, _adaptive_avg_pool2d/3d ---------------------------------------
kernel("aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d")(pool_kernels.adaptive_avg_pool2d)
kernel("aten::adaptive_avg_pool1d")(pool_kernels.adaptive_avg_pool1d)
kernel("aten::adaptive_avg_pool3d", "aten::_adaptive_avg_pool3d")(pool_kernels.adaptive_avg_pool3d)
_POOLED_DIMS = {"aten::adaptive_avg_pool1d": 1, "aten::adaptive_avg_pool3d": 3, "aten::_adaptive_avg_pool3d": 3}


@shape_rule(
    "aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d", "aten::adaptive_avg_pool1d",
    "aten::adaptive_avg_pool3d", "aten::_adaptive_avg_pool3d",
)
def _adaptive_pool(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    pooled = _POOLED_DIMS.get(args.node.kind(), 2)
    out = args.int_list(1)
    sizes: Sizes | None = None
    if x.sizes is not None and len(x.sizes) > pooled:
        known = out if out is not None and len(out) == pooled else [None] * pooled
        sizes = x.sizes[:-pooled] + tuple(known)
    return [like_input(x, sizes)]


@formula("aten::adaptive_avg_pool2d", "aten::_adaptive_avg_pool2d")
def adaptive_avg_pool2d(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    return none_grads(node, emit.op("aten::_adaptive_avg_pool2d_backward", grads[0], x))


@formula("aten::adaptive_avg_pool3d", "aten::_adaptive_avg_pool3d")
def adaptive_avg_pool3d(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    return none_grads(node, emit.op("aten::_adaptive_avg_pool3d_backward", grads[0], x))


@formula("aten::adaptive_avg_pool1d")
def adaptive_avg_pool1d(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    grad = emit.op("aten::_adaptive_avg_pool2d_backward", emit.op("aten::unsqueeze", grads[0], -2),
                   emit.op("aten::unsqueeze", x, -2))
    return none_grads(node, emit.op("aten::squeeze", grad, -2))


# -- the backward kernels, and their gradients (double backward) -----------------------------------
kernel("aten::avg_pool2d_backward")(pool_kernels.avg_pool2d_backward)
kernel("aten::_adaptive_avg_pool2d_backward")(pool_kernels.adaptive_avg_pool2d_backward)
kernel("aten::_adaptive_avg_pool3d_backward")(pool_kernels.adaptive_avg_pool3d_backward)
kernel("aten::max_pool2d_with_indices_backward")(pool_kernels.max_pool2d_with_indices_backward)


@shape_rule(
    "aten::_adaptive_avg_pool2d_backward", "aten::_adaptive_avg_pool3d_backward", "aten::avg_pool2d_backward",
    "aten::max_pool2d_with_indices_backward",
)
def _pool_backward(args: NodeArgs) -> RuleResult:
    """The gradient has the pooled input's sizes (input 1) and grad_output's dtype."""
    grad, x = args.tensor(0), args.tensor(1)
    if x is None:
        return None
    return [like_input(x, x.sizes, grad.scalar_type if grad is not None else None)]


@formula("aten::avg_pool2d_backward")
def avg_pool2d_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)."""
    g, x = node.inputs()[:2]
    result: list[Value | None] = [None] * len(node.inputs())
    if _absent(grads[0]):
        return result
    if needs_grad(g):
        result[0] = emit.op("aten::avg_pool2d", grads[0], *_args(node, 2, _AVG_DEFAULTS))
    if needs_grad(x):
        result[1] = _zeros_like(emit, x)
    return result


def _adaptive_pool_backward(pool: str, dims: int):  # a backward factory
    """(grad_output, self): pool the gradient to grad_output's last ``dims`` sizes."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
        g, x = node.inputs()[:2]
        result: list[Value | None] = [None] * len(node.inputs())
        if _absent(grads[0]):
            return result
        if needs_grad(g):
            sizes = full_size(g)
            if sizes is not None:
                output_size: Value | list[int] = sizes[-dims:]
            else:
                size = emit.size(g)
                output_size = emit.op("aten::slice", size, -dims, None, 1)
            result[0] = emit.op(pool, grads[0], output_size)
        if needs_grad(x):
            result[1] = _zeros_like(emit, x)
        return result

    return backward


formula("aten::_adaptive_avg_pool2d_backward")(_adaptive_pool_backward("aten::_adaptive_avg_pool2d", 2))
formula("aten::_adaptive_avg_pool3d_backward")(_adaptive_pool_backward("aten::_adaptive_avg_pool3d", 3))


# -- gradview::max_pool2d_double_backward ----------------------------------------------------------
# max_pool2d_with_indices_backward's gradient (PyTorch's max_pool_double_backward).
schema(
    "gradview::max_pool2d_double_backward(Tensor grad, Tensor self, int[2] kernel_size, int[2] stride, "
    "int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",
)
kernel("gradview::max_pool2d_double_backward")(pool_kernels.max_pool2d_double_backward)


@shape_rule("gradview::max_pool2d_double_backward")
def _max_pool_double_backward(args: NodeArgs) -> RuleResult:
    """The pooled output's sizes (those of ``indices``), grad's dtype."""
    grad, indices = args.tensor(0), args.tensor(7)
    if grad is None or indices is None:
        return None
    return [like_input(indices, indices.sizes, grad.scalar_type)]


@formula("aten::max_pool2d_with_indices_backward", "gradview::max_pool2d_double_backward")
def max_pool2d_with_indices_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(grad, self, kernel_size, stride, padding, dilation, ceil_mode, indices): the backward
    scatters grad to the windows' maxima and gradview's helper reads it back from there; each
    is the other's gradient (both linear in grad), and ``self`` (read for its shape) gets zeros."""
    g, x = node.inputs()[:2]
    result: list[Value | None] = [None] * len(node.inputs())
    if _absent(grads[0]):
        return result
    if needs_grad(g):
        other = "gradview::max_pool2d_double_backward"
        if node.kind() == other:
            other = "aten::max_pool2d_with_indices_backward"
        result[0] = emit.op(other, grads[0], *node.inputs()[1:])
    if needs_grad(x):
        result[1] = _zeros_like(emit, x)
    return result


# -- N-d pooling: max_pool1d/3d (+ indices), avg_pool1d/3d, adaptive_max_pool1d/2d/3d, max_unpool2d/3d --
# One set of kernels for 1, 2 and 3 spatial dims (kernels/pooling.py). The max pools route
# each output gradient to its window's winner through gradview::pool_indices_backward (what
# ATen's max_pool*_with_indices_backward and adaptive_max_pool*_backward compute); the ones
# without indices recompute them from the input, as PyTorch's autograd does.
_POOL_DIMS = {
    "aten::max_pool1d": 1, "aten::max_pool1d_with_indices": 1, "aten::max_pool3d": 3,
    "aten::max_pool3d_with_indices": 3, "aten::avg_pool1d": 1, "aten::avg_pool3d": 3,
}
_WITH_INDICES = {"aten::max_pool1d": "aten::max_pool1d_with_indices", "aten::max_pool3d": "aten::max_pool3d_with_indices"}
kernel("aten::max_pool1d")(pool_kernels.max_pool1d)
kernel("aten::max_pool1d_with_indices")(pool_kernels.max_pool1d_with_indices)
kernel("aten::max_pool3d")(pool_kernels.max_pool3d)
kernel("aten::max_pool3d_with_indices")(pool_kernels.max_pool3d_with_indices)
kernel("aten::avg_pool1d")(pool_kernels.avg_pool1d)
kernel("aten::avg_pool3d")(pool_kernels.avg_pool3d)
kernel("aten::avg_pool3d_backward")(pool_kernels.avg_pool3d_backward)


def _ints_of(value: list[int | None] | None, dims: int, default: list[int] | None) -> list[int] | None:
    if value is None or None in value:
        return None
    items = [int(v) for v in value]  # type: ignore[arg-type]
    if not items:
        return default
    return items * dims if len(items) == 1 else items


@shape_rule(*_POOL_DIMS)
def _pool_nd(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    kind = args.node.kind()
    dims = _POOL_DIMS[kind]
    average = kind.startswith("aten::avg_pool")
    sizes: Sizes | None = None
    if x.sizes is not None and len(x.sizes) in (dims + 1, dims + 2):
        sizes = x.sizes[:-dims] + (None,) * dims
        kernel_ = _ints_of(args.int_list(1), dims, None)
        stride = _ints_of(args.int_list(2) if len(args) > 2 else [], dims, kernel_)
        padding = _ints_of(args.int_list(3) if len(args) > 3 else [0], dims, None)
        dilation = [1] * dims if average else _ints_of(args.int_list(4) if len(args) > 4 else [1], dims, None)
        ceil_mode = args.value(4 if average else 5, False) if len(args) > (4 if average else 5) else False
        lists = (kernel_, stride, padding, dilation)
        if all(v is not None and len(v) == dims for v in lists) and isinstance(ceil_mode, bool):
            k, s, p, d = lists
            sizes = x.sizes[:-dims] + tuple(
                _pooled_size(x.sizes[-dims + i], k[i], s[i], p[i], d[i], ceil_mode)  # type: ignore[index]
                for i in range(dims)
            )
    out = fresh(x.scalar_type, sizes, x.device)
    return [out, fresh("Long", sizes, x.device)] if kind.endswith("_with_indices") else [out]


schema("gradview::pool_indices_backward(Tensor grad, Tensor self, Tensor indices, int dims) -> Tensor")
kernel("gradview::pool_indices_backward")(pool_kernels.pool_indices_backward)


@shape_rule("gradview::pool_indices_backward")
def _pool_indices_backward(args: NodeArgs) -> RuleResult:
    grad, x = args.tensor(0), args.tensor(1)
    return None if grad is None or x is None else [fresh(grad.scalar_type, x.sizes, grad.device)]


def _max_pool_nd_gradient(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    kind = node.kind()
    if kind in _WITH_INDICES:
        _, indices = emit.op(_WITH_INDICES[kind], *node.inputs())
    else:
        indices = node.outputs()[1]
    dims = _POOL_DIMS.get(kind) or _ADAPTIVE_MAX_DIMS[kind]
    return none_grads(node, emit.op("gradview::pool_indices_backward", grads[0], x, indices, dims))


formula("aten::max_pool1d", "aten::max_pool1d_with_indices", "aten::max_pool3d",
        "aten::max_pool3d_with_indices")(_max_pool_nd_gradient)


@formula("aten::avg_pool3d")
def avg_pool3d(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    args = _args(node, 1, [None, [], [0, 0, 0], False, True, None])
    return none_grads(node, emit.op("aten::avg_pool3d_backward", grads[0], x, *args))


@formula("aten::avg_pool1d")
def avg_pool1d(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """avg_pool1d is ATen's avg_pool2d of a height-1 input, and so is its gradient."""
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    args = _args(node, 1, [None, [], [0], False, True])
    return none_grads(node, emit.op("gradview::avg_pool1d_backward", grads[0], x, *args))


schema(
    "gradview::avg_pool1d_backward(Tensor grad, Tensor self, int[1] kernel_size, int[1] stride, int[1] padding, "
    "bool ceil_mode, bool count_include_pad) -> Tensor"
)
kernel("gradview::avg_pool1d_backward")(pool_kernels.avg_pool1d_backward)


@shape_rule("gradview::avg_pool1d_backward", "aten::avg_pool3d_backward")
def _avg_pool_nd_backward(args: NodeArgs) -> RuleResult:
    grad, x = args.tensor(0), args.tensor(1)
    return None if grad is None or x is None else [fresh(grad.scalar_type, x.sizes, grad.device)]


# -- aten::adaptive_max_pool1d/2d/3d ---------------------------------------------------------------------
_ADAPTIVE_MAX_DIMS = {"aten::adaptive_max_pool1d": 1, "aten::adaptive_max_pool2d": 2, "aten::adaptive_max_pool3d": 3}
kernel("aten::adaptive_max_pool1d")(pool_kernels.adaptive_max_pool1d)
kernel("aten::adaptive_max_pool2d")(pool_kernels.adaptive_max_pool2d)
kernel("aten::adaptive_max_pool3d")(pool_kernels.adaptive_max_pool3d)
formula(*_ADAPTIVE_MAX_DIMS)(_max_pool_nd_gradient)


@shape_rule(*_ADAPTIVE_MAX_DIMS)
def _adaptive_max_pool(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    dims = _ADAPTIVE_MAX_DIMS[args.node.kind()]
    out = args.int_list(1)
    sizes: Sizes | None = None
    if x.sizes is not None and len(x.sizes) > dims:
        known = out if out is not None and len(out) == dims else [None] * dims
        sizes = x.sizes[:-dims] + tuple(known)
    return [fresh(x.scalar_type, sizes, x.device), fresh("Long", sizes, x.device)]


# -- aten::max_unpool2d, max_unpool3d ---------------------------------------------------------------------
# The gradient reads the incoming gradient at each index (PyTorch's max_pool_double_backward);
# the indices get none.
kernel("aten::max_unpool2d")(pool_kernels.max_unpool2d)
kernel("aten::max_unpool3d")(pool_kernels.max_unpool3d)
schema("gradview::unpool_backward(Tensor grad, Tensor indices, int dims) -> Tensor")
kernel("gradview::unpool_backward")(pool_kernels.unpool_backward)


@shape_rule("aten::max_unpool2d", "aten::max_unpool3d")
def _max_unpool(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    dims = 2 if args.node.kind() == "aten::max_unpool2d" else 3
    out = args.int_list(2)
    sizes: Sizes | None = None
    if x.sizes is not None and len(x.sizes) > dims:
        known = out if out is not None and len(out) == dims else [None] * dims
        sizes = x.sizes[:-dims] + tuple(known)
    return [fresh(x.scalar_type, sizes, x.device)]


@shape_rule("gradview::unpool_backward")
def _unpool_backward(args: NodeArgs) -> RuleResult:
    grad, indices = args.tensor(0), args.tensor(1)
    return None if grad is None or indices is None else [fresh(grad.scalar_type, indices.sizes, grad.device)]


@formula("aten::max_unpool2d", "aten::max_unpool3d")
def max_unpool(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    dims = 2 if node.kind() == "aten::max_unpool2d" else 3
    return none_grads(node, emit.op("gradview::unpool_backward", grads[0], node.inputs()[1], dims))



# -- the gradients of the N-d backward kernels (double backward) -------------------------------------
# Each is linear in its incoming gradient: average pooling's backward differentiates to the pool
# itself, the scatter onto the maxima (pool_indices_backward) to the gather at them
# (unpool_backward, PyTorch's max_pool_double_backward) and back; the tensors read only for
# their shapes or positions get none (derivatives.yaml's zeros_like).
@formula("aten::avg_pool3d_backward", "gradview::avg_pool1d_backward")
def avg_pool_nd_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    if not needs_grad(node.inputs()[0]):
        return none_grads(node)
    pool = "aten::avg_pool3d" if node.kind() == "aten::avg_pool3d_backward" else "aten::avg_pool1d"
    return none_grads(node, emit.op(pool, grads[0], *node.inputs()[2:]))


@formula("gradview::pool_indices_backward")
def pool_indices_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    grad, _, indices, dims = node.inputs()
    if not needs_grad(grad):
        return none_grads(node)
    return none_grads(node, emit.op("gradview::unpool_backward", grads[0], indices, dims))


@formula("gradview::unpool_backward")
def unpool_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    grad, indices, dims = node.inputs()
    if not needs_grad(grad):
        return none_grads(node)
    return none_grads(node, emit.op("gradview::pool_indices_backward", grads[0], grad, indices, dims))


# -- aten::fractional_max_pool2d, fractional_max_pool3d (+ backward) ------------------------------------
# The windows' places come from the random_samples input (F.fractional_max_pool2d draws them with
# aten::rand, gradview's seeded draw); given them the pool is deterministic, PyTorch's to the bit.
# derivatives.yaml: self's gradient is fractional_max_pool{2,3}d_backward(grad, self, kernel_size,
# output_size, indices), random_samples has none; the backward is linear in grad_output, whose
# gradient reads the incoming gradient at the indices (max_pool_double_backward).
_FRACTIONAL = {
    "aten::fractional_max_pool2d": ("aten::fractional_max_pool2d_backward", 2),
    "aten::fractional_max_pool3d": ("aten::fractional_max_pool3d_backward", 3),
}
kernel("aten::fractional_max_pool2d")(pool_kernels.fractional_max_pool2d)
kernel("aten::fractional_max_pool3d")(pool_kernels.fractional_max_pool3d)
kernel("aten::fractional_max_pool2d_backward")(pool_kernels.fractional_max_pool2d_backward)
kernel("aten::fractional_max_pool3d_backward")(pool_kernels.fractional_max_pool3d_backward)


@shape_rule(*_FRACTIONAL)
def _fractional_max_pool(args: NodeArgs) -> RuleResult:
    """The input's leading dims and ``output_size``; int64 indices of the same sizes."""
    x = args.tensor(0)
    if x is None:
        return None
    dims = _FRACTIONAL[args.node.kind()][1]
    sizes: Sizes | None = None
    if x.sizes is not None and len(x.sizes) in (dims + 1, dims + 2):
        out = _ints_of(args.int_list(2), dims, None)
        sizes = x.sizes[:-dims] + (tuple(out) if out is not None and len(out) == dims else (None,) * dims)
    return [fresh(x.scalar_type, sizes, x.device), fresh("Long", sizes, x.device)]


@shape_rule(*(backward for backward, _ in _FRACTIONAL.values()))
def _fractional_max_pool_backward(args: NodeArgs) -> RuleResult:
    grad, x = args.tensor(0), args.tensor(1)
    return None if grad is None or x is None else [fresh(grad.scalar_type, x.sizes, grad.device)]


@formula(*_FRACTIONAL)
def fractional_max_pool(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x = node.inputs()[0]
    if not needs_grad(x) or _absent(grads[0]):
        return none_grads(node)
    backward = _FRACTIONAL[node.kind()][0]
    kernel_size, output_size = _args(node, 1, [None, None])
    return none_grads(node, emit.op(backward, grads[0], x, kernel_size, output_size, node.outputs()[1]))


@formula(*(backward for backward, _ in _FRACTIONAL.values()))
def fractional_max_pool_backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    grad = node.inputs()[0]
    if not needs_grad(grad) or _absent(grads[0]):
        return none_grads(node)
    dims = 2 if node.kind() == "aten::fractional_max_pool2d_backward" else 3
    return none_grads(node, emit.op("gradview::unpool_backward", grads[0], node.inputs()[4], dims))

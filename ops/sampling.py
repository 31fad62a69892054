"""Resampling ops: upsampling in every mode and im2col/col2im (kernels in kernels/sampling.py).

**Upsampling.** Each ``aten::upsample_*`` overload (per-dim scales, or ``.vec`` with
output_size or scale_factors) runs ATen's separable interpolation, and its gradient is
``gradview::<overload>_backward(grad, <the forward's arguments>)``, which adds each output
gradient, times its weights, onto the input elements it read (ATen's
``upsample_*_backward``; its own gradient is the forward resampling again). The result keeps the input's (N, C) and takes the output size,
from ``output_size`` or ``floor(size * scale_factor)``.

**im2col** (``F.unfold``) and **col2im** (``F.fold``) are each other's gradient, as in
derivatives.yaml.
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.operators import schemas_for
from gradview.kernels import sampling as kernels

from .gradients import BACKWARD_KERNEL
from .registry import Emitter, formula, kernel, no_gradient, schema, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, Sizes, fresh
from .static_info import (
    NOT_CONSTANT,
    const,
    fail,
    full_size,
    input_at,
    int_list,
    needs_grad,
    none_grads,
    rank_of,
)

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]


# -- upsampling --------------------------------------------------------------------------------------
def _overload_schema(qualified: str) -> str:
    kind, _, overload = qualified.partition(".")
    found = next(s for s in schemas_for(kind) if s.overload_name == overload)
    return str(found)


def _upsample_shapes(dims: int, vec: bool):  # a shape rule factory
    def rule(args: NodeArgs) -> RuleResult:
        x = args.tensor(0)
        if x is None:
            return None
        sizes: Sizes | None = None
        if x.sizes is not None and len(x.sizes) == dims + 2:
            out = args.int_list(1) if not args.is_none(1) else None
            spatial: list[int | None] = [None] * dims
            if out is not None and len(out) == dims:
                spatial = list(out)
            elif vec and out is None:
                factors = args.value(len(args) - 1, None)
                if isinstance(factors, (list, tuple)) and len(factors) == dims:
                    spatial = [None if n is None else int(n * f) for n, f in zip(x.sizes[2:], factors, strict=True)]
            sizes = tuple(x.sizes[:2]) + tuple(spatial)
        return [fresh(x.scalar_type, sizes, x.device)]

    return rule


def _through_backward(backward_name: str):  # a backward factory
    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
        if not needs_grad(node.inputs()[0]):
            return none_grads(node)
        return none_grads(node, emit.op(backward_name, grads[0], *node.inputs()))

    return backward


def _grad_like_input(args: NodeArgs) -> RuleResult:
    grad, x = args.tensor(0), args.tensor(1)
    return None if grad is None or x is None else [fresh(grad.scalar_type, x.sizes, grad.device)]


def _declare_upsample(name: str, vec: bool) -> None:
    qualified = f"aten::{name}.vec" if vec else f"aten::{name}"
    forward, backward = kernels.upsample_kernels(name, vec)
    text = _overload_schema(qualified)
    arguments = text[text.index("(") + 1: text.rindex(") ->")]
    backward_name = f"gradview::{name}{'_vec' if vec else ''}_backward"
    schema(f"{backward_name}(Tensor grad, {arguments}) -> Tensor")
    kernel(qualified)(forward)
    kernel(backward_name)(backward)
    shape_rule(backward_name)(_grad_like_input)
    formula(qualified)(_through_backward(backward_name))
    formula(backward_name)(_upsample_double_backward(f"aten::{name}"))


def _upsample_double_backward(forward_kind: str):  # a backward factory
    """The backward is linear in its gradient: its own gradient is the forward resampling of
    the incoming one; the input it reads only for its shape gets none (as in PyTorch, whose
    backward takes only the input's size)."""

    def backward(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
        if not needs_grad(node.inputs()[0]):
            return none_grads(node)
        return none_grads(node, emit.op(forward_kind, grads[0], *node.inputs()[2:]))

    return backward


for _name, (_mode, _dims, _) in kernels.UPSAMPLE_OPS.items():
    shape_rule(f"aten::{_name}")(_upsample_shapes(_dims, vec=True))
    _declare_upsample(_name, vec=False)
    _declare_upsample(_name, vec=True)


# -- aten::im2col, col2im ------------------------------------------------------------------------------
kernel("aten::im2col")(kernels.im2col)
kernel("aten::col2im")(kernels.col2im)


def _constant_pair(value: list[int | None] | None) -> list[int] | None:
    if value is None or None in value:
        return None
    items = [int(v) for v in value]  # type: ignore[arg-type]
    return items * 2 if len(items) == 1 else items


@shape_rule("aten::im2col")
def _im2col_shapes(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    sizes: Sizes | None = None
    k, d, p, s = (_constant_pair(args.int_list(i)) for i in (1, 2, 3, 4))
    if x.sizes is not None and len(x.sizes) in (3, 4):
        lead, (c, h, w) = x.sizes[:-3], x.sizes[-3:]
        rows = blocks = None
        if k is not None and c is not None:
            rows = c * k[0] * k[1]
        if None not in (k, d, p, s, h, w):
            oh = (h + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1  # type: ignore[index,operator]
            ow = (w + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1  # type: ignore[index,operator]
            blocks = oh * ow
        sizes = tuple(lead) + (rows, blocks)
    return [fresh(x.scalar_type, sizes, x.device)]


@shape_rule("aten::col2im")
def _col2im_shapes(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    sizes: Sizes | None = None
    out, k = _constant_pair(args.int_list(1)), _constant_pair(args.int_list(2))
    if x.sizes is not None and len(x.sizes) in (2, 3):
        rows = x.sizes[-2]
        c = rows // (k[0] * k[1]) if rows is not None and k is not None else None
        spatial = tuple(out) if out is not None else (None, None)
        sizes = tuple(x.sizes[:-2]) + (c,) + spatial
    return [fresh(x.scalar_type, sizes, x.device)]


def _spatial_size(emit: Emitter, x: Value) -> Value:
    """The input's (H, W): constants when its type knows them, else read at run time."""
    known = full_size(x)
    if known is not None:
        return emit.const(known[-2:])
    return int_list(emit, [emit.op("aten::size", x, -2), emit.op("aten::size", x, -1)])


@formula("aten::im2col")
def im2col(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """derivatives.yaml: col2im of the gradient back to the input's (H, W)."""
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    args = [const(v) if const(v) is not NOT_CONSTANT else v for v in node.inputs()[1:5]]
    return none_grads(node, emit.op("aten::col2im", grads[0], _spatial_size(emit, x), *args))


@formula("aten::col2im")
def col2im(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """derivatives.yaml: im2col of the gradient."""
    x = node.inputs()[0]
    if not needs_grad(x):
        return none_grads(node)
    args = [input_at(node, i) for i in range(2, 6)]
    return none_grads(node, emit.op("aten::im2col", grads[0], *args))


# -- aten::grid_sampler, grid_sampler_2d/3d and their backward kernels ----------------------------------
# derivatives.yaml: input and grid through grid_sampler_2d/3d_backward with output_mask; the
# composite grid_sampler takes the 2-d or 3-d one by the input's rank.
kernel("aten::grid_sampler", "aten::grid_sampler_2d", "aten::grid_sampler_3d")(kernels.grid_sample)
kernel("aten::grid_sampler_2d_backward", "aten::grid_sampler_3d_backward")(kernels.grid_sample_backward)
no_gradient("aten::grid_sampler_2d_backward", "aten::grid_sampler_3d_backward", reason=BACKWARD_KERNEL)


@shape_rule("aten::grid_sampler", "aten::grid_sampler_2d", "aten::grid_sampler_3d")
def _grid_sampler_shapes(args: NodeArgs) -> RuleResult:
    x, grid = args.tensor(0), args.tensor(1)
    if x is None or grid is None:
        return None
    sizes: Sizes | None = None
    if x.sizes is not None and grid.sizes is not None:
        sizes = (grid.sizes[0], x.sizes[1]) + tuple(grid.sizes[1:-1])
    return [fresh(x.scalar_type, sizes, x.device)]


@shape_rule("aten::grid_sampler_2d_backward", "aten::grid_sampler_3d_backward")
def _grid_sampler_backward_shapes(args: NodeArgs) -> RuleResult:
    grad, x, grid = args.tensor(0), args.tensor(1), args.tensor(2)
    if grad is None or x is None or grid is None:
        return None
    return [fresh(grad.scalar_type, x.sizes, grad.device), fresh(grad.scalar_type, grid.sizes, grad.device)]


@formula("aten::grid_sampler", "aten::grid_sampler_2d", "aten::grid_sampler_3d")
def grid_sampler(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x, grid = node.inputs()[:2]
    mask = [needs_grad(x), needs_grad(grid)]
    if not any(mask):
        return none_grads(node)
    kind = node.kind()
    if kind == "aten::grid_sampler":
        rank = rank_of(x)
        if rank not in (4, 5):
            fail(node, "the gradient of grid_sampler needs the input's rank (4 or 5) known from its type")
        kind = "aten::grid_sampler_2d" if rank == 4 else "aten::grid_sampler_3d"
    grad_input, grad_grid = emit.op(f"{kind}_backward", grads[0], *node.inputs()[:5], mask)
    return none_grads(node, grad_input if mask[0] else None, grad_grid if mask[1] else None)

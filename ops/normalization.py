"""Normalization layers: layer norm, batch norm and group norm (and, at the end,
_batch_norm_with_update, instance_norm and rms_norm).

A normalization centres and scales its input by statistics of the input
itself, then applies a learned per-feature affine map::

    xhat = (x - mean) * rstd,   rstd = 1 / sqrt(var + eps)   (biased variance)
    y    = xhat * weight + bias

The three differ only in *which* elements share a mean and a variance:

* **layer_norm** normalizes over the last dims (``normalized_shape``), one
  mean per sample;
* **batch_norm** normalizes each channel over the batch and spatial dims. In
  training it uses the batch's statistics and updates the running ones in
  place (``running = momentum * batch + (1 - momentum) * running``, with the
  *unbiased* batch variance), in evaluation it uses the running statistics;
* **group_norm** splits the C channels of an (N, C, *) input into ``group``
  groups and normalizes each (sample, group) slice.

**Gradients.** Differentiating through the mean and the variance gives, with
``gw = g * weight`` and means over the normalized elements::

    dx      = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))
    dweight = sum(g * xhat),   dbias = sum(g)   (over the other dims)

(in evaluation mode batch norm's statistics are constants, so ``dx = g *
weight * rstd``). These are long formulas, so each gradient calls a backward
kernel rather than spelling the math out in IR, as TorchScript's own formulas
do: ``native_layer_norm_backward``, ``native_batch_norm_backward``,
``native_group_norm_backward``. They need the forward's statistics: the
``native_*`` forms return them (``mean``/``rstd``, ``save_mean``/``save_invstd``);
``layer_norm``, ``batch_norm`` and ``group_norm`` do not, so their backward
recomputes them from the input (one cheap reduction) instead of capturing two
more tensors. In training the backward never passes the running statistics
(they are not needed, and the recomputation must not update them again).

The backward kernels take an ``output_mask``: which of (input, weight, bias)
need a gradient. It is decided from the inputs' ``requires_grad``, so nothing
is computed or captured for the others. The statistics outputs are not
differentiable (PyTorch's rule too): gradients reaching them are ignored.
``_native_batch_norm_legit`` is ``native_batch_norm`` under another name (the
form PyTorch's exported graphs use); ``.no_stats`` has no running statistics,
``_no_training`` is the evaluation form, ``_functional`` (AOTAutograd's graphs)
returns the updated running statistics instead of writing them.

Float16 inputs are computed in float32 and cast back (kernels in
``kernels/normalization.py``).
"""

from __future__ import annotations

from gradview.ir import Node, Value
from gradview.ir.types import BoolType, IntType, ListType, TensorType
from gradview.kernels import normalization as norm_kernels

from .emit_util import emit_if
from .gradients import BACKWARD_KERNEL
from .nn import backward_results, dim_size, like_input
from .registry import Emitter, formula, kernel, no_gradient, schema, shape_rule
from .shape_toolkit import NodeArgs, RuleResult, Sizes, fresh, layout_of, make_tensor
from .static_info import NOT_CONSTANT, const, full_size, input_at, is_none, needs_grad, none_grads
from .tensor_layout import suggested_strides

__all__: list[str] = []

Saved = dict[str, Value]
Grads = list[Value]

# The backward kernels: PyTorch differentiates them again (double backward); gradview
# does not yet, and says so when a backward pass reaches one.


# -- shared by the norms' gradients ----------------------------------------------------------------
def _optional(value: Value | None) -> Value | None:
    """An optional tensor argument, None when absent or statically None."""
    return None if value is None or is_none(value) else value


def _mask(x: Value, weight: Value | None, bias: Value | None) -> list[bool]:
    """output_mask: which of input, weight, bias want a gradient."""
    return [needs_grad(x), weight is not None and needs_grad(weight), bias is not None and needs_grad(bias)]


def _no_output_gradient(grad: Value) -> bool:
    """Statically no gradient for the normalized output (only mean/rstd, which are
    not differentiable, have users): the backward kernel would get an undefined grad."""
    return grad.node.kind() == "prim::AutogradZero"


def _results(
    node: Node, mask: list[bool], grads: tuple[Value, Value, Value], positions: tuple[int, int, int]
) -> list[Value | None]:
    """The backward kernel's three gradients placed at the inputs they belong to."""
    result: list[Value | None] = [None] * len(node.inputs())
    for wanted, grad, position in zip(mask, grads, positions, strict=True):
        if wanted:
            result[position] = grad
    return result


# -- aten::layer_norm, native_layer_norm, native_layer_norm_backward -------------------------------
kernel("aten::layer_norm")(norm_kernels.layer_norm)
kernel("aten::native_layer_norm")(norm_kernels.native_layer_norm)
kernel("aten::native_layer_norm_backward")(norm_kernels.native_layer_norm_backward)


@shape_rule("aten::layer_norm", "aten::group_norm")
def _normalized(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    return [fresh(x.scalar_type, x.sizes, x.device)]


@shape_rule("aten::native_layer_norm")
def _native_layer_norm(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    normalized = args.int_list(1)
    out = fresh(x.scalar_type, x.sizes, x.device)
    stats_sizes: Sizes | None = None
    if x.sizes is not None and normalized is not None and len(normalized) <= len(x.sizes):
        axis = len(x.sizes) - len(normalized)
        stats_sizes = x.sizes[:axis] + (1,) * len(normalized)
    stats = fresh(x.scalar_type, stats_sizes, x.device)
    return [out, stats, stats]


def _layer_norm(emit: Emitter, node: Node, grad: Value, stats: tuple[Value, Value] | None) -> list[Value | None]:
    """layer_norm(input, normalized_shape, weight, bias, eps, ...): stats = (mean, rstd), or recompute."""
    x, shape = node.inputs()[0], node.inputs()[1]
    weight, bias = _optional(input_at(node, 2)), _optional(input_at(node, 3))
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grad):
        return none_grads(node)
    if stats is None:
        eps = input_at(node, 4)
        _, mean, rstd = emit.op("aten::native_layer_norm", x, shape, None, None, 1e-5 if eps is None else eps)
        stats = (mean, rstd)
    grads = emit.op(
        "aten::native_layer_norm_backward", grad, x, shape, *stats, weight if mask[0] else None, None, mask
    )
    return _results(node, mask, grads, (0, 2, 3))


@formula("aten::layer_norm")
def layer_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return _layer_norm(emit, node, grads[0], None)


@formula("aten::native_layer_norm")
def native_layer_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    _, mean, rstd = node.outputs()
    return _layer_norm(emit, node, grads[0], (mean, rstd))


@shape_rule("aten::native_layer_norm_backward")
def _native_layer_norm_backward(args: NodeArgs) -> RuleResult:
    """(grad_input, grad_weight, grad_bias): the input's sizes, normalized_shape twice."""
    grad, x = args.tensor(0), args.tensor(1)
    if x is None or grad is None:
        return None
    normalized = args.int_list(2)
    affine = fresh(grad.scalar_type, None if normalized is None else tuple(normalized), grad.device)
    return backward_results(args, 7, like_input(x, x.sizes, grad.scalar_type), affine, affine)


no_gradient("aten::native_layer_norm_backward", reason=BACKWARD_KERNEL)


# -- aten::batch_norm, native_batch_norm, native_batch_norm_backward -------------------------------
kernel("aten::batch_norm")(norm_kernels.batch_norm)
kernel("aten::native_batch_norm")(norm_kernels.native_batch_norm)
kernel("aten::native_batch_norm_backward")(norm_kernels.native_batch_norm_backward)


def _like_suggested(x: TensorType) -> TensorType:
    """A result allocated as ``empty_like(x, x.suggest_memory_format())`` (batch norm's)."""
    layout = layout_of(x)
    strides = None
    if layout is not None:
        # An empty input comes back as input.clone(), keeping its strides.
        strides = layout[1] if 0 in layout[0] else suggested_strides(*layout)
    return make_tensor(x.scalar_type, x.sizes, strides, x.device)


@shape_rule("aten::batch_norm", "aten::instance_norm")
def _batch_norm(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    return None if x is None else [_like_suggested(x)]


@shape_rule("aten::native_batch_norm")
def _native_batch_norm(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    out = _like_suggested(x)
    channels = x.sizes[1] if x.sizes is not None and len(x.sizes) > 1 else None
    training = args.value(5, None)
    # Saved statistics exist only in training mode; in eval mode they are empty.
    length = channels if training is True else 0 if training is False else None
    stats = fresh(x.scalar_type, (length,), x.device)
    return [out, stats, stats]


def _batch_norm(emit: Emitter, node: Node, grad: Value, saved_stats: tuple[Value, Value] | None) -> list[Value | None]:
    """(native_)batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, ...)."""
    x = node.inputs()[0]
    weight, bias = _optional(node.inputs()[1]), _optional(node.inputs()[2])
    running_mean, running_var = _optional(node.inputs()[3]), _optional(node.inputs()[4])
    training_value, momentum, eps = node.inputs()[5], node.inputs()[6], node.inputs()[7]
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grad):
        return none_grads(node)
    training = const(training_value)
    if training is True:
        # The batch statistics; the running ones are not needed (nor updated).
        running_mean = running_var = None
        if saved_stats is None:
            _, mean, invstd = emit.op("aten::native_batch_norm", x, None, None, None, None, True, momentum, eps)
            saved_stats = (mean, invstd)
    elif training is False:
        saved_stats = None  # evaluation normalizes with the running statistics
    elif saved_stats is None:  # decided at run time: the batch statistics, used only in training
        # (recomputed without the running statistics, which a second training call would update again)
        _, mean, invstd = emit.op("aten::native_batch_norm", x, None, None, None, None, True, momentum, eps)
        saved_stats = (mean, invstd)
    mean, invstd = saved_stats if saved_stats is not None else (None, None)
    train = training_value if training is NOT_CONSTANT else bool(training)
    grads = emit.op(
        "aten::native_batch_norm_backward",
        grad, x, weight if mask[0] else None, running_mean, running_var, mean, invstd, train, eps, mask,
    )
    return _results(node, mask, grads, (0, 1, 2))


@formula("aten::batch_norm")
def batch_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    return _batch_norm(emit, node, grads[0], None)


@formula("aten::native_batch_norm")
def native_batch_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    _, mean, invstd = node.outputs()
    return _batch_norm(emit, node, grads[0], (mean, invstd))


@shape_rule("aten::native_batch_norm_backward")
def _native_batch_norm_backward(args: NodeArgs) -> RuleResult:
    grad, x = args.tensor(0), args.tensor(1)
    if x is None or grad is None:
        return None
    affine = fresh(grad.scalar_type, (dim_size(x, 1),), grad.device)
    return backward_results(args, 9, like_input(x, x.sizes, grad.scalar_type), affine, affine)


no_gradient("aten::native_batch_norm_backward", reason=BACKWARD_KERNEL)


# -- aten::_native_batch_norm_legit (.no_stats), _native_batch_norm_legit_no_training --------------
kernel("aten::_native_batch_norm_legit")(norm_kernels.native_batch_norm_legit)
kernel("aten::_native_batch_norm_legit.no_stats")(norm_kernels.native_batch_norm_legit_no_stats)
kernel("aten::_native_batch_norm_legit_no_training")(norm_kernels.native_batch_norm_legit_no_training)


@shape_rule("aten::_native_batch_norm_legit", "aten::_native_batch_norm_legit_no_training")
def _native_batch_norm_legit(args: NodeArgs) -> RuleResult:
    """(output, save_mean, save_invstd): [C] statistics in training, empty ones in evaluation."""
    x = args.tensor(0)
    if x is None:
        return None
    kind = args.node.kind()
    if kind == "aten::_native_batch_norm_legit_no_training":
        training: object = False
    else:
        training = args.value(3 if len(args) == 6 else 5, None)  # .no_stats has no running statistics
    channels = dim_size(x, 1)
    length = channels if training is True else 0 if training is False else None
    stats = fresh(_stats_dtype(args, x), (length,), x.device)
    return [like_input(x, x.sizes), stats, stats]


def _stats_dtype(args: NodeArgs, x: TensorType) -> str | None:
    """The statistics take the parameters' dtype (float32 for a float16 input with float32 weights)."""
    for index in (1, 2):
        t = args.tensor(index)
        if t is not None and t.scalar_type is not None:
            return t.scalar_type
    return x.scalar_type


@formula("aten::_native_batch_norm_legit")
def native_batch_norm_legit(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """Inputs and outputs are native_batch_norm's."""
    _, mean, invstd = node.outputs()
    return _batch_norm(emit, node, grads[0], (mean, invstd))


# -- aten::_native_batch_norm_legit_functional (AOTAutograd's) -------------------------------------
# The training form without in-place writes: the updated running statistics come back as
# outputs 3 and 4 (the graph copies them into the buffers). They are not differentiable.
kernel("aten::_native_batch_norm_legit_functional")(norm_kernels.native_batch_norm_legit_functional)


@shape_rule("aten::_native_batch_norm_legit_functional")
def _native_batch_norm_legit_functional(args: NodeArgs) -> RuleResult:
    results = _native_batch_norm_legit(args)
    if results is None:
        return None
    running = [args.tensor(3), args.tensor(4)]
    return [*results, *(None if t is None else fresh(t.scalar_type, t.sizes, t.device) for t in running)]


@formula("aten::_native_batch_norm_legit_functional")
def native_batch_norm_legit_functional(
    emit: Emitter, node: Node, saved: Saved, grads: Grads
) -> list[Value | None]:
    """Inputs are native_batch_norm's; only the normalized output has a gradient."""
    _, mean, invstd, _, _ = node.outputs()
    return _batch_norm(emit, node, grads[0], (mean, invstd))


@formula("aten::_native_batch_norm_legit.no_stats")
def native_batch_norm_legit_no_stats(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """(input, weight, bias, training, momentum, eps): the batch statistics it returns."""
    x, weight, bias, training, _, eps = node.inputs()
    weight, bias = _optional(weight), _optional(bias)
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grads[0]):
        return none_grads(node)
    _, mean, invstd = node.outputs()
    result = emit.op(
        "aten::native_batch_norm_backward", grads[0], x, weight if mask[0] else None, None, None, mean, invstd,
        training, eps, mask,
    )
    return _results(node, mask, result, (0, 1, 2))


@formula("aten::_native_batch_norm_legit_no_training")
def native_batch_norm_legit_no_training(
    emit: Emitter, node: Node, saved: Saved, grads: Grads
) -> list[Value | None]:
    """(input, weight, bias, running_mean, running_var, momentum, eps): evaluation mode."""
    x, weight, bias, running_mean, running_var, _, eps = node.inputs()
    weight, bias = _optional(weight), _optional(bias)
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grads[0]):
        return none_grads(node)
    result = emit.op(
        "aten::native_batch_norm_backward", grads[0], x, weight if mask[0] else None, running_mean, running_var,
        None, None, False, eps, mask,
    )
    return _results(node, mask, result, (0, 1, 2))


# -- aten::group_norm, native_group_norm, native_group_norm_backward -------------------------------
kernel("aten::group_norm")(norm_kernels.group_norm)
kernel("aten::native_group_norm")(norm_kernels.native_group_norm)
kernel("aten::native_group_norm_backward")(norm_kernels.native_group_norm_backward)
# group_norm's shape rule is layer_norm's (_normalized, above): the input's sizes.


@shape_rule("aten::native_group_norm")
def _native_group_norm(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    stats = fresh(x.scalar_type, (args.int_value(3), args.int_value(6)), x.device)
    return [like_input(x, x.sizes), stats, stats]


@shape_rule("aten::native_group_norm_backward")
def _native_group_norm_backward(args: NodeArgs) -> RuleResult:
    grad, x = args.tensor(0), args.tensor(1)
    if x is None or grad is None:
        return None
    affine = fresh(grad.scalar_type, (args.int_value(6),), grad.device)
    return backward_results(args, 9, like_input(x, x.sizes, grad.scalar_type), affine, affine)


def _group_sizes(emit: Emitter, x: Value) -> tuple[int | Value, int | Value, int | Value]:
    """(N, C, HxW) of an (N, C, *) input: constants from its type, else computed from its size."""
    sizes = full_size(x)
    if sizes is not None and len(sizes) >= 2:
        hxw = 1
        for size in sizes[2:]:
            hxw *= size
        return sizes[0], sizes[1], hxw
    shape = emit.size(x)
    n, c = emit.op("aten::__getitem__", shape, 0), emit.op("aten::__getitem__", shape, 1)
    per_sample = emit.op("aten::mul", n, c)
    # numel / (N * C), with N * C = 0 (an empty input) read as 1.
    divisor = emit.op("prim::max", per_sample, 1, types=[IntType()])
    return n, c, emit.op("aten::floordiv", emit.op("aten::numel", x), divisor)


@formula("aten::group_norm")
def group_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True)."""
    x, groups = node.inputs()[:2]
    weight, bias = _optional(input_at(node, 2)), _optional(input_at(node, 3))
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grads[0]):
        return none_grads(node)
    eps = input_at(node, 4)
    n, c, hxw = _group_sizes(emit, x)
    _, mean, rstd = emit.op("aten::native_group_norm", x, None, None, n, c, hxw, groups, 1e-5 if eps is None else eps)
    result = emit.op(
        "aten::native_group_norm_backward", grads[0], x, mean, rstd, weight if mask[0] else None, n, c, hxw, groups,
        mask,
    )
    return _results(node, mask, result, (0, 2, 3))


@formula("aten::native_group_norm")
def native_group_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    """native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (output, mean, rstd).
    The output's gradient through native_group_norm_backward; when mean's and rstd's
    gradients are both defined, the input also gets theirs (PyTorch's
    infinitely_differentiable_native_group_norm_backward adds var_mean_backward then)."""
    x, weight, bias, n, c, hxw, groups = node.inputs()[:7]
    weight, bias = _optional(weight), _optional(bias)
    mask = _mask(x, weight, bias)
    _, mean, rstd = node.outputs()
    stats_term = _group_stats_gradient(emit, node, grads[1], grads[2]) if mask[0] else None
    if not any(mask) or _no_output_gradient(grads[0]):
        return none_grads(node, stats_term)
    result = emit.op(
        "aten::native_group_norm_backward", grads[0], x, mean, rstd, weight if mask[0] else None, n, c, hxw, groups,
        mask,
    )
    gradients = _results(node, mask, result, (0, 1, 2))
    if stats_term is not None:
        gradients[0] = emit.op("prim::AutogradAdd", gradients[0], stats_term, types=[TensorType()])
    return gradients


def _group_stats_gradient(emit: Emitter, node: Node, dmean: Value, drstd: Value) -> Value | None:
    """The input's gradient from mean's and rstd's (undefined unless both are, as in
    PyTorch): per group of n = D*HxW elements, ``dmean / n`` plus var's gradient
    ``(2 / n) * dvar * (x - x.mean())`` with ``dvar = -0.5 * rstd**3 * drstd``."""
    if _no_output_gradient(dmean) or _no_output_gradient(drstd):
        return None
    x, _, _, n, c, hxw, groups = node.inputs()[:7]
    _, mean, rstd = node.outputs()

    def build() -> Value:
        depth = emit.op("aten::floordiv", c, groups, types=[IntType()])
        ints = ListType(IntType())
        per_group = emit.op("prim::ListConstruct", n, groups, depth, hxw, types=[ints])
        column = emit.op("prim::ListConstruct", n, groups, emit.const(1), emit.const(1), types=[ints])
        xg = emit.op("aten::reshape", x, per_group)  # as PyTorch's X.reshape({N, G, D, HxW})
        count = emit.op("aten::mul", depth, hxw, types=[IntType()])
        rstd_g = emit.op("aten::reshape", rstd, column)
        cube = emit.op("aten::mul", emit.op("aten::mul", rstd_g, rstd_g), rstd_g)
        dvar = emit.op("aten::mul", emit.op("aten::mul", cube, -0.5), emit.op("aten::view", drstd, column))
        centered = emit.op("aten::sub", xg, emit.op("aten::mean", xg, [2, 3], True, None), 1)
        # (2 / n) * dvar as tensor ops: an empty input (n = 0) divides without raising.
        var_term = emit.op("aten::mul", emit.op("aten::div", emit.op("aten::mul", dvar, 2.0), count), centered)
        spread = emit.op("aten::expand", emit.op("aten::view", dmean, column), emit.size(xg), False)
        mean_term = emit.op("aten::div", spread, count)
        return emit.op("aten::reshape", emit.op("aten::add", var_term, mean_term, 1), emit.size(x))

    defined = emit.op(
        "aten::__and__",
        emit.op("prim::AutogradAnyNonZero", dmean, types=[BoolType()]),
        emit.op("prim::AutogradAnyNonZero", drstd, types=[BoolType()]),
        types=[BoolType()],
    )
    return emit_if(emit, defined, build, lambda: emit.op("prim::AutogradZero", types=[TensorType()]), TensorType())


no_gradient(
    "aten::native_group_norm_backward",
    reason="native_group_norm_backward: PyTorch implements no derivative for it (its autograd raises too)",
)


# -- aten::_batch_norm_with_update ------------------------------------------------------------------
# native_batch_norm in training (running statistics updated in place) plus PyTorch's empty
# uint8 reserve; derivatives.yaml's batch_norm_backward with update=True is
# native_batch_norm_backward(train=True) with the saved statistics.
kernel("aten::_batch_norm_with_update")(norm_kernels.batch_norm_with_update)


@shape_rule("aten::_batch_norm_with_update")
def _batch_norm_with_update_shapes(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    channels = x.sizes[1] if x.sizes is not None and len(x.sizes) > 1 else None
    stats = fresh(x.scalar_type, (channels,), x.device)
    return [_like_suggested(x), stats, stats, fresh("Byte", (0,), x.device)]


@formula("aten::_batch_norm_with_update")
def batch_norm_with_update(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x, weight, bias = node.inputs()[0], _optional(node.inputs()[1]), _optional(node.inputs()[2])
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grads[0]):
        return none_grads(node)
    _, mean, invstd, _ = node.outputs()
    result = emit.op(
        "aten::native_batch_norm_backward", grads[0], x, weight if mask[0] else None, None, None, mean, invstd,
        True, node.inputs()[6], mask,
    )
    return _results(node, mask, result, (0, 1, 2))


# -- aten::instance_norm (its shape rule is batch_norm's) and gradview::instance_norm_backward ---------
# ATen's composite: batch norm of the input viewed as (1, N*C, ...) with the per-channel tensors
# repeated N times; its backward is native_batch_norm_backward on that view, the weight's and
# bias's gradients summed over the N repeats.
kernel("aten::instance_norm")(norm_kernels.instance_norm)
schema(
    "gradview::instance_norm_backward(Tensor grad, Tensor input, Tensor? weight, Tensor? bias, "
    "Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, "
    "bool cudnn_enabled) -> (Tensor, Tensor, Tensor)"
)
kernel("gradview::instance_norm_backward")(norm_kernels.instance_norm_backward)
no_gradient("gradview::instance_norm_backward", reason=BACKWARD_KERNEL)


@shape_rule("gradview::instance_norm_backward")
def _instance_norm_backward_shapes(args: NodeArgs) -> RuleResult:
    grad, x = args.tensor(0), args.tensor(1)
    if grad is None or x is None:
        return None
    weight, bias = args.tensor(2), args.tensor(3)
    return [fresh(grad.scalar_type, x.sizes, grad.device),
            None if weight is None else fresh(grad.scalar_type, weight.sizes, grad.device),
            None if bias is None else fresh(grad.scalar_type, bias.sizes, grad.device)]


@formula("aten::instance_norm")
def instance_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x, weight, bias = node.inputs()[0], _optional(node.inputs()[1]), _optional(node.inputs()[2])
    mask = _mask(x, weight, bias)
    if not any(mask) or _no_output_gradient(grads[0]):
        return none_grads(node)
    result = emit.op("gradview::instance_norm_backward", grads[0], *node.inputs())
    return _results(node, mask, result, (0, 1, 2))


# -- aten::rms_norm and gradview::rms_norm_backward ---------------------------------------------------
# ATen's composite x * rsqrt(mean(x^2) + eps) * weight (eps defaults to the dtype's epsilon);
# the backward takes eager autograd's steps through it (kernels/normalization.py).
kernel("aten::rms_norm")(norm_kernels.rms_norm)
schema(
    "gradview::rms_norm_backward(Tensor grad, Tensor input, int[] normalized_shape, Tensor? weight, "
    "float? eps) -> (Tensor, Tensor)"
)
kernel("gradview::rms_norm_backward")(norm_kernels.rms_norm_backward)
no_gradient("gradview::rms_norm_backward", reason=BACKWARD_KERNEL)


@shape_rule("aten::rms_norm")
def _rms_norm_shapes(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    return None if x is None else [fresh(x.scalar_type, x.sizes, x.device)]


@shape_rule("gradview::rms_norm_backward")
def _rms_norm_backward_shapes(args: NodeArgs) -> RuleResult:
    grad, x, weight = args.tensor(0), args.tensor(1), args.tensor(3)
    if grad is None or x is None:
        return None
    return [fresh(grad.scalar_type, x.sizes, grad.device),
            None if weight is None else fresh(grad.scalar_type, weight.sizes, grad.device)]


@formula("aten::rms_norm")
def rms_norm(emit: Emitter, node: Node, saved: Saved, grads: Grads) -> list[Value | None]:
    x, weight = node.inputs()[0], _optional(input_at(node, 2))
    wants = [needs_grad(x), weight is not None and needs_grad(weight)]
    if not any(wants) or _no_output_gradient(grads[0]):
        return none_grads(node)
    result = emit.op("gradview::rms_norm_backward", grads[0], *node.inputs())
    return [result[0] if wants[0] else None, None, result[1] if wants[1] else None, None]

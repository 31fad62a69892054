"""PropagateRequiresGrad: mark which tensors can carry a gradient.

Autograd only tracks a tensor computed from inputs that require grad. This
pass walks the graph forward and sets ``requires_grad`` on every tensor a
node produces: true when some floating-point tensor input requires grad
(an input whose flag is unknown counts as requiring it), false otherwise.
Some results never carry a gradient whatever their inputs: comparisons
(``Bool`` results), integer or bool dtypes, ``detach``, sizes, the indices
``max.dim`` or ``sort`` return, ``zeros_like`` and the other ``*_like``
factories, ``view.dtype`` (a reinterpretation of the bits), the ops whose
inputs PyTorch marks ``non_differentiable`` (the op library's
``NON_DIFFERENTIABLE``: Bessel functions, orthogonal polynomials), and the saved
statistics of the norms, the logsumexp of CPU flash attention and the total
weight of ``nll_loss_forward`` (PyTorch differentiates only their first
result). ``type_as`` looks only at its first input, since the second only lends
its dtype.

Control flow: a ``prim::If`` result requires grad if either branch's does; a
``prim::Loop`` carried value does if its initial value or the body's result
does, which the pass iterates to a fixpoint (a flag only ever turns on, so it
ends). Graph inputs keep their declared flags. An in-place write such as
``x.add_(w)`` can give ``x`` (and every view of it) a gradient after it was
made; TorchScript's pass ignores that, this one takes such tensors to
require grad.

The executor runs it before deciding where autodiff is needed: a graph in
which nothing requires grad needs no backward graph at all, and
differentiable subgraphs are only formed around nodes whose outputs do.

Before::

    graph(%x : Double(3, requires_grad=1), %i : Long(3, requires_grad=0)):
      %y : Double(3) = aten::mul(%x, %x)
      %m : Bool(3) = aten::gt(%x, %y)
      %j : Long(3) = aten::add(%i, %i, %one)

After::

      %y : Double(3, requires_grad=1) = aten::mul(%x, %x)
      %m : Bool(3, requires_grad=0) = aten::gt(%x, %y)
      %j : Long(3, requires_grad=0) = aten::add(%i, %i, %one)
"""

from __future__ import annotations

from collections.abc import Callable

from gradview.ops.dtype_rules import is_floating
from gradview.ops.registry import NON_DIFFERENTIABLE

from ..constants import constant_value
from ..graph import Block, Graph
from ..node import Node, Value
from ..types import DictType, ListType, OptionalType, TensorType, TupleType, Type
from .known_values import list_is_stable

__all__ = ["propagate_requires_grad"]

# Results that never require grad, whatever the inputs.
_NO_GRAD_OPS = frozenset({
    "aten::eq", "aten::ne", "aten::lt", "aten::le", "aten::gt", "aten::ge",
    "aten::logical_and", "aten::logical_or", "aten::logical_xor", "aten::logical_not",
    "aten::isnan", "aten::isinf", "aten::isfinite", "aten::signbit",
    "aten::detach", "aten::size", "aten::dim", "aten::numel", "aten::_shape_as_tensor",
    "aten::zeros_like", "aten::ones_like", "aten::empty_like", "aten::full_like",
    "aten::rand_like", "aten::randn_like", "aten::randint_like",
    "aten::new_zeros", "aten::new_ones", "aten::new_empty", "aten::new_full", "aten::new_empty_strided",
    "aten::argmax", "aten::argmin", "aten::any", "aten::all", "aten::nonzero",
    "aten::bucketize", "aten::searchsorted",
})
# Ops whose second result is an index tensor.
_INDEX_SECOND = frozenset({
    "aten::max", "aten::min", "aten::sort", "aten::topk", "aten::kthvalue", "aten::mode",
    "aten::median", "aten::nanmedian", "aten::cummax", "aten::cummin",
    "aten::max_pool2d_with_indices", "aten::max_pool1d_with_indices",
    "aten::adaptive_max_pool2d", "aten::adaptive_max_pool1d", "aten::adaptive_max_pool3d",
    "aten::max_pool3d_with_indices",
})
# Ops whose results after the first never require grad: PyTorch's derivative formulas use
# only the first output's gradient (``grad``), so autograd marks the others (saved
# statistics, the total weight of nll_loss) not differentiable.
_FIRST_ONLY = frozenset({
    "aten::native_batch_norm", "aten::_native_batch_norm_legit",
    "aten::_native_batch_norm_legit_no_training", "aten::_native_batch_norm_legit_functional",
    "aten::native_layer_norm", "aten::nll_loss_forward", "aten::nll_loss2d_forward",
    "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::log_sigmoid_forward",
    "aten::_batch_norm_with_update",
})
# Results derivatives.yaml marks not differentiable (``output_differentiability``), by
# position: the permutation matrix made from integer pivots, lstsq's singular values.
_NOT_DIFFERENTIABLE_AT = {"aten::linalg_lu": (0,), "aten::lu_unpack": (0,), "aten::linalg_lstsq": (2, 3)}
# Structural prims whose results are the elements of their input, one by one.
_UNPACKS = frozenset({"prim::TupleUnpack", "prim::ListUnpack"})


def propagate_requires_grad(graph: Graph) -> bool:
    """Set ``requires_grad`` on every tensor output of every node.

    Returns True if any type changed.
    """
    propagation = _Propagation(_written_in_place(graph))
    propagation.run_block(graph.block)
    return propagation.changed()


def _written_in_place(graph: Graph) -> Callable[[Value], bool]:
    """A test for tensors whose memory an in-place op writes (``x.add_(w)``, ``requires_grad_``).

    Such a write can give a tensor a gradient after it was made, and every
    view of the same memory sees it, so those tensors are taken to require
    grad. The write spreads along view relations (schema aliases such as
    ``Tensor(a) -> Tensor(a)``, both ways), from an element taken out of a
    list or tuple to that container, and from a container to its elements.
    Nothing is computed when the graph has no in-place op.
    """
    if not any(_is_in_place(node.kind()) for node in graph.all_nodes()):
        return lambda value: False
    seeds: list[Value] = []
    views: dict[Value, list[Value]] = {}
    parts: dict[Value, list[Value]] = {}  # container -> elements, element taken -> container

    def link(a: Value, b: Value) -> None:
        views.setdefault(a, []).append(b)
        views.setdefault(b, []).append(a)

    for node in graph.all_nodes():
        kind, inputs, outputs = node.kind(), node.inputs(), node.outputs()
        if _is_in_place(kind) and inputs:
            seeds.append(inputs[0])
            if outputs:
                link(outputs[0], inputs[0])
        elif kind in ("prim::ListConstruct", "prim::TupleConstruct"):
            parts.setdefault(outputs[0], []).extend(inputs)
        elif kind in _UNPACKS or kind == "prim::TupleIndex" or (inputs and _is_list_index(node)):
            for value in outputs:
                parts.setdefault(value, []).append(inputs[0])
        else:
            _link_views(node, link)
    written: set[Value] = set()
    work = list(seeds)
    while work:
        value = work.pop()
        if value in written:
            continue
        written.add(value)
        work.extend(views.get(value, ()))
        work.extend(parts.get(value, ()))
    return written.__contains__


def _link_views(node: Node, link: Callable[[Value, Value], None]) -> None:
    """Connect each output to the inputs its schema says it may share memory with."""
    schema = node.maybe_schema()
    if schema is None:
        return
    sets: dict[str, Value] = {}
    for arg, value in zip(schema.arguments, node.inputs(), strict=False):
        if arg.alias:
            sets[arg.alias.split("->")[0].strip().rstrip("!")] = value
    for ret, value in zip(schema.returns, node.outputs(), strict=False):
        source = sets.get(ret.alias.rstrip("!")) if ret.alias else None
        if source is not None:
            link(value, source)


def _is_in_place(kind: str) -> bool:
    name = kind.partition("::")[2]
    return name.endswith("_") and not name.endswith("__")


class _Propagation:
    def __init__(self, written: Callable[[Value], bool]) -> None:
        self.written = written
        # Flags of containers (tuples, lists), which have no requires_grad of
        # their own: per element when built element by element, so that
        # unpacking gives each element its own flag, else one for all.
        self.elements: dict[Value, list[bool]] = {}
        self.uniform: dict[Value, bool] = {}
        # The type each retyped value had before the pass: a loop may flip a
        # flag and flip it back, which is no change.
        self.original: dict[Value, Type] = {}

    def changed(self) -> bool:
        return any(value.type() != old for value, old in self.original.items())

    # -- reading and writing flags ---------------------------------------------------------------
    def requires(self, value: Value) -> bool:
        """Does ``value`` (maybe) require grad? Non-floating tensors never do."""
        flags = self.elements.get(value)
        if flags is not None:
            return any(flags)
        t = value.type()
        if isinstance(t, TensorType) and self.written(value):
            return _type_requires(t.with_requires_grad(None))
        if value in self.uniform:
            return self.uniform[value]
        return _type_requires(value.type())

    def set_flag(self, value: Value, flag: bool) -> None:
        t = value.type()
        if not isinstance(t, TensorType):
            # A container of tensors: remember its flag, unless a list may grow later.
            stable = not isinstance(t, ListType) or list_is_stable(value)
            if _type_requires(t) and stable:
                self.uniform[value] = flag
            return
        if self.written(value):
            flag = True
        if t.scalar_type is not None and not is_floating(t.scalar_type):
            flag = False
        if t.requires_grad != flag:
            self.original.setdefault(value, t)
            value.set_type(t.with_requires_grad(flag))

    # -- walking --------------------------------------------------------------------------------
    def run_block(self, block: Block) -> None:
        for node in block.nodes():
            kind = node.kind()
            if kind == "prim::If":
                self.run_if(node)
            elif kind == "prim::Loop":
                self.run_loop(node)
            else:
                for sub in node.blocks():
                    self.run_block(sub)
                self.run_simple(node)

    def run_simple(self, node: Node) -> None:
        kind = node.kind()
        inputs, outputs = node.inputs(), node.outputs()
        if kind == "prim::TupleConstruct" or (kind == "prim::ListConstruct" and list_is_stable(outputs[0])):
            self.elements[outputs[0]] = [self.requires(v) for v in inputs]
            return
        unpacks = kind in _UNPACKS or kind == "prim::TupleIndex" or _is_list_index(node)
        if unpacks and self.run_unpack(node):
            return
        if kind in _NO_GRAD_OPS or kind in NON_DIFFERENTIABLE or (kind == "aten::view" and _is_dtype_view(node)):
            flags = [False] * len(outputs)
        elif kind == "aten::type_as" and len(inputs) == 2:
            flags = [self.requires(inputs[0])]
        elif kind == "aten::tensor" and _constant_flag(node) is not None:
            flags = [bool(_constant_flag(node))]
        else:
            any_input = any(self.requires(v) for v in inputs)
            flags = [any_input] * len(outputs)
            if kind in _INDEX_SECOND and len(outputs) == 2:
                flags[1] = False
            elif kind in _FIRST_ONLY:
                flags[1:] = [False] * (len(flags) - 1)
            for position in _NOT_DIFFERENTIABLE_AT.get(kind, ()):
                if position < len(flags):
                    flags[position] = False
        for value, flag in zip(outputs, flags, strict=False):
            self.set_flag(value, flag)

    def run_unpack(self, node: Node) -> bool:
        """Give each unpacked element its own flag; False if the elements are unknown."""
        source = node.inputs()[0]
        outputs = node.outputs()
        flags = self.elements.get(source)
        if flags is None and source in self.uniform:
            flags = [self.uniform[source]] * len(outputs)
        if flags is None and isinstance(source.type(), TupleType):
            flags = [_type_requires(t) for t in source.type().elems]  # type: ignore[attr-defined]
        if flags is None:
            return False
        if node.kind() in _UNPACKS:
            if len(flags) != len(outputs):
                return False
            for value, flag in zip(outputs, flags, strict=True):
                self.set_flag(value, flag)
            return True
        index = constant_value(node.inputs()[1])
        if source in self.uniform and source not in self.elements:
            self.set_flag(outputs[0], self.uniform[source])
            return True
        if not isinstance(index, int) or isinstance(index, bool) or not -len(flags) <= index < len(flags):
            return False
        self.set_flag(outputs[0], flags[index])
        return True

    # -- control flow ---------------------------------------------------------------------------
    def run_if(self, node: Node) -> None:
        branches = node.blocks()
        for block in branches:
            self.run_block(block)
        for index, value in enumerate(node.outputs()):
            self.set_flag(value, any(self.requires(b.outputs()[index]) for b in branches))

    def run_loop(self, node: Node) -> None:
        """Iterate the body until no carried value newly requires grad."""
        body = node.blocks()[0]
        params = body.inputs()[1:]
        carried = [self.requires(v) for v in node.inputs()[2:]]
        while True:
            for param, flag in zip(params, carried, strict=False):
                self.set_flag(param, flag)
            self.run_block(body)
            returned = [self.requires(v) for v in body.outputs()[1:]]
            merged = [c or r for c, r in zip(carried, returned, strict=False)]
            if merged == carried:
                break
            carried = merged
        for value, flag in zip(node.outputs(), carried, strict=False):
            self.set_flag(value, flag)


def _is_list_index(node: Node) -> bool:
    return node.kind() in ("aten::__getitem__", "aten::select") and isinstance(
        node.inputs()[0].type(), ListType
    )


def _is_dtype_view(node: Node) -> bool:
    """``view.dtype`` reinterprets the bits: PyTorch marks its result not differentiable."""
    schema = node.maybe_schema()
    return schema is not None and schema.overload_name == "dtype"


def _type_requires(t: Type) -> bool:
    """``Value.requires_grad()``, except that non-floating tensors never require grad."""
    if isinstance(t, TensorType):
        if t.scalar_type is not None and not is_floating(t.scalar_type):
            return False
        return t.requires_grad_or_true
    if isinstance(t, (ListType, OptionalType)):
        return _type_requires(t.elem)
    if isinstance(t, TupleType):
        return any(_type_requires(e) for e in t.elems)
    if isinstance(t, DictType):
        return _type_requires(t.key) or _type_requires(t.value)
    return False


def _constant_flag(node: Node) -> bool | None:
    """``aten::tensor(data, dtype, device, requires_grad)``: the constant requires_grad flag."""
    if len(node.inputs()) < 4:
        return None
    v = constant_value(node.inputs()[3])
    return v if isinstance(v, bool) else None

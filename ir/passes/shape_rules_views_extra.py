"""Shape rules for the copies of views, unflatten, meshgrid, pad, advanced indexing,
nonzero and _dim_arange.

* ``permute_copy``, ``squeeze_copy``, ``t_copy``, ``unsqueeze_copy``: the view's
  sizes, in a fresh contiguous tensor.
* ``unflatten(dim, sizes)``: dim ``dim`` becomes ``sizes`` (one may be -1); a view.
* ``meshgrid``: one grid per input, of the inputs' lengths (``"xy"`` swaps the
  first two), each an expanded view of its input (stride 0 along the others).
* ``pad``: each padded dim grows by its two pads (negative ones crop).
* ``index.Tensor``: NumPy's (and PyTorch's) rule: None keeps a dim; integer
  tensors broadcast together into the indexed dims' place (in front when they
  are not adjacent); a mask stands for one dim of unknown size.
* ``nonzero``: ``Long(count, rank)``, the count unknown; ``_dim_arange``:
  ``Long(size(dim))``.
"""

from __future__ import annotations

from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import (
    ElementList,
    NodeArgs,
    RuleResult,
    Sizes,
    broadcast,
    fresh,
    layout_of,
    make_tensor,
    numel,
    wrap_dim,
)
from gradview.ops.tensor_layout import contiguous_strides, view_strides

from ..types import NoneType, TensorType
from .shape_rules_views import _permute, _squeeze, _t, _unsqueeze

__all__: list[str] = []


# -- copies of views ------------------------------------------------------------------------
def _copied(result: RuleResult) -> RuleResult:
    if not result or not isinstance(result[0], TensorType):
        return result
    view = result[0]
    return [fresh(view.scalar_type, view.sizes, view.device)]


@shape_rule("aten::permute_copy")
def _permute_copy(args: NodeArgs) -> RuleResult:
    return _copied(_permute(args))


@shape_rule("aten::squeeze_copy")
def _squeeze_copy(args: NodeArgs) -> RuleResult:
    return _copied(_squeeze(args))


@shape_rule("aten::t_copy")
def _t_copy(args: NodeArgs) -> RuleResult:
    return _copied(_t(args))


@shape_rule("aten::unsqueeze_copy")
def _unsqueeze_copy(args: NodeArgs) -> RuleResult:
    return _copied(_unsqueeze(args))


# -- unflatten ---------------------------------------------------------------------------------
@shape_rule("aten::unflatten")
def _unflatten(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    sizes = args.int_list(2)
    if self.sizes is None or sizes is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    rank = len(self.sizes)
    dim = wrap_dim(args.int_value(1), rank)
    if dim is None or rank == 0:
        return None
    pieces = list(sizes)
    if -1 in pieces:
        length = self.sizes[dim]
        known = numel(tuple(s for s in pieces if s != -1))
        pieces[pieces.index(-1)] = length // known if length is not None and known else None
    result = self.sizes[:dim] + tuple(pieces) + self.sizes[dim + 1:]
    layout = layout_of(self)
    strides = view_strides(layout[0], layout[1], result) if layout and None not in result else None  # type: ignore[arg-type]
    return [make_tensor(self.scalar_type, result, strides, self.device)]


# -- meshgrid ------------------------------------------------------------------------------------
@shape_rule("aten::meshgrid")
def _meshgrid(args: NodeArgs) -> RuleResult:
    elements = args.elements(0)
    if elements is None or not all(isinstance(e, TensorType) and e.sizes is not None for e in elements):
        return None
    count = len(elements)
    indexing = args.value(1, "ij") if len(args) > 1 else "ij"
    if indexing not in ("ij", "xy"):
        return None
    position = list(range(count))
    if indexing == "xy" and count >= 2:
        position[0], position[1] = 1, 0
    lengths = [1 if not e.sizes else e.sizes[0] for e in elements]  # type: ignore[union-attr]
    shape: list[int | None] = [None] * count
    for index, length in enumerate(lengths):
        shape[position[index]] = length
    grids = []
    for index, element in enumerate(elements):
        assert isinstance(element, TensorType)
        layout = layout_of(element)
        strides = None
        if layout is not None and None not in shape:
            view = [1] * count
            view[position[index]] = lengths[index]  # type: ignore[call-overload]
            own = contiguous_strides(tuple(view))  # type: ignore[arg-type]
            if element.sizes:
                own = own[:position[index]] + (layout[1][0],) + own[position[index] + 1:]
            strides = tuple(s if view[d] == shape[d] else 0 for d, s in enumerate(own))
        grids.append(make_tensor(element.scalar_type, tuple(shape), strides, element.device))
    return [ElementList(tuple(grids))]


# -- pad -------------------------------------------------------------------------------------------
@shape_rule("aten::pad")
def _pad(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    pad = args.int_list(1)
    if self.sizes is None or pad is None or len(pad) % 2 or len(pad) // 2 > len(self.sizes):
        rank = None if self.sizes is None else len(self.sizes)
        return [fresh(self.scalar_type, None if rank is None else (None,) * rank, self.device)]
    sizes = list(self.sizes)
    for pair in range(len(pad) // 2):
        axis = len(sizes) - 1 - pair
        before, after = pad[2 * pair], pad[2 * pair + 1]
        known = sizes[axis] is not None and before is not None and after is not None
        sizes[axis] = sizes[axis] + before + after if known else None  # type: ignore[operator]
    return [fresh(self.scalar_type, tuple(sizes), self.device)]


# -- advanced indexing --------------------------------------------------------------------------------
_MASKS = ("Bool", "Byte")


def _indexed_sizes(self: TensorType, entries: tuple[object, ...]) -> Sizes | None:
    """The result's sizes by NumPy's rule, or None when an index's rank is unknown."""
    assert self.sizes is not None
    consumed = 0
    advanced: list[Sizes] = []
    positions: list[int] = []
    kept_before: list[int | None] = []
    kept_after: list[int | None] = []
    for position, entry in enumerate(entries):
        if entry == NoneType() or entry is None:
            (kept_after if advanced else kept_before).append(
                self.sizes[consumed] if consumed < len(self.sizes) else None
            )
            consumed += 1
            continue
        if not isinstance(entry, TensorType) or entry.sizes is None or entry.scalar_type is None:
            return None
        if entry.scalar_type in _MASKS:
            advanced.append((None,))
            consumed += len(entry.sizes)
        else:
            advanced.append(entry.sizes)
            consumed += 1
        positions.append(position)
    rest = tuple(self.sizes[consumed:])
    if not advanced:
        return tuple(kept_before) + rest
    indexed = broadcast(*advanced)
    if indexed is None:
        return None
    if positions == list(range(positions[0], positions[-1] + 1)):
        return tuple(kept_before) + indexed + tuple(kept_after) + rest
    return indexed + tuple(kept_before) + tuple(kept_after) + rest


@shape_rule("aten::index")
def _index(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None  # list.index and str.index
    entries = args.elements(1)
    if self.sizes is None or entries is None:
        return [make_tensor(self.scalar_type, None, None, self.device)]
    sizes = _indexed_sizes(self, entries)
    layout = layout_of(self)
    if layout is not None and layout[1] == contiguous_strides(layout[0]):
        return [fresh(self.scalar_type, sizes, self.device)]  # PyTorch keeps a contiguous input's layout
    return [make_tensor(self.scalar_type, sizes, None, self.device)]


@shape_rule("aten::nonzero")
def _nonzero(args: NodeArgs) -> RuleResult:
    self = args.tensor(0)
    if self is None:
        return None
    rank = None if self.sizes is None else len(self.sizes)
    return [fresh("Long", None if rank is None else (None, rank), self.device)]


@shape_rule("aten::_dim_arange")
def _dim_arange(args: NodeArgs) -> RuleResult:
    like = args.tensor(0)
    if like is None:
        return None
    if like.sizes is None:
        return [fresh("Long", (None,), like.device)]
    dim = wrap_dim(args.int_value(1), len(like.sizes))
    return [fresh("Long", (None if dim is None else like.sizes[dim],), like.device)]

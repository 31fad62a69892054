"""Shape rules for the recurrent ops: lstm_cell, gru_cell, lstm and gru.

A cell's new state has the batch of its input and the hidden size of
``w_hh`` (``[4*hidden, hidden]`` for the LSTM, ``[3*hidden, hidden]`` for the
GRU). A layer op returns:

* ``output``: ``[seq, batch, directions * out]`` with ``out`` the size of
  ``h`` (the projection size of an LSTM with ``proj_size``), read from
  ``hx``. PyTorch builds it step after step in ``[seq, batch, ...]`` order,
  so with ``batch_first`` it is that tensor transposed: ``[batch, seq, ...]``
  sizes with the seq dim's stride the smallest but one. The packed
  (``.data``) form gives ``[rows, directions * out]``.
* ``hy`` (and the LSTM's ``cy``): new tensors the sizes of ``hx``'s.

The backward kernels the formulas emit (``gradview::lstm_backward``...)
return one gradient per input, each like its input.
"""

from __future__ import annotations

from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import (
    ElementList,
    NodeArgs,
    RuleResult,
    Sizes,
    all_known,
    fresh,
    make_tensor,
)

from ..types import TensorType, Type

__all__: list[str] = []


def _size(t: TensorType | Type | None, dim: int) -> int | None:
    """Size ``dim`` of a tensor type, when known."""
    if not isinstance(t, TensorType) or t.sizes is None or not -len(t.sizes) <= dim < len(t.sizes):
        return None
    return t.sizes[dim]


@shape_rule("aten::lstm_cell", "aten::gru_cell")
def _cell(args: NodeArgs) -> RuleResult:
    x, w_hh = args.tensor(0), args.tensor(3)
    if x is None:
        return None
    sizes: Sizes = (_size(x, 0), _size(w_hh, 1))
    state = fresh(x.scalar_type, sizes, x.device)
    return [state, state] if args.node.kind() == "aten::lstm_cell" else [state]


def _states(args: NodeArgs, lstm: bool, packed: bool) -> list[TensorType | None]:
    """The types of h0 (and c0): the list's elements for the LSTM, the tensor for the GRU."""
    position = 2 if packed else 1
    if not lstm:
        return [args.tensor(position)]
    elements = args.elements(position) or ()
    return [e if isinstance(e, TensorType) else None for e in elements][:2] or [None, None]


def _output(args: NodeArgs, x: TensorType, width: int | None, packed: bool) -> TensorType:
    if packed:
        return fresh(x.scalar_type, (_size(x, 0), width), x.device)
    batch_first = args.value(8, None)
    if batch_first is True:
        batch, steps = _size(x, 0), _size(x, 1)
        sizes: Sizes = (batch, steps, width)
        strides = None
        if all_known(sizes):
            strides = (width, batch * width, 1)  # type: ignore[operator]
        return make_tensor(x.scalar_type, sizes, strides, x.device)
    if batch_first is False:
        return fresh(x.scalar_type, (_size(x, 0), _size(x, 1), width), x.device)
    return fresh(x.scalar_type, (None, None, width), x.device)


@shape_rule("aten::lstm", "aten::gru")
def _layer(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    lstm = args.node.kind() == "aten::lstm"
    schema = args.node.maybe_schema()
    if schema is None:
        return None
    # .data(data, batch_sizes, hx, ...) or .input(input, hx, ...)
    packed = schema.overload_name == "data"
    states = _states(args, lstm, packed)
    bidirectional = args.value(8 if packed else 7, None)
    out = _size(states[0], 2)
    width = (
        out * (2 if bidirectional else 1)
        if out is not None and isinstance(bidirectional, bool)
        else None
    )
    results: list[Type | None] = [_output(args, x, width, packed)]
    for state in states:
        results.append(None if state is None else fresh(x.scalar_type, state.sizes, x.device))
    return results  # type: ignore[return-value]


# -- the backward kernels: each gradient has its input's dtype, sizes and device ------------------
def _like(t: TensorType | None) -> TensorType | None:
    return None if t is None else fresh(t.scalar_type, t.sizes, t.device)


def _list_like(args: NodeArgs, i: int) -> ElementList | None:
    """A list of gradients, one like each element of list input ``i`` (when their types are known)."""
    elements = args.elements(i)
    if elements is None or not all(isinstance(e, TensorType) for e in elements):
        return None
    return ElementList(tuple(_like(e) for e in elements))  # type: ignore[arg-type, misc]


@shape_rule("gradview::lstm_cell_backward", "gradview::gru_cell_backward")
def _cell_backward(args: NodeArgs) -> RuleResult:
    """(d_input, d_hx, d_w_ih, d_w_hh, d_b_ih, d_b_hh); the LSTM's d_hx is a list."""
    lstm = args.node.kind() == "gradview::lstm_cell_backward"
    first = 2 if lstm else 1  # the input follows the output gradients
    d_hx = _list_like(args, first + 1) if lstm else _like(args.tensor(first + 1))
    weights = [_like(args.tensor(i)) for i in range(first + 2, first + 6)]
    return [_like(args.tensor(first)), d_hx, *weights]


@shape_rule("gradview::lstm_backward", "gradview::gru_backward")
def _layer_backward(args: NodeArgs) -> RuleResult:
    """(d_input, d_hx, d_params): d_input laid out like the layer's output (a transposed
    [seq, batch, ...] buffer with batch_first), d_params one per weight."""
    lstm = args.node.kind() == "gradview::lstm_backward"
    first = 3 if lstm else 2
    x = args.tensor(first)
    d_input = _like(x)
    if x is not None and args.value(first + 7, None) is True and args.is_none(first + 1):
        sizes = x.sizes
        if all_known(sizes) and len(sizes) == 3:  # type: ignore[arg-type]
            batch, _, width = sizes  # type: ignore[misc]
            d_input = make_tensor(x.scalar_type, sizes, (width, batch * width, 1), x.device)
        else:
            d_input = make_tensor(x.scalar_type, sizes, None, x.device)
    d_hx = _list_like(args, first + 2) if lstm else _like(args.tensor(first + 2))
    return [d_input, d_hx, _list_like(args, first + 3)]

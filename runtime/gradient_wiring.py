"""Which values of f and df a Gradient's index lists name.

``differentiate`` describes how its forward graph f and backward graph df fit
together with lists of positions (:class:`gradview.autodiff.Gradient`): which
of f's outputs df takes a gradient for, which of f's inputs and outputs it
captures, which of f's inputs it returns a gradient for. The viewer draws
captured edges from them and ``gradview saved`` lists the captured values;
both need the values themselves, which this module resolves from a trace's
snapshots of f and df.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .trace_records import BlockRecord
from .trace_types import Note

__all__ = ["GradientWiring", "gradient_wiring"]


@dataclass
class GradientWiring:
    """The value ids behind a Gradient's index lists; position j of each list is
    entry j of the Gradient list it is named after (None where the graph shown
    does not have it, e.g. before lambdaLiftReverse adds df's inputs).

    ``*_f`` lists name values of f, ``*_df`` lists values of df: a captured
    value is f's value on one side and df's input on the other.
    """

    vjp_inputs_f: list[int | None] = field(default_factory=list)  # f outputs whose gradient df takes in
    vjp_inputs_df: list[int | None] = field(default_factory=list)  # df's inputs for those gradients
    captured_inputs_f: list[int | None] = field(default_factory=list)
    captured_inputs_df: list[int | None] = field(default_factory=list)
    captured_outputs_f: list[int | None] = field(default_factory=list)
    captured_outputs_df: list[int | None] = field(default_factory=list)
    temporaries: set[int] = field(default_factory=set)  # positions j of captured outputs that are temporaries
    vjp_outputs_f: list[int | None] = field(default_factory=list)  # f inputs df returns a gradient for
    vjp_outputs_df: list[int | None] = field(default_factory=list)  # df's gradient outputs


def _pick(ids: Sequence[int], positions: Iterable[int]) -> list[int | None]:
    """``ids[p]`` for each position, None where the list is too short."""
    return [ids[p] if 0 <= p < len(ids) else None for p in positions]


def gradient_wiring(f: BlockRecord | None, df: BlockRecord | None, notes: dict[str, Any]) -> GradientWiring:
    """Resolve the Gradient lists in ``notes`` to value ids of ``f`` and ``df``.

    df's inputs are the incoming gradients (one per ``df_input_vjps`` entry),
    then the captured inputs, then the captured outputs; df returns one
    gradient per ``df_output_vjps`` entry (packed into one tuple once
    packReturnValuesIntoTuple has run: the tuple's elements are used then).
    Notes that give the positions explicitly (``df_vjp_params``,
    ``df_captured_input_params``, ``df_captured_output_params``,
    ``df_output_returns``: AOTAutograd's backward, which takes the saved values
    first and returns None for inputs without a gradient) take precedence.
    """
    vjps = tuple(notes.get(Note.DF_INPUT_VJPS, ()))
    captured_inputs = tuple(notes.get(Note.DF_INPUT_CAPTURED_INPUTS, ()))
    captured_outputs = tuple(notes.get(Note.DF_INPUT_CAPTURED_OUTPUTS, ()))
    output_vjps = tuple(notes.get(Note.DF_OUTPUT_VJPS, ()))
    real = int(notes.get(Note.F_REAL_OUTPUTS, 0))
    wiring = GradientWiring()
    wiring.temporaries = {j for j, i in enumerate(captured_outputs) if i >= real}
    if f is not None:
        f_inputs = [param.id for param in f.params]
        wiring.vjp_inputs_f = _pick(f.returns, vjps)
        wiring.captured_inputs_f = _pick(f_inputs, captured_inputs)
        wiring.captured_outputs_f = _pick(f.returns, captured_outputs)
        wiring.vjp_outputs_f = _pick(f_inputs, output_vjps)
    if df is not None:
        df_inputs = [param.id for param in df.params]
        first_captured = len(vjps)
        first_output = first_captured + len(captured_inputs)
        wiring.vjp_inputs_df = _pick(df_inputs, notes.get(Note.DF_VJP_PARAMS, range(first_captured)))
        wiring.captured_inputs_df = _pick(
            df_inputs, notes.get(Note.DF_CAPTURED_INPUT_PARAMS, range(first_captured, first_output))
        )
        wiring.captured_outputs_df = _pick(
            df_inputs,
            notes.get(Note.DF_CAPTURED_OUTPUT_PARAMS, range(first_output, first_output + len(captured_outputs))),
        )
        returns = notes.get(Note.DF_OUTPUT_RETURNS)
        wiring.vjp_outputs_df = (
            _pick(df.returns, returns) if returns is not None else _df_gradients(df, len(output_vjps))
        )
    return wiring


def _df_gradients(df: BlockRecord, count: int) -> list[int | None]:
    returns: Sequence[int] = df.returns
    if len(returns) == 1:
        producer = next((node for node in df.nodes if any(v.id == returns[0] for v in node.outputs)), None)
        if producer is not None and producer.kind == "prim::TupleConstruct" and len(producer.inputs) == count:
            returns = producer.inputs
    return _pick(returns, range(count))

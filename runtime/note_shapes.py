"""The shape each step annotation has, checked when a saved trace is read.

A saved trace is a file the user hands over: an annotation the viewer looks
values up in (``autograd_zero``: value id -> state) must hold what gradview
writes there, or a lookup deep in the drawing code fails on, say, a dict where
a state name belongs. :func:`check_notes` checks the known notes where the
JSON is read (notes it does not know pass as they are) and names the one that
is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["check_notes"]


def _int(value: Any) -> bool:
    return isinstance(value, int)


def _str(value: Any) -> bool:
    return isinstance(value, str)


def _seq(item: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, tuple | list) and all(item(v) for v in value)


def _map(key: Callable[[Any], bool], item: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, dict) and all(key(k) and item(v) for k, v in value.items())


def _either(*shapes: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: any(shape(value) for shape in shapes)


_INTS = _seq(_int)
_SHAPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    **dict.fromkeys(("autograd_zero", "excluded", "inlined"), (_map(_int, _str), "node or value ids to names")),
    **dict.fromkeys(("differentiable_graphs", "grad_of"), (_map(_int, _int), "ids to ids")),
    **dict.fromkeys(("parameter_owners", "value_names"), (_map(_str, _str), "names to names")),
    "symbol_values": (_map(_str, _int), "symbols to whole numbers"),
    "symbolic_sizes": (_map(_str, _either(_str, _seq(_either(_int, _str)))), "names to sizes"),
    "needs_grad_outside": (_map(_int, _seq(_either(_str, _int))), "node ids to causes"),
    **dict.fromkeys(
        ("df_input_vjps", "df_input_captured_inputs", "df_input_captured_outputs", "df_output_vjps",
         "reads_from_forward", "df_vjp_params", "df_captured_input_params", "df_captured_output_params",
         "df_output_returns"),
        (_INTS, "a list of whole numbers"),
    ),
    **dict.fromkeys(("autodiff_mode", "compile_id", "header"), (_str, "a string")),
    **dict.fromkeys(
        ("compilation", "f_real_outputs", "inline_threshold", "log_line", "min_group_size"), (_int, "a whole number")
    ),
    "log": (_seq(_str), "a list of strings"),
}


def check_notes(notes: dict[Any, Any], step: int) -> None:
    """Raise ValueError naming the first known annotation of step ``step`` whose value has the wrong shape."""
    for key, value in notes.items():
        shape = _SHAPES.get(str(key))
        if shape is not None and not shape[0](value):
            raise ValueError(f"step {step} annotation {key!r} is not {shape[1]}")

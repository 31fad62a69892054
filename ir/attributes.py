"""Node attributes: the kinds TorchScript knows and how each prints.

An attribute is stored as ``(kind, value)``; the kind decides how the value
prints (``value=2.`` for a float, ``value=1`` for a bool stored as an int,
``Subgraph`` as a separate ``with ... = graph(...)`` section).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from .tensor_format import format_printed_tensor

if TYPE_CHECKING:
    from .graph import Graph

__all__ = [
    "AttributeKind",
    "TensorConstant",
    "Annotated",
    "EnumValue",
    "format_double",
    "quote_string",
    "format_ivalue",
    "format_attribute",
    "copy_attribute_value",
]


class AttributeKind(StrEnum):
    """TorchScript's attribute kinds, named as torch's ``Node.kindOf`` names them (``Node.attribute_kind`` here)."""

    f = "f"        # float
    fs = "fs"      # float list
    c = "c"        # complex
    i = "i"        # int (and bool)
    is_ = "is"     # int list
    s = "s"        # string
    ss = "ss"      # string list
    t = "t"        # tensor constant
    ts = "ts"      # tensor list
    g = "g"        # graph (Subgraph, ReverseSubgraph)
    gs = "gs"      # graph list
    ty = "ty"      # type
    tys = "tys"    # type list
    ival = "ival"  # any other constant (tuples, nested lists, None)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, eq=False, slots=True)
class TensorConstant:
    """A tensor stored in the graph, as a ``prim::Constant[value=...]``.

    ``values`` is the flat data in row-major order, ``sizes`` its shape and
    ``scalar_type`` TorchScript's dtype name ("Float", "Long"...). ``values``
    is None when the text does not hold the data exactly: ``<Tensor>`` (more
    than 10 elements, or a frozen module's weights) and small tensors that
    ``at::print`` rounded to four decimals. Such a constant has no known value
    (``constant_value`` says NOT_CONSTANT) until the data is attached
    (``ir.constants.attach_tensor_data``, e.g. by the ``from_torch``
    frontend): ``data`` is then an array the runtime reads, kept out of the
    IR's own logic. ``text`` is the text the constant was read from, printed
    back as it was. Kept free of NumPy so the IR core stays at the bottom of
    the stack; the runtime turns it into an array.
    """

    values: tuple[float | int | bool, ...] | None
    sizes: tuple[int, ...]
    scalar_type: str
    device: str = "cpu"
    text: str | None = None
    data: Any = None

    @property
    def numel(self) -> int:
        return math.prod(self.sizes)

    @property
    def is_known(self) -> bool:
        """Whether the data is there: in the text, or attached."""
        return self.values is not None or self.data is not None

    def __str__(self) -> str:
        if self.text is not None:
            return self.text
        values = self.values
        sizes = self.sizes
        if values is None and self.data is not None:
            sizes = tuple(self.data.shape)
            if math.prod(sizes) <= 10:
                values = tuple(self.data.reshape(-1).tolist())
        if values is None:
            return "<Tensor>"
        floating = self.scalar_type in ("Float", "Double", "Half", "BFloat16")
        if len(values) == 1:
            v = values[0]
            return "{" + (_format_stream_double(float(v)) if floating else str(int(v))) + "}"
        if math.prod(sizes) > 10:
            return "<Tensor>"
        return format_printed_tensor(values, sizes, self.scalar_type, self.device)


@dataclass(frozen=True, slots=True)
class Annotated:
    """A list or dict constant printed with its type: ``annotate(List[int], [])``.

    TorchScript prints the type when the value alone does not tell it (an
    empty list or dict, or elements of an Optional or Union type).
    ``annotation`` is the type in Python's spelling, as printed.
    """

    annotation: str
    value: Any

    def __str__(self) -> str:
        if isinstance(self.value, dict):  # torch prints no space after this comma
            return f"annotate({self.annotation},{format_ivalue(self.value)})"
        return f"annotate({self.annotation}, {format_ivalue(self.value)})"


@dataclass(frozen=True, slots=True)
class EnumValue:
    """A member of a Python ``Enum`` class: ``__torch__.Color.RED``."""

    enum_class: str
    name: str

    def __str__(self) -> str:
        return f"{self.enum_class}.{self.name}"


def format_double(value: float) -> str:
    """Print a double as TorchScript prints an IValue: ``2.``, ``-0.``, ``0.10000000000000001``."""
    if math.isfinite(value) and abs(value) < 1e10 and value == int(value):
        if value == 0 and math.copysign(1.0, value) < 0:
            return "-0."
        return f"{int(value)}."
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return format(value, ".17g")


def _format_stream_double(value: float) -> str:
    # C++ ``ostream << double`` with its default precision of 6.
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return format(value, ".6g")


_ESCAPES = {
    ord("\\"): "\\\\", ord('"'): '\\"', ord("'"): "\\'", ord("\a"): "\\a", ord("\b"): "\\b",
    ord("\f"): "\\f", ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t",
    ord("\v"): "\\v",
}


def quote_string(text: str) -> str:
    """Quote a string the way c10's printQuotedString does (octal for non-printables)."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text and "'" not in text:
        return '"' + text + '"'
    out = ['"']
    for byte in text.encode("utf-8"):
        if byte in _ESCAPES:
            out.append(_ESCAPES[byte])
        elif 0x20 <= byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append("\\" + format(byte, "03o"))
    out.append('"')
    return "".join(out)


def format_ivalue(value: Any) -> str:
    """Print a constant the way an IValue prints inside an attribute list."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, str):
        return quote_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(format_ivalue(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(format_ivalue(v) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(format_ivalue(k) + ": " + format_ivalue(v) for k, v in value.items()) + "}"
    return str(value)  # tensors, Annotated, EnumValue, types


def format_attribute(kind: AttributeKind, value: Any) -> str:
    """The text after ``name=`` in a node's attribute list."""
    if kind is AttributeKind.i:
        return str(int(value))
    if kind is AttributeKind.f:
        return format_double(value)
    if kind in (AttributeKind.is_, AttributeKind.fs, AttributeKind.ss, AttributeKind.ival):
        return format_ivalue(list(value) if isinstance(value, tuple) and kind is not AttributeKind.ival else value)
    if kind is AttributeKind.s:
        return quote_string(value)
    if kind is AttributeKind.t:
        return str(value)
    if kind is AttributeKind.ts:
        return "[<Tensors>]"  # torch never prints a tensor list's data
    if kind is AttributeKind.g:
        return "<Graph>"
    if kind is AttributeKind.gs:
        return "[<Graphs>]"
    if kind is AttributeKind.ty:
        return str(value)
    if kind is AttributeKind.tys:
        return "[" + ", ".join(str(t) for t in value) + "]"
    if kind is AttributeKind.c:
        return str(value)
    raise ValueError(f"unknown attribute kind {kind!r}")


def copy_attribute_value(kind: AttributeKind, value: Any, deep_graphs: bool) -> Any:
    """Attributes are immutable except graphs; copy those when asked."""
    if deep_graphs and kind is AttributeKind.g:
        graph: Graph = value
        return graph.copy()
    if deep_graphs and kind is AttributeKind.gs:
        return [g.copy() for g in value]
    if kind in (AttributeKind.ts, AttributeKind.gs, AttributeKind.tys):
        # None: ``[<Tensors>]``, a tensor list whose data the text does not hold.
        return None if value is None else list(value)
    return value


"""How folded plumbing reads on the label of the op that reads it (the ``ops`` level).

:mod:`gradview.viewer.plumbing` decides what folds; this module writes it:

* :func:`folded_expr`: what a folded node's value shows as, built from its
  inputs' texts: a constant as its value (``1e-05``, ``True``, ``"trunc"``),
  a list or tuple as its entries (``[2, 2]``), a size as Python writes it
  (``%x.size(0)``), size arithmetic infix (``%q.size(1)*4``), an attribute
  read as a dotted name (``%self.conv1.weight``);
* :func:`op_lines`: the op's line(s): its name without ``aten::`` (a
  ``_convolution`` as the ``conv2d`` PyTorch's module calls), then
  ``name=value`` for each argument shown, named by the op's schema, on at most
  two lines of ``MAX_LINE`` (a cut ends with "…"; the tooltip keeps the full IR).
  An argument drawn as an arrow (a tensor, a list of tensors) is left out.

An argument equal to its default is left out: the schema's default, or, where
the schema has none, the value PyTorch's modules pass (nn.Conv2d's
``dilation=1``, nn.BatchNorm2d's ``momentum=0.1``). A list whose entries are
all equal shows one where PyTorch takes one int for it (``int[2] stride``:
``stride=2``); ``padding`` is written ``pad``, as issue 21's
``conv2d stride=2 pad=1`` reads. Every other argument keeps PyTorch's name.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gradview.ir import IRParseError, parse_type, schemas_for
from gradview.ir.attributes import quote_string
from gradview.ir.operators import schema_accepts
from gradview.ir.schema import NO_DEFAULT, FunctionSchema
from gradview.ir.types import SCALAR_TYPE_NAMES
from gradview.runtime import NodeRecord

from .labels import abbreviate
from .views import MAX_LINE

__all__ = ["DYNAMIC", "Expr", "constant_expr", "folded_expr", "op_lines", "LIST_TYPES"]

DYNAMIC: Any = object()  # a value known only at run time
LIST_TYPES = frozenset({"int[]", "int[]?"})

_INT64_MAX = 2**63 - 1
# Values PyTorch treats as the default although the schema gives none or another
# spelling: what nn.Conv2d, nn.BatchNorm2d and friends pass, and slice's open ends.
_ALSO_DEFAULT: dict[str, dict[str, Any]] = {
    "aten::_convolution": {
        "bias": None, "stride": 1, "padding": 0, "dilation": 1, "transposed": False, "output_padding": 0,
        "groups": 1, "benchmark": False, "deterministic": False, "cudnn_enabled": True, "allow_tf32": True,
    },
    "aten::convolution": {
        "bias": None, "stride": 1, "padding": 0, "dilation": 1, "transposed": False, "output_padding": 0, "groups": 1,
    },
    "aten::convolution_backward": {
        "stride": 1, "padding": 0, "dilation": 1, "transposed": False, "output_padding": 0, "groups": 1,
    },
    "aten::batch_norm": {"training": False, "momentum": 0.1, "eps": 1e-05, "cudnn_enabled": True},
    "aten::native_batch_norm": {"momentum": 0.1, "eps": 1e-05},
    "aten::_native_batch_norm_legit": {"momentum": 0.1, "eps": 1e-05},
    "aten::_native_batch_norm_legit_functional": {"momentum": 0.1, "eps": 1e-05},
    "aten::native_batch_norm_backward": {"eps": 1e-05},
    "aten::native_layer_norm": {"eps": 1e-05},
    "aten::lstm": {"has_biases": True, "dropout": 0.0, "train": False, "bidirectional": False, "batch_first": False},
    "aten::gru": {"has_biases": True, "dropout": 0.0, "train": False, "bidirectional": False, "batch_first": False},
    "aten::slice": {"start": 0, "end": _INT64_MAX},
}
_ANY_OP_ALSO_DEFAULT: dict[str, Any] = {"pin_memory": False, "layout": 0}  # as None: not pinned, strided
# Lists PyTorch also takes as one int (the schema says SymInt[] but conv2d's says SymInt[2]).
_EXPANDS: dict[str, frozenset[str]] = {
    kind: frozenset({"stride", "padding", "dilation", "output_padding"})
    for kind in ("aten::_convolution", "aten::convolution", "aten::convolution_backward")
}
_CONVOLUTIONS = ("aten::_convolution", "aten::convolution")  # named as PyTorch's modules call them: conv2d
_SHORT_NAMES = {"padding": "pad"}
_PACKERS = ("prim::ListConstruct", "prim::TupleConstruct")
_PRIM_ARGUMENTS = {"prim::If": ("cond",), "prim::Loop": ("max_trip_count", "cond")}
_TRANSPARENT = frozenset({"prim::NumToTensor", "aten::Int", "aten::Float", "aten::Bool", "aten::ScalarImplicit"})
_OPERATORS = {
    "aten::mul": "*", "aten::add": "+", "aten::sub": "-", "aten::floordiv": "//", "aten::floor_divide": "//",
    "aten::remainder": "%",
}
# Enums TorchScript passes as ints, by their c10 numbering.
_ENUM_NAMES: dict[str, tuple[str, ...]] = {
    "ScalarType": SCALAR_TYPE_NAMES,
    "MemoryFormat": ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"),
    "Layout": ("strided", "sparse_coo"),  # as loaders/fx_to_ir.py numbers them; others stay numbers
}
_ATTRIBUTE_LINES = 2  # lines for the op and its arguments
_MAX_TEXT = 120  # an argument's text is cut here, so nested plumbing stays linear


@dataclass(frozen=True)
class Expr:
    """What a reader's argument shows: ``text``; the Python ``value`` when
    constants alone fix it (else :data:`DYNAMIC`); ``bare`` when it is a drawn
    box's value, which an arrow already shows (the label leaves it out)."""

    text: str
    value: Any = DYNAMIC
    bare: bool = False
    infix: bool = False  # ``a*b``: an operand of another operator needs parentheses

    def operand(self) -> str:
        return f"({self.text})" if self.infix else self.text


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _format(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same double: 1e-05, 0.1
    if isinstance(value, str):
        return quote_string(value)  # as the IR prints it
    if isinstance(value, list):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_format(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def _short_kind(kind: str) -> str:
    """``aten::mul`` and autodiff's helpers (``gradview::reduced_numel``) by their own name."""
    return kind.removeprefix("aten::").removeprefix("gradview::")


# -- values -------------------------------------------------------------------------------------
def constant_expr(node: NodeRecord) -> Expr:
    """A ``prim::Constant``'s value, read from its printed attribute and its type."""
    text = dict(node.attrs).get("value")
    type_ = node.outputs[0].type if node.outputs else ""
    if text is None:
        return Expr("None", None)
    try:
        if type_ == "bool":
            value: Any = text in ("1", "True")
        elif type_ == "int":
            value = int(text)
        elif type_ == "float":
            value = float(text)
        elif text.startswith(("{", "<")) or "(" in type_:
            # A tensor, never equal to a default; a scalar one (``{4}``) as its number.
            return Expr(text[1:-1] if text.startswith("{") and text.endswith("}") else text)
        else:
            value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return Expr(text)
    return Expr(_cut(_format(value)), value)


def folded_expr(node: NodeRecord, position: int, args: Sequence[Expr]) -> Expr:
    """What output ``position`` of folded ``node`` shows as, given its inputs' texts."""
    kind = node.kind
    if kind == "prim::Constant":
        return constant_expr(node)
    if kind in _TRANSPARENT and len(args) == 1:
        return Expr(args[0].text, args[0].value, infix=args[0].infix)
    if kind in _PACKERS:
        return _packed(node, args)
    if kind in ("prim::TupleUnpack", "prim::ListUnpack") and args:
        return Expr(_cut(f"{args[0].operand()}[{position}]"))
    if kind in ("aten::size", "aten::sym_size") and args:
        return Expr(_cut(f"{args[0].operand()}.size({', '.join(a.text for a in args[1:])})"))
    if kind in ("aten::numel", "aten::sym_numel", "aten::dim") and args:
        return Expr(_cut(f"{args[0].operand()}.{_short_kind(kind).removeprefix('sym_')}()"))
    if kind == "prim::GetAttr" and args:
        return Expr(_cut(f"{args[0].operand()}.{dict(node.attrs).get('name', '?').strip(chr(34))}"))
    infix = _infix(kind, args)
    if infix is not None:
        return infix
    suffix = f"[{position}]" if len(node.outputs) > 1 else ""
    return Expr(_cut(f"{_short_kind(kind)}({', '.join(a.text for a in args)}){suffix}"))


def _packed(node: NodeRecord, args: Sequence[Expr]) -> Expr:
    """A list or tuple: its value when constants fix it; a list of tensors drawn
    as arrows is left out of the label (``bare``) like a single tensor."""
    values = [a.value for a in args]
    static = all(v is not DYNAMIC for v in values)
    if node.kind == "prim::TupleConstruct":
        if static:
            return Expr(_cut(_format(tuple(values))), tuple(values))
        return Expr(_cut("(" + ", ".join(a.text for a in args) + ")"))
    if static:
        return Expr(_cut(_format(values)), values)
    text = _cut("[" + ", ".join(a.text for a in args) + "]")
    return Expr(text, bare=all(a.bare for a in args) and node.outputs[0].type not in LIST_TYPES)


def _infix(kind: str, args: Sequence[Expr]) -> Expr | None:
    """Size arithmetic as Python writes it: ``%q.size(1)*4``, ``trunc(%e.size(2)/4)``."""
    operator = _OPERATORS.get(kind)
    if operator is not None and (len(args) == 2 or len(args) == 3 and _same(args[2].value, 1)):
        return Expr(_cut(f"{args[0].operand()}{operator}{args[1].operand()}"), infix=True)
    if kind == "aten::div" and len(args) in (2, 3):
        mode = args[2].value if len(args) == 3 else None
        if mode is None:
            return Expr(_cut(f"{args[0].operand()}/{args[1].operand()}"), infix=True)
        if mode == "floor":
            return Expr(_cut(f"{args[0].operand()}//{args[1].operand()}"), infix=True)
        if mode == "trunc":
            return Expr(_cut(f"trunc({args[0].operand()}/{args[1].operand()})"))
    return None


# -- the op's line ---------------------------------------------------------------------------------
def op_lines(node: NodeRecord, args: Sequence[Expr], input_types: Sequence[str]) -> list[str]:
    """The op's name and the arguments that are not arrows, in the op's words."""
    shown = [i for i, a in enumerate(args) if not a.bare]
    schema = _schema(node.kind, tuple(input_types)) if shown else None
    name = _short_kind(node.kind)
    said = None  # an argument the name already says
    if node.kind in _CONVOLUTIONS and schema is not None:
        convolution = _convolution_name(schema, args)
        if convolution is not None:
            name, said = convolution, schema.argument_index("transposed")
    if node.attrs:
        name += "[" + ", ".join(f"{key}={text}" for key, text in node.attrs) + "]"
    if node.kind in _PACKERS and shown:  # a list a return reads, so kept: its entries
        packed = _packed(node, [Expr(a.text, a.value) for a in args])
        return _wrap(abbreviate(name, MAX_LINE), packed.text.split(" "))
    tokens = [_argument(node.kind, schema, i, args[i]) for i in shown if i != said]
    return _wrap(abbreviate(name, MAX_LINE), [t for t in tokens if t])


@functools.lru_cache(maxsize=1 << 14)
def _schema(kind: str, types: tuple[str, ...]) -> FunctionSchema | None:
    """The overload of ``kind`` whose arguments take ``types``; else the first of that arity."""
    candidates = schemas_for(kind)  # ``.out`` overloads take one more argument: they never match
    if not candidates:
        return None
    try:
        parsed = [_parsed_type(text) for text in types]
    except (IRParseError, ValueError):
        parsed = None
    if parsed is not None:
        for schema in candidates:
            if schema_accepts(schema, parsed):
                return schema
        # Compiled graphs leave out trailing arguments that have defaults (``aten::add(%x, 1)``).
        for schema in candidates:
            rest = schema.arguments[len(types):]
            if rest and all(a.default is not NO_DEFAULT for a in rest) and schema_accepts(
                dataclasses.replace(schema, arguments=schema.arguments[: len(types)]), parsed
            ):
                return schema
    same = [s for s in candidates if len(s.arguments) == len(types)]
    return same[0] if same else candidates[0]


@functools.lru_cache(maxsize=1 << 14)
def _parsed_type(text: str) -> Any:
    return parse_type(text)


def _convolution_name(schema: FunctionSchema, args: Sequence[Expr]) -> str | None:
    """``conv2d`` (or ``conv_transpose2d``) as PyTorch's module calls it, from the stride's length."""
    stride, transposed = schema.argument_index("stride"), schema.argument_index("transposed")
    if stride is None or transposed is None or max(stride, transposed) >= len(args):
        return None
    strides, flag = args[stride].value, args[transposed].value
    if not isinstance(strides, list) or not 1 <= len(strides) <= 3 or not isinstance(flag, bool):
        return None
    return f"conv{'_transpose' if flag else ''}{len(strides)}d"


def _argument(kind: str, schema: FunctionSchema | None, position: int, expr: Expr) -> str:
    """``name=value`` for one argument; "" when it equals its default."""
    argument = schema.arguments[position] if schema is not None and position < len(schema.arguments) else None
    if argument is None:
        names = _PRIM_ARGUMENTS.get(kind, ())
        return f"{names[position] if position < len(names) else f'arg{position}'}={expr.text}"
    name, value, text = argument.name, expr.value, expr.text
    if value is not DYNAMIC and _is_default(kind, name, argument.default, value):
        return ""
    expands = argument.list_size is not None or name in _EXPANDS.get(kind, ())
    if expands and isinstance(value, list) and value and all(_same(v, value[0]) for v in value):
        text = _format(value[0])
    names = _ENUM_NAMES.get(argument.type_text.rstrip("?"), ())
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        text = names[value]  # dtype=Float (as the label's types read), memory_format=contiguous_format
    return f"{_SHORT_NAMES.get(name, name)}={text}"


def _is_default(kind: str, name: str, default: Any, value: Any) -> bool:
    also = _ALSO_DEFAULT.get(kind, {}).get(name, NO_DEFAULT)
    if also is NO_DEFAULT:
        also = _ANY_OP_ALSO_DEFAULT.get(name, NO_DEFAULT)
    return any(d is not NO_DEFAULT and _equal(value, d) for d in (default, also))


def _equal(value: Any, default: Any) -> bool:
    """Equal as PyTorch reads them: an ``int[N]`` default of one int means N of them."""
    if isinstance(value, list) and not isinstance(default, list):
        return bool(value) and all(_same(v, default) for v in value)
    if isinstance(value, list) and isinstance(default, list):
        return len(value) == len(default) and all(_same(v, d) for v, d in zip(value, default, strict=True))
    return _same(value, default)


def _same(a: Any, b: Any) -> bool:
    """Equal, with True never equal to 1 nor None to anything else."""
    if isinstance(a, bool) != isinstance(b, bool) or (a is None) != (b is None):
        return False
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _wrap(head: str, tokens: list[str]) -> list[str]:
    """The op and its arguments on at most two lines of ``MAX_LINE``, an argument
    broken at its spaces only when it fills a line on its own; what does not fit
    ends with "…" (the tooltip has the whole line)."""
    words: list[str] = []
    for token in tokens:
        words.extend([token] if len(token) <= MAX_LINE else token.split(" "))
    lines = [head]
    for position, word in enumerate(words):
        if len(lines[-1]) + 1 + len(word) <= MAX_LINE:
            lines[-1] += " " + word
        elif len(lines) < _ATTRIBUTE_LINES:
            lines.append(word)
        elif len(lines[-1]) + 2 <= MAX_LINE:
            lines[-1] += " …"  # more arguments: the tooltip lists them
            break
        else:
            lines[-1] = abbreviate(" ".join([lines[-1], *words[position:]]), MAX_LINE)
            break
    lines[-1] = abbreviate(lines[-1], MAX_LINE)  # one word longer than a line
    return lines

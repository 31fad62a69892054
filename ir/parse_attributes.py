"""Attribute values as graphs print them: ``[value=...]`` and friends.

Numbers, strings, lists, tuples, dicts (``{"num_none": 0}``), ``annotate(T,
v)`` constants, types, enum members, and tensors: ``{2}`` (one element),
``<Tensor>`` and ``[<Tensors>]`` (data not in the text), and small tensors as
``at::print`` writes them (`` 1  2 [ CPULongType{2} ]``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from .attributes import Annotated, AttributeKind, EnumValue, TensorConstant
from .node import Node
from .parse_tokens import END, is_int, is_number, shorten
from .parse_types import _SCALAR_NAMES, MAX_NESTING, TypeParsing
from .types import EnumType, NamedType, TensorType

__all__ = ["AttributeParsing", "adopt_declared_type"]

_CLOSED_STRING = re.compile(r"""(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\\\n]*(?:\\.[^'\\\n]*)*')""")
_OCTAL = re.compile(r"[0-7]{1,3}")
_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, '"': 34, "'": 39}
_TENSOR_TYPE_NAME = re.compile(r"^(?:CPU|CUDA)(\w+)Type$")
_FLOATING = frozenset({"Float", "Double", "Half", "BFloat16"})


class AttributeParsing(TypeParsing):
    """The attribute-value grammar, on top of the type grammar."""

    def attribute_value(self, depth: int = 0) -> tuple[AttributeKind, Any]:
        if depth > MAX_NESTING:
            raise self.error(f"attribute value is nested more than {MAX_NESTING} levels deep")
        toks = self.toks
        tok = toks[self.i]
        if tok[0] in "\"'":
            self.i += 1
            return AttributeKind.s, self.string_literal(tok, self.i - 1)
        if is_number(tok) or tok in ("inf", "nan") or (tok == "-" and self.peek(1) in ("inf", "nan")):
            after = self.peek(2 if tok == "-" else 1)  # the token after this number
            if is_number(after) or after in ("[", "*", "-", "inf", "nan"):
                return AttributeKind.t, self.printed_tensor()  # more numbers: a printed tensor
            return self.scalar()
        if tok == "[":
            following = toks[self.i + 1]
            if following == "<" and self.peek(2) == "Tensors":
                self.i += 3
                self.expect(">", "'>' to close <Tensors>")
                self.expect("]", "']' after [<Tensors>")
                return AttributeKind.ts, None  # a tensor list whose data torch does not print
            if _TENSOR_TYPE_NAME.match(following):
                return AttributeKind.t, self.printed_tensor()  # an empty tensor
            return self.list_value(depth)
        if tok == "(":
            if self.matrix_header_follows():
                return AttributeKind.t, self.printed_tensor()  # (1,.,.) = ...: a 3-d tensor
            self.i += 1
            items: list[Any] = []
            while not self.accept(")"):
                if items:
                    self.expect(",", "',' or ')' in a tuple")
                    if self.accept(")"):
                        break
                items.append(as_ivalue(*self.attribute_value(depth + 1)))
            return AttributeKind.ival, tuple(items)
        if tok == "{":
            if toks[self.i + 1] == "}" or self.peek(2) == ":":
                return AttributeKind.ival, self.dict_value(depth)
            return AttributeKind.t, self.scalar_tensor()
        if tok == "<":
            self.i += 1
            name = self.take()
            self.expect(">", "'>' to close <Tensor>")
            if name == "Tensor":
                return AttributeKind.t, TensorConstant(None, (), "Float")
            if name == "Graph":
                raise self.error("<Graph> attributes cannot be read back; print the graph with its subgraph sections",
                                 self.i - 3)
            raise self.error(f"unknown placeholder <{shorten(name)}>", self.i - 2)
        if tok == "None":
            self.i += 1
            return AttributeKind.ival, None
        if tok in ("True", "False"):
            self.i += 1
            return AttributeKind.ival, tok == "True"
        if tok == "annotate" and toks[self.i + 1] == "(":
            return AttributeKind.ival, self.annotated(depth)
        if tok == "Columns":
            return AttributeKind.t, self.printed_tensor()
        if tok[0].isalpha() or tok[0] == "_" or tok[0] == "(":
            return AttributeKind.ty, self.parse_type(depth + 1)
        if tok == END:
            raise self.error("expected an attribute value but the input ends here (truncated?)")
        raise self.error(f"expected an attribute value, found {self.describe(tok)}")

    def matrix_header_follows(self) -> bool:
        """Whether ``(1,2,.,.)`` starts here (a tensor of 3 or more dimensions), not a tuple."""
        toks = self.toks
        k = self.i + 1
        while is_int(toks[k]) and toks[k + 1] == ",":
            k += 2
        return k > self.i + 1 and toks[k] == "."

    def scalar(self) -> tuple[AttributeKind, Any]:
        tok = self.take()
        negative = tok == "-"
        if negative:
            tok = "-" + self.take()
        if is_int(tok):
            return AttributeKind.i, self.to_int(tok, self.i - 1)
        try:
            return AttributeKind.f, float(tok)
        except ValueError:
            raise self.error(f"bad number {self.describe(tok)}", self.i - 1) from None

    def list_value(self, depth: int) -> tuple[AttributeKind, Any]:
        self.expect("[")
        items: list[tuple[AttributeKind, Any]] = []
        while not self.accept("]"):
            if items:
                self.expect(",", "',' or ']' in a list")
            items.append(self.attribute_value(depth + 1))
        kinds = {k for k, _ in items}
        values = [v for _, v in items]
        if not items or kinds == {AttributeKind.i}:
            return AttributeKind.is_, tuple(values)
        if kinds == {AttributeKind.f}:
            return AttributeKind.fs, tuple(values)
        if kinds == {AttributeKind.s}:
            return AttributeKind.ss, tuple(values)
        if kinds == {AttributeKind.ty}:
            return AttributeKind.tys, values
        if kinds == {AttributeKind.t}:
            return AttributeKind.ts, values
        return AttributeKind.ival, [as_ivalue(k, v) for k, v in items]

    def dict_value(self, depth: int) -> dict[Any, Any]:
        """``{"num_none": 0, "num_present": 1}``, in the order printed."""
        self.expect("{")
        result: dict[Any, Any] = {}
        while not self.accept("}"):
            if result:
                self.expect(",", "',' or '}' in a dict")
            key_index = self.i
            key = as_ivalue(*self.attribute_value(depth + 1))
            try:
                hash(key)
            except TypeError:
                raise self.error("a dict key must be a string, number or bool", key_index) from None
            self.expect(":", "':' after a dict key")
            result[key] = as_ivalue(*self.attribute_value(depth + 1))
        return result

    def annotated(self, depth: int) -> Annotated:
        """``annotate(List[int], [])`` or ``annotate(Dict[str, Tensor],{})``."""
        self.i += 2
        start = self.i
        self.annotation_type(depth + 1)
        # The annotation as torch prints it (", " between arguments), for the round trip.
        text = "".join(tok + " " if tok == "," else tok for tok in self.toks[start:self.i])
        self.expect(",", "',' after the type in annotate(...)")
        kind, value = self.attribute_value(depth + 1)
        self.expect(")", "')' to close annotate(...)")
        return Annotated(text, as_ivalue(kind, value))

    def scalar_tensor(self) -> TensorConstant:
        self.expect("{")
        kind, value = self.scalar()
        self.expect("}", "'}' to close a tensor constant")
        if kind is AttributeKind.i:
            return TensorConstant((value,), (), "Long")
        return TensorConstant((value,), (), "Double")

    def printed_tensor(self) -> TensorConstant:
        """A small tensor as ``at::print`` writes it: `` 3  6 [ CPUFloatType{2} ]``.

        Its values are known only when all are printed whole (``%g`` of
        integers); four decimals or ``1e-05 *`` scales lose digits, so such a
        tensor keeps its text but has no known value.
        """
        start = self.i
        toks = self.toks
        # Chunks of values: (matrix index of a >2-d tensor, first column, the values' texts).
        chunks: list[tuple[tuple[int, ...], int, list[str]]] = [((), 0, [])]
        exact = True
        while toks[self.i] != "[":
            tok = toks[self.i]
            if tok == "(":  # (i,j,.,.) = : the matrix at this index of the leading dimensions
                self.i += 1
                index: list[int] = []
                while is_int(toks[self.i]):
                    index.append(self.number_token(int) - 1)
                    self.expect(",")
                for part in (".", ",", ".", ")", "="):
                    self.expect(part, "'(i,j,.,.) =' before a matrix of a tensor constant")
                chunks.append((tuple(index), 0, []))
            elif tok == "Columns":  # Columns a to b: the block of columns that follows
                self.i += 1
                first = self.number_token(int) - 1
                self.expect("to", "'to' in 'Columns a to b'")
                self.number_token(int)
                chunks.append((chunks[-1][0], first, []))
            elif tok == END:
                raise self.error("tensor constant is not closed with [ CPU...Type{...} ]", start)
            else:
                value_index = self.i
                kind, _ = self.scalar()
                if self.accept("*"):  # a common scale: the digits after it are rounded
                    exact = False
                    continue
                text = toks[value_index] if value_index + 1 == self.i else "-" + toks[self.i - 1]
                if kind is not AttributeKind.i and text.lstrip("-") not in ("inf", "nan"):
                    exact = False
                chunks[-1][2].append(text)
        self.expect("[")
        type_name = self.take()
        match = _TENSOR_TYPE_NAME.match(type_name)
        if not match or match.group(1) not in _SCALAR_NAMES:
            raise self.error(f"expected a tensor type such as CPUFloatType, found {self.describe(type_name)}",
                             self.i - 1)
        self.expect("{")
        dims: list[int] = []
        while not self.accept("}"):
            if dims:
                self.expect(",")
            dims.append(self.number_token(int))
        self.expect("]", "']' to close the tensor constant")
        count = sum(len(values) for _, _, values in chunks)
        if min(dims, default=0) < 0 or math.prod(dims) != count:
            raise self.error(f"tensor constant has {count} values for shape {shorten(str(tuple(dims)))}", start)
        scalar_type = match.group(1)
        if scalar_type not in _FLOATING and any(not math.isfinite(float(v)) for _, _, vs in chunks for v in vs):
            raise self.error(f"tensor constant has a value that does not fit {scalar_type}", start)
        device = "cpu" if type_name.startswith("CPU") else "cuda"
        begin = self.stream_offset(start)
        end = self.stream_offset(self.i - 1) + 1
        # The blanks before the first value belong to it (setw); after "," one is the separator's.
        while begin > 0 and self.text[begin - 1] == " ":
            begin -= 1
        if self.text[begin - 1] == ",":
            begin += 1
        text = self.text[begin:end]
        texts = _row_major(chunks, dims) if exact else None
        values: tuple[float | int, ...] | None = None
        if texts is not None:  # float("-0") keeps the sign of zero
            values = tuple(float(v) for v in texts) if scalar_type in _FLOATING else tuple(int(v) for v in texts)
        return TensorConstant(values, tuple(dims), scalar_type, device, text)

    def string_literal(self, tok: str, index: int) -> str:
        if not _CLOSED_STRING.fullmatch(tok):
            raise self.error("unterminated string literal", index)
        body = tok[1:-1]
        if "\\" not in body:
            return body
        out = bytearray()
        k = 0
        while k < len(body):
            ch = body[k]
            if ch != "\\":
                out += ch.encode("utf-8")
                k += 1
                continue
            octal = _OCTAL.match(body, k + 1)
            if octal:
                out.append(int(octal.group(), 8) & 0xFF)
                k = octal.end()
            elif body[k + 1] in _ESCAPES:
                out.append(_ESCAPES[body[k + 1]])
                k += 2
            else:
                raise self.error(f"unknown escape \\{body[k + 1]} in string", index)
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError:
            raise self.error("string literal is not valid UTF-8", index) from None


def _row_major(chunks: list[tuple[tuple[int, ...], int, list[str]]], dims: list[int]) -> list[str] | None:
    """The printed values in row-major order (matrices and column blocks put in place)."""
    if len(dims) < 2:
        return [v for _, _, values in chunks for v in values]
    rows, cols = dims[-2], dims[-1]
    lead = dims[:-2]
    result: list[str] = ["0"] * math.prod(dims)
    for index, first, values in chunks:
        if not values:
            continue
        if len(index) != len(lead) or len(values) % rows:
            return None
        offset = 0
        for position, size in zip(index, lead, strict=True):
            offset = offset * size + position
        offset *= rows * cols
        width = len(values) // rows
        for row in range(rows):
            start = offset + row * cols + first
            result[start:start + width] = values[row * width:(row + 1) * width]
    return result


def as_ivalue(kind: AttributeKind, value: Any) -> Any:
    if kind in (AttributeKind.is_, AttributeKind.fs, AttributeKind.ss):
        return list(value)
    return value


def adopt_declared_type(node: Node) -> None:
    """Read a constant's value with its declared type, as torch does.

    ``{2}`` declared ``Double()`` is the double 2.0 and ``{2}`` declared
    ``Float(1)`` has shape (1,); ``<Tensor>`` declared ``Float(3, 4)`` is a
    3x4 float tensor of unknown data; ``__torch__.Color.RED`` declared
    ``Enum<__torch__.Color>`` is an enum member, not a type.
    """
    attr = node._attrs.get("value")
    if attr is None:
        return
    declared = node.output().type()
    if attr[0] is AttributeKind.ty and isinstance(declared, EnumType) and isinstance(attr[1], NamedType):
        name = attr[1].name
        if name.startswith(declared.name + "."):
            node._attrs["value"] = (AttributeKind.ival, EnumValue(declared.name, name[len(declared.name) + 1:]))
        return
    if attr[0] is not AttributeKind.t or not isinstance(declared, TensorType):
        return
    tensor: TensorConstant = attr[1]
    values, sizes, scalar_type, device = tensor.values, tensor.sizes, tensor.scalar_type, tensor.device
    complete = declared.sizes is not None and all(s is not None for s in declared.sizes)
    if values is None and tensor.text is None:
        # <Tensor>: the declared type is all there is to know.
        if complete:
            sizes = declared.sizes  # type: ignore[assignment]
        scalar_type = declared.scalar_type or scalar_type
        device = declared.device or device
    elif values is not None:
        if len(values) == 1 and complete and math.prod(declared.sizes) == 1:  # type: ignore[arg-type]
            sizes = declared.sizes  # type: ignore[assignment]
        if declared.scalar_type not in (None, scalar_type):
            floating = declared.scalar_type in _FLOATING
            cast = float if floating else (bool if declared.scalar_type == "Bool" else int)
            try:
                values = tuple(cast(v) for v in values)
            except (OverflowError, ValueError):
                return
            scalar_type = declared.scalar_type  # type: ignore[assignment]
    if (values, sizes, scalar_type, device) != (tensor.values, tensor.sizes, tensor.scalar_type, tensor.device):
        node._attrs["value"] = (AttributeKind.t, TensorConstant(values, sizes, scalar_type, device, tensor.text))

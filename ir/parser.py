"""``parse_ir(text)``: read TorchScript's textual IR into a :class:`Graph`.

Accepts everything PyTorch prints for a graph: source comments (kept as
``node.source_location``), nodes without outputs, ``Function`` constants,
``Tensor(requires_grad=0)`` types, type-list attributes such as
``prim::RequiresGradCheck[types=[...]]``, tensor constants, and the
``with prim::DifferentiableGraph_0 = graph(...)`` sections of subgraphs.

Any malformed text raises :class:`IRParseError` with ``line:col``; nesting is
handled with explicit stacks or bounded depth, so no input reaches Python's
recursion limit.

The text is cut into tokens by one regular expression at C speed; types
without nested parentheses (``Float(3, 4, strides=[4, 1], ...)``) come out as
a single token whose parse is cached, which keeps large graphs fast.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import islice
from typing import Any

from .attributes import AttributeKind, TensorConstant
from .collector import paused_gc
from .errors import IRParseError, IRVerifyError
from .graph import Graph
from .lint import lint
from .node import Node, Value
from .types import (
    SCALAR_TYPE_NAMES,
    SIMPLE_TYPE_NAMES,
    TENSOR,
    AnyType,
    DictType,
    FutureType,
    ListType,
    NamedType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
)

__all__ = ["parse_ir", "parse_type", "MAX_NESTING"]

MAX_NESTING = 100  # types, attribute values and blocks nested deeper are rejected

_TOKEN_PARTS = r"""
      \#[^\n]*                                   # comment (source location)
    | "[^"\\\n]*(?:\\.[^"\\\n]*)*"?                # string (maybe unterminated)
    | '[^'\\\n]*(?:\\.[^'\\\n]*)*'?
    | %[\w.]*                                    # value name
    | ->
    | \.\.\.
    | -?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?     # number
    {flat_type}
    | [A-Za-z_]\w*(?:(?:::|\.)\w+)*              # names, kinds, qualified names
    | ::
    | \S                                         # anything else: one character
"""
# Each match eats the whitespace before its token (group 1) in one step, so
# long runs of blanks cost no per-character search; "" marks the end.
_TOKEN = re.compile(
    r"\s*(" + _TOKEN_PARTS.format(flat_type=r'| [A-Z]\w*\([^()\n"]*\)  # a type, flat parens') + r"|\Z)",
    re.VERBOSE,
)
# The same tokens with types split into their parts, to parse a one-token type.
_FINE_TOKEN = re.compile(r"\s*(" + _TOKEN_PARTS.format(flat_type="") + r"|\Z)", re.VERBOSE)
_GROUP_KIND = re.compile(r"^(.+)_(\d+)$")
_BLOCK_NAME = re.compile(r"^block\d+$")
_SCALAR_NAMES = frozenset(SCALAR_TYPE_NAMES)
_COMPOUND_TYPES = frozenset({"Dict", "Future", "RRef", "Await", "Union", "Optional", "List", "Tuple"})
_TYPE_CACHE: dict[str, Type] = {}
_CLOSED_STRING = re.compile(r"""(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\\\n]*(?:\\.[^'\\\n]*)*')""")
_OCTAL = re.compile(r"[0-7]{1,3}")
_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, '"': 34, "'": 39}
_END = "\x00<end of input>"


class _Parser:
    token_re = _TOKEN  # the flat-type sub-parser uses _FINE_TOKEN

    def __init__(self, text: str) -> None:
        self.text = text
        raw = _tokenize(_TOKEN, text)
        # Token indices (in self.toks) before which a comment was dropped, to
        # find a token's place in the text again when reporting an error.
        self.dropped: list[int] = []
        if "#" in text:
            # Keep source comments that follow a node's ")" as locations;
            # drop every other comment.
            tokens: list[str] = []
            self.comments: dict[int, str] = {}
            for tok in raw:
                if tok[0] == "#":
                    if tokens and tokens[-1] == ")":
                        self.comments[len(tokens)] = tok[1:].strip()
                    self.dropped.append(len(tokens))
                else:
                    tokens.append(tok)
            self.toks = tokens
        else:
            self.comments = {}
            self.toks = raw
        self.toks.append(_END)
        self.i = 0
        self.node_tokens: dict[Node, int] = {}
        self.numbered: list[tuple[Value, int]] = []
        self.named: list[tuple[Value, str]] = []
        self.anonymous: list[Value] = []  # %01, %²...: numbers that cannot be kept as they are
        self.hidden: dict[str, str] = {}  # names defined but out of scope here, and why
        self.section_depth = 0

    # -- errors and positions ------------------------------------------------
    def offset_of(self, index: int) -> int:
        """Character offset of token ``index`` (recomputed only when reporting)."""
        # Skip to the token at C speed: a 10 MB line must still report fast.
        raw_index = index + bisect_right(self.dropped, index)
        match = next(islice(self.token_re.finditer(self.text), raw_index, None), None)
        return len(self.text) if match is None else match.start(1)

    def error(self, message: str, index: int | None = None, delta: int = 0) -> IRParseError:
        """An error at token ``index`` (default: the current one), ``delta`` characters into it."""
        offset = min(self.offset_of(self.i if index is None else index) + delta, len(self.text))
        line = self.text.count("\n", 0, offset) + 1
        line_start = self.text.rfind("\n", 0, offset) + 1
        line_end = self.text.find("\n", offset)
        if line_end < 0:
            line_end = len(self.text)
        return IRParseError(message, line, offset - line_start + 1, self.text[line_start:line_end])

    def describe(self, tok: str) -> str:
        if tok == _END:
            return "the end of the input"
        return repr(_shorten(tok))

    # -- token helpers ---------------------------------------------------------
    def peek(self, ahead: int = 0) -> str:
        index = self.i + ahead
        return self.toks[index] if index < len(self.toks) else _END

    def take(self) -> str:
        tok = self.toks[self.i]
        if tok is _END:
            raise self.error("unexpected end of input (the text is cut short)")
        self.i += 1
        return tok

    def accept(self, tok: str) -> bool:
        if self.toks[self.i] == tok:
            self.i += 1
            return True
        return False

    def expect(self, tok: str, what: str | None = None) -> None:
        if self.toks[self.i] != tok:
            found = self.toks[self.i]
            if found == _END:
                raise self.error(f"expected {what or repr(tok)} but the input ends here (truncated?)")
            raise self.error(f"expected {what or repr(tok)} but found {self.describe(found)}")
        self.i += 1

    def value_name(self) -> str:
        tok = self.toks[self.i]
        if tok[0] != "%" or tok == _END:
            raise self.error(f"expected a value name like %x but found {self.describe(tok)}")
        if len(tok) == 1:
            raise self.error("'%' must be followed by a value name")
        self.i += 1
        return tok[1:]

    # -- types -------------------------------------------------------------------
    def parse_type(self, depth: int = 0) -> Type:
        if depth > MAX_NESTING:
            raise self.error(f"type is nested more than {MAX_NESTING} levels deep")
        start = self.i
        tok = self.take()
        base: Type
        if tok == "(":
            elems: list[Type] = []
            while not self.accept(")"):
                if elems:
                    self.expect(",", "',' or ')' in a tuple type")
                elems.append(self.parse_type(depth + 1))
            base = TupleType(tuple(elems))
        elif tok[-1] == ")" and "(" in tok:
            cached = _TYPE_CACHE.get(tok)
            if cached is None:
                cached = self.parse_flat_type(tok, start)
                if len(_TYPE_CACHE) < 4096:
                    _TYPE_CACHE[tok] = cached
            base = cached
        elif tok == "Tensor" or tok in _SCALAR_NAMES:
            base = self.tensor_type(None if tok == "Tensor" else tok, depth)
        elif tok.endswith("Tensor") and tok[:-6] in _SCALAR_NAMES:
            base = TensorType(tok[:-6], None)
            if self.peek() == "(":
                base = self.tensor_type(tok[:-6], depth, rank_known=False)
        elif tok in _COMPOUND_TYPES:
            self.expect("(", f"'(' after {tok}")
            args: list[Type] = []
            while not self.accept(")"):
                if args:
                    self.expect(",", f"',' or ')' in {tok}(...)")
                args.append(self.parse_type(depth + 1))
            base = _compound(tok, args, self, start)
        elif tok == "NamedTuple":
            self.expect("(", "'(' after NamedTuple")
            names: list[str] = []
            fields: list[Type] = []
            while not self.accept(")"):
                if names:
                    self.expect(",", "',' or ')' in NamedTuple(...)")
                field = self.take()
                if not (field[0].isalpha() or field[0] == "_"):
                    raise self.error(f"expected a field name, found {self.describe(field)}", self.i - 1)
                self.expect(":", f"':' after field {field}")
                names.append(field)
                fields.append(self.parse_type(depth + 1))
            base = TupleType(tuple(fields), tuple(names))
        elif tok == "Any":
            base = AnyType()
        elif tok in SIMPLE_TYPE_NAMES or tok.startswith("__torch__."):
            base = NamedType(tok)
        else:
            raise self.error(f"unknown type {self.describe(tok)}", start)
        return self.type_suffixes(base, depth)

    def type_suffixes(self, base: Type, depth: int = 0) -> Type:
        while True:
            tok = self.toks[self.i]
            if tok == "?" or (tok == "[" and self.toks[self.i + 1] == "]"):
                # int[][]...[] and int??... nest as deep as parentheses do.
                depth += 1
                if depth > MAX_NESTING:
                    raise self.error(f"type is nested more than {MAX_NESTING} levels deep")
            if tok == "?":
                self.i += 1
                base = OptionalType(base)
            elif tok == "[" and self.toks[self.i + 1] == "]":
                self.i += 2
                base = ListType(base)
            elif tok == "[" and self.toks[self.i + 1] == "Undefined" and isinstance(base, TensorType):
                self.i += 2
                self.expect("]")
                base = TensorType(base.scalar_type, base.sizes, base.strides, base.requires_grad, base.device, True)
            else:
                return base

    def parse_flat_type(self, tok: str, index: int) -> Type:
        """Parse a one-token type such as ``Float(3, 4, strides=[4, 1])`` on its own."""
        sub = _Parser.__new__(_Parser)
        sub.text = tok
        sub.token_re = _FINE_TOKEN
        sub.toks = _tokenize(_FINE_TOKEN, tok) + [_END]
        sub.comments = {}
        sub.dropped = []
        sub.i = 0
        try:
            result = sub.parse_type(1)
            if sub.peek() != _END:
                raise sub.error(f"unexpected {sub.describe(sub.peek())} in type")
        except IRParseError as exc:
            # Point into the type, at the part that is wrong.
            raise self.error(f"{exc.message} (in type {_shorten(tok)})", index, exc.column - 1) from None
        return result

    def tensor_type(self, scalar_type: str | None, depth: int, rank_known: bool = True) -> TensorType:
        if self.toks[self.i] != "(":
            return TensorType(scalar_type) if scalar_type is None else TensorType(scalar_type, None)
        name_index = self.i - 1
        strides_index = name_index
        self.i += 1
        sizes: list[int | None] = []
        strides: list[int | None] | None = None
        requires_grad: bool | None = None
        device: str | None = None
        saw_field = False
        first = True
        while not self.accept(")"):
            if not first:
                self.expect(",", "',' or ')' in a tensor type")
            first = False
            tok = self.take()
            if tok == "*":
                if saw_field:
                    raise self.error("sizes must come before strides, requires_grad and device", self.i - 1)
                sizes.append(None)
            elif tok == "SS":
                self.expect("(")
                self.number_token(int)
                self.expect(")")
                sizes.append(None)
            elif _is_int(tok):
                if saw_field:
                    raise self.error("sizes must come before strides, requires_grad and device", self.i - 1)
                sizes.append(self.to_int(tok, self.i - 1))
            elif tok in ("strides", "requires_grad", "device"):
                saw_field = True
                self.expect("=", f"'=' after {tok}")
                if tok == "strides":
                    strides_index = self.i - 2
                    self.expect("[", "'[' to open the strides")
                    strides = []
                    while not self.accept("]"):
                        if strides:
                            self.expect(",", "',' or ']' in strides")
                        if self.accept("*"):
                            strides.append(None)
                        else:
                            strides.append(self.number_token(int))
                elif tok == "requires_grad":
                    flag = self.take()
                    if flag not in ("0", "1", "True", "False"):
                        raise self.error(f"requires_grad must be 0 or 1, not {self.describe(flag)}", self.i - 1)
                    requires_grad = flag in ("1", "True")
                else:
                    device = self.device_name()
            else:
                raise self.error(f"unexpected {self.describe(tok)} in a tensor type", self.i - 1)
        if scalar_type is None and sizes:
            raise self.error("a tensor type with sizes needs a dtype, e.g. Float(3, 4)", name_index)
        if strides is not None and len(strides) != len(sizes):
            raise self.error(f"{len(strides)} strides given for {len(sizes)} dimensions", strides_index)
        shape = tuple(sizes) if (scalar_type is not None and rank_known) else None
        return TensorType(
            scalar_type, shape, tuple(strides) if strides is not None else None, requires_grad, device
        )

    def device_name(self) -> str:
        tok = self.take()
        if not (tok[0].isalpha() or tok[0] == "_"):
            raise self.error(f"expected a device such as cpu or cuda:0, found {self.describe(tok)}", self.i - 1)
        if self.toks[self.i] == ":" and _is_int(self.toks[self.i + 1]):
            tok += ":" + self.toks[self.i + 1]
            self.i += 2
        return tok

    def number_token(self, kind: type) -> Any:
        tok = self.take()
        if kind is int and _is_int(tok):
            return self.to_int(tok, self.i - 1)
        try:
            return kind(tok)
        except ValueError:
            raise self.error(f"expected {'an integer' if kind is int else 'a number'}, found {self.describe(tok)}",
                             self.i - 1) from None

    def to_int(self, tok: str, index: int) -> int:
        try:
            return int(tok)
        except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
            raise self.error(f"integer {self.describe(tok)} has too many digits ({len(tok)})", index) from None

    # -- attributes ----------------------------------------------------------
    def attribute_value(self, depth: int = 0) -> tuple[AttributeKind, Any]:
        if depth > MAX_NESTING:
            raise self.error(f"attribute value is nested more than {MAX_NESTING} levels deep")
        tok = self.toks[self.i]
        if tok[0] in "\"'":
            self.i += 1
            return AttributeKind.s, self.string_literal(tok, self.i - 1)
        if _is_number(tok) or (tok == "-" and self.peek(1) in ("inf", "nan")):
            if _is_number(self.peek(1)) or self.peek(1) in ("[", "*"):
                return AttributeKind.t, self.printed_tensor()
            return self.scalar()
        if tok in ("inf", "nan"):
            return self.scalar()
        if tok == "[":
            return self.list_value(depth)
        if tok == "(":
            self.i += 1
            items: list[Any] = []
            while not self.accept(")"):
                if items:
                    self.expect(",", "',' or ')' in a tuple")
                    if self.accept(")"):
                        break
                items.append(_as_ivalue(*self.attribute_value(depth + 1)))
            return AttributeKind.ival, tuple(items)
        if tok == "{":
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
            raise self.error(f"unknown placeholder <{_shorten(name)}>", self.i - 2)
        if tok == "None":
            self.i += 1
            return AttributeKind.ival, None
        if tok in ("True", "False"):
            self.i += 1
            return AttributeKind.ival, tok == "True"
        if tok[0].isalpha() or tok[0] == "_" or tok[0] == "(":
            return AttributeKind.ty, self.parse_type(depth + 1)
        if tok == _END:
            raise self.error("expected an attribute value but the input ends here (truncated?)")
        raise self.error(f"expected an attribute value, found {self.describe(tok)}")

    def scalar(self) -> tuple[AttributeKind, Any]:
        tok = self.take()
        negative = tok == "-"
        if negative:
            tok = "-" + self.take()
        if _is_int(tok):
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
        if kinds == {AttributeKind.f, AttributeKind.i}:
            return AttributeKind.ival, [_as_ivalue(k, v) for k, v in items]
        if kinds == {AttributeKind.s}:
            return AttributeKind.ss, tuple(values)
        if kinds == {AttributeKind.ty}:
            return AttributeKind.tys, values
        if kinds == {AttributeKind.t}:
            return AttributeKind.ts, values
        return AttributeKind.ival, [_as_ivalue(k, v) for k, v in items]

    def scalar_tensor(self) -> TensorConstant:
        self.expect("{")
        kind, value = self.scalar()
        self.expect("}", "'}' to close a tensor constant")
        if kind is AttributeKind.i:
            return TensorConstant((value,), (), "Long")
        return TensorConstant((value,), (), "Double")

    def printed_tensor(self) -> TensorConstant:
        """A small tensor as torch prints it: `` 3  6 [ CPUFloatType{2} ]``."""
        start = self.i
        scale = 1.0
        values: list[float] = []
        while self.toks[self.i] != "[":
            kind, value = self.scalar()
            if self.accept("*"):
                scale = value
                continue
            values.append(value)
            if self.toks[self.i] == _END:
                raise self.error("tensor constant is not closed with [ CPU...Type{...} ]", start)
        self.expect("[")
        type_name = self.take()
        match = re.match(r"^(?:CPU|CUDA)(\w+)Type$", type_name)
        if not match or match.group(1) not in _SCALAR_NAMES:
            raise self.error(f"expected a tensor type such as CPUFloatType, found {self.describe(type_name)}", self.i - 1)
        self.expect("{")
        dims: list[int] = []
        while not self.accept("}"):
            if dims:
                self.expect(",")
            dims.append(self.number_token(int))
        self.expect("]", "']' to close the tensor constant")
        numel = 1
        for d in dims:
            numel *= d
        if min(dims, default=0) < 0 or numel != len(values):
            shape = _shorten(str(tuple(dims)))
            raise self.error(f"tensor constant has {len(values)} values for shape {shape}", start)
        scalar_type = match.group(1)
        try:
            data = tuple(v * scale for v in values) if scale != 1.0 else tuple(values)
            if scalar_type not in ("Float", "Double", "Half", "BFloat16"):
                data = tuple(int(v) for v in data)
        except (OverflowError, ValueError):  # inf or nan in an integer tensor, or a huge integer
            raise self.error(f"tensor constant has a value that does not fit {scalar_type}", start) from None
        device = "cpu" if type_name.startswith("CPU") else "cuda"
        return TensorConstant(data, tuple(dims), scalar_type, device)

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

    # -- graphs ----------------------------------------------------------------
    def parse_graph(self) -> Graph:
        if self.section_depth > MAX_NESTING:
            raise self.error(f"subgraph sections nest more than {MAX_NESTING} levels deep")
        graph = Graph()
        env: dict[str, Value] = {}
        defined_at: dict[str, int] = {}
        group_refs: dict[str, list[Node]] = {}
        self.hidden = {}
        if self.toks[self.i] != "graph":
            raise self.error(f"expected 'graph(' at the start, found {self.describe(self.toks[self.i])}")
        self.i += 1
        self.expect("(", "'(' after graph")
        first = True
        while not self.accept(")"):
            if not first:
                self.expect(",", "',' or ')' in the graph's inputs")
            first = False
            index = self.i
            name = self.value_name()
            type_ = self.parse_type() if self.accept(":") else TENSOR
            self.define(graph.block.add_input(type_=type_), name, index, env, defined_at)
        self.expect(":", "':' after the graph's inputs")
        self.parse_body(graph, env, defined_at, group_refs)
        self.attach_sections(group_refs)
        return graph

    def define(
        self,
        value: Value,
        name: str,
        index: int,
        env: dict[str, Value],
        defined_at: dict[str, int],
        scope: list[str] | None = None,
        visible: bool = True,
    ) -> None:
        """Bind ``%name``; ``scope`` lists the names of the open block, which go out of scope with it."""
        # Names are unique in the whole graph, also across sibling blocks.
        if name in defined_at:
            first_line = self.error("", defined_at[name]).line
            raise self.error(f"value %{_shorten(name)} is defined twice (first on line {first_line})", index)
        if visible:
            env[name] = value
        else:  # a control-flow node's output: defined only after the node's blocks
            self.hidden[name] = "pending"
        defined_at[name] = index
        if scope is not None:
            scope.append(name)
        if not name.isdigit():
            self.named.append((value, name))
        elif name.isascii() and len(name) <= 18 and (name[0] != "0" or name == "0"):
            self.numbered.append((value, int(name)))
        else:
            self.anonymous.append(value)  # %01 is not %1 (as in torch); it gets a fresh number

    def lookup(self, env: dict[str, Value], defined_at: dict[str, int] | None = None) -> Value:
        index = self.i
        name = self.value_name()
        value = env.get(name)
        if value is None:
            reason = self.hidden.get(name) if defined_at is not None and name in defined_at else None
            if reason is None:
                raise self.error(f"undefined value %{_shorten(name)}", index)
            line = self.error("", defined_at[name]).line  # type: ignore[index]
            if reason == "pending":
                raise self.error(f"value %{_shorten(name)} is used inside a block of the node that defines it (line {line})",
                                 index)
            raise self.error(f"value %{_shorten(name)} is used outside the block that defines it (line {line}); "
                             "pass it out through the block's '-> (...)'", index)
        return value

    def value_list(self, env: dict[str, Value], context: str, defined_at: dict[str, int] | None = None) -> list[Value]:
        self.expect("(", f"'(' to open {context}")
        values: list[Value] = []
        while not self.accept(")"):
            if values:
                self.expect(",", f"',' or ')' in {context}")
            values.append(self.lookup(env, defined_at))
        return values

    def parse_body(
        self, graph: Graph, env: dict[str, Value], defined_at: dict[str, int], group_refs: dict[str, list[Node]]
    ) -> None:
        """Statements, nested blocks and the final return, with an explicit block stack."""
        # Each frame: [block, last node parsed in it (may own the next blockN),
        # that node's outputs while its blocks are read, names defined in the block].
        stack: list[list[Any]] = [[graph.block, None, None, None]]
        toks = self.toks
        while True:
            tok = toks[self.i]
            frame = stack[-1]
            if frame[2] is not None and not _BLOCK_NAME.match(tok):
                # The owner's blocks are done: its outputs come into scope.
                for name, value in frame[2]:
                    env[name] = value
                    del self.hidden[name]
                frame[2] = None
            if tok == "return" and len(stack) == 1:
                self.node_tokens[graph.block.return_node] = self.i
                self.i += 1
                for value in self.value_list(env, "the graph's outputs", defined_at):
                    graph.block.register_output(value)
                return
            if tok == "->":
                if len(stack) == 1:
                    raise self.error("'->' outside of a block")
                self.node_tokens[frame[0].return_node] = self.i
                self.i += 1
                for value in self.value_list(env, "the block's outputs", defined_at):
                    frame[0].register_output(value)
                for name in frame[3]:  # the block's values go out of scope
                    del env[name]
                    self.hidden[name] = "closed"
                stack.pop()
                continue
            if _BLOCK_NAME.match(tok):
                owner = frame[1]
                if owner is None:
                    raise self.error(f"{_shorten(tok)} must follow the node that owns it")
                if len(stack) > MAX_NESTING:
                    raise self.error(f"blocks nest more than {MAX_NESTING} levels deep")
                self.i += 1
                block = owner.add_block()
                tok = _shorten(tok)
                self.expect("(", f"'(' after {tok}")
                scope: list[str] = []
                first = True
                while not self.accept(")"):
                    if not first:
                        self.expect(",", "',' or ')' in the block's parameters")
                    first = False
                    index = self.i
                    name = self.value_name()
                    type_ = self.parse_type() if self.accept(":") else TENSOR
                    self.define(block.add_input(type_=type_), name, index, env, defined_at, scope)
                self.expect(":", f"':' after {tok}(...)")
                stack.append([block, None, None, scope])
                continue
            if tok == _END:
                what = "the block's '-> (...)'" if len(stack) > 1 else "'return (...)'"
                raise self.error(f"unexpected end of input: expected {what} (the text is cut short)")
            if tok == "return":
                raise self.error("'return' inside a block; blocks end with '-> (...)'")
            frame[1], frame[2] = self.parse_node(graph, frame[0], env, defined_at, group_refs, frame[3])

    def parse_node(
        self,
        graph: Graph,
        block: Any,
        env: dict[str, Value],
        defined_at: dict[str, int],
        group_refs: dict[str, list[Node]],
        scope: list[str] | None = None,
    ) -> tuple[Node, list[tuple[str, Value]] | None]:
        """One statement; also returns the outputs of a node with blocks, defined after them."""
        toks = self.toks
        start = self.i
        outputs: list[tuple[str, Type, int]] = []
        if toks[self.i] != "=":
            while True:
                index = self.i
                name = self.value_name()
                type_ = self.parse_type() if toks[self.i] == ":" and self._skip() else TENSOR
                outputs.append((name, type_, index))
                if toks[self.i] != ",":
                    break
                self.i += 1
        self.expect("=", "'=' after the node's outputs")
        kind_index = self.i
        kind = self.take()
        short_kind = _shorten(kind)
        if "::" not in kind or not (kind[0].isalpha() or kind[0] == "_"):
            raise self.error(f"expected an operator name such as aten::mul, found {self.describe(kind)}", kind_index)
        node = Node(graph, kind)
        if toks[self.i] == "[":
            self.i += 1
            while True:
                name_index = self.i
                attr = self.take()
                if not (attr[0].isalpha() or attr[0] == "_"):
                    raise self.error(f"expected an attribute name, found {self.describe(attr)}", name_index)
                if attr in node._attrs:
                    raise self.error(f"attribute {_shorten(attr)} is given twice", name_index)
                self.expect("=", f"'=' after attribute {_shorten(attr)}")
                akind, avalue = self.attribute_value()
                node._attrs[attr] = (akind, avalue)
                if self.accept("]"):
                    break
                self.expect(",", "',' or ']' in the attribute list")
        self.expect("(", f"'(' to open the inputs of {short_kind}")
        if toks[self.i] != ")":
            while True:
                node.add_input(self.lookup(env, defined_at))
                if toks[self.i] != ",":
                    break
                self.i += 1
        self.expect(")", f"',' or ')' in the inputs of {short_kind}")
        location = self.comments.get(self.i) if self.comments else None
        if location is not None:
            node.source_location = location
        pending: list[tuple[str, Value]] | None = None
        if toks[self.i][:5] == "block" and _BLOCK_NAME.match(toks[self.i]):
            # Its blocks follow: they cannot use the node's own outputs.
            pending = []
            for name, type_, index in outputs:
                value = node.add_output(type_)
                self.define(value, name, index, env, defined_at, scope, visible=False)
                pending.append((name, value))
        else:
            for name, type_, index in outputs:
                self.define(node.add_output(type_), name, index, env, defined_at, scope)
        if kind == "prim::Constant" and len(outputs) == 1:
            _adopt_declared_dtype(node)
        block.append_node(node)
        self.node_tokens[node] = start
        if kind[-1].isdigit() and _GROUP_KIND.match(kind):
            group_refs.setdefault(kind, []).append(node)
        return node, pending

    def _skip(self) -> bool:
        self.i += 1
        return True

    def attach_sections(self, group_refs: dict[str, list[Node]]) -> None:
        """Read the ``with kind_N = graph(...)`` sections that belong to this graph."""
        while self.toks[self.i] == "with" and self.peek(1) in group_refs:
            self.i += 1
            name = self.take()
            self.expect("=", f"'=' after with {_shorten(name)}")
            self.section_depth += 1
            subgraph = self.parse_graph()
            self.section_depth -= 1
            base = _GROUP_KIND.match(name).group(1)  # type: ignore[union-attr]
            for node in group_refs.pop(name):
                node.set_kind(base)
                node._attrs = {"Subgraph": (AttributeKind.g, subgraph), **node._attrs}

    def finish(self, graph: Graph) -> None:
        tok = self.toks[self.i]
        if tok == "with":
            raise self.error(f"section {self.describe(self.peek(1))} matches no node of the graph above it")
        if tok != _END:
            raise self.error(f"unexpected {self.describe(tok)} after the graph's return")
        # Numbered values keep their numbers; the others get fresh numbers after them.
        top = max((n for _, n in self.numbered), default=-1) + 1
        graphs = {id(graph): graph}
        for value, number in self.numbered:
            value.unique = number
            graphs[id(value.graph)] = value.graph
        for value in self.anonymous:
            value.unique = top
            top += 1
            graphs[id(value.graph)] = value.graph
        for offset, (value, name) in enumerate(self.named):
            value.unique = top + offset
            value.graph._rename(value, name)
            graphs[id(value.graph)] = value.graph
        for each in graphs.values():
            each._next_unique = top + len(self.named)

    def verify(self, graph: Graph) -> None:
        try:
            lint(graph)
            for node in graph.all_nodes():
                if "Subgraph" in node._attrs and node._attrs["Subgraph"][0] is AttributeKind.g:
                    lint(node._attrs["Subgraph"][1])
        except IRVerifyError as exc:
            node = exc.node
            index = self.node_tokens.get(node, self.i) if isinstance(node, Node) else self.i
            raise self.error(str(exc).split(": at `")[0], index) from None


def _adopt_declared_dtype(node: Node) -> None:
    """``{2}`` declared ``Double()`` is the double 2.0, as torch reads it."""
    attr = node._attrs.get("value")
    declared = node.output().type()
    if attr is None or attr[0] is not AttributeKind.t or not isinstance(declared, TensorType):
        return
    tensor = attr[1]
    if tensor.values is None or declared.scalar_type in (None, tensor.scalar_type):
        return
    floating = declared.scalar_type in ("Float", "Double", "Half", "BFloat16")
    cast = float if floating else (bool if declared.scalar_type == "Bool" else int)
    try:
        values = tuple(cast(v) for v in tensor.values)
    except (OverflowError, ValueError):
        return
    node._attrs["value"] = (AttributeKind.t, TensorConstant(values, tensor.sizes, declared.scalar_type, tensor.device))


def _compound(name: str, args: list[Type], parser: _Parser, index: int) -> Type:
    if name == "Dict" and len(args) == 2:
        return DictType(args[0], args[1])
    if name == "Optional" and len(args) == 1:
        return OptionalType(args[0])
    if name == "List" and len(args) == 1:
        return ListType(args[0])
    if name == "Tuple":
        return TupleType(tuple(args))
    if name in ("Future", "RRef", "Await") and len(args) == 1:
        return FutureType(name, tuple(args))
    if name == "Union" and args:
        return FutureType(name, tuple(args))
    raise parser.error(f"{name}(...) takes {'two types' if name == 'Dict' else 'one type'}, got {len(args)}", index)


def _tokenize(pattern: re.Pattern[str], text: str) -> list[str]:
    tokens = pattern.findall(text)
    while tokens and not tokens[-1]:  # the end-of-text matches
        tokens.pop()
    return tokens


def _shorten(tok: str) -> str:
    """A token as quoted in a message: long ones are cut so messages stay one short line."""
    return tok if len(tok) <= 40 else tok[:37] + "..."


def _is_int(tok: str) -> bool:
    # isdigit() alone accepts "²", which int() rejects.
    return (tok.isdigit() or (tok[0] == "-" and tok[1:].isdigit())) and tok.isascii()


def _is_number(tok: str) -> bool:
    first = tok[0]
    return first.isdigit() or (first in "-." and len(tok) > 1 and (tok[1].isdigit() or tok[1] == "."))


def _as_ivalue(kind: AttributeKind, value: Any) -> Any:
    if kind in (AttributeKind.is_, AttributeKind.fs, AttributeKind.ss):
        return list(value)
    return value


def parse_ir(text: str | bytes) -> Graph:
    """Parse TorchScript's textual IR; raise IRParseError (a ValueError) with line:col on bad input."""
    if isinstance(text, (bytes, bytearray)):
        data = bytes(text)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            # Report the line and column of the bad byte, not 1:<byte offset>.
            before = data[: exc.start].decode("utf-8")
            line_start = before.rfind("\n") + 1
            line_end = data.find(b"\n", exc.start)
            source = data[:line_end if line_end >= 0 else len(data)].decode("utf-8", "replace")[line_start:]
            raise IRParseError(
                f"input is not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x})",
                before.count("\n") + 1, len(before) - line_start + 1, source,
            ) from None
    if not isinstance(text, str):
        raise TypeError(f"parse_ir expects text, got {type(text).__name__}")
    parser = _Parser(text)
    try:
        with paused_gc():
            graph = parser.parse_graph()
        parser.finish(graph)
        parser.verify(graph)
    except IRParseError:
        raise
    except (RecursionError, MemoryError):
        raise parser.error("input is nested too deeply or too large to parse") from None
    except Exception as exc:  # a parser bug must still come out as a parse error
        raise parser.error(f"cannot parse here ({type(exc).__name__}: {_shorten(str(exc))})") from None
    return graph


def parse_type(text: str) -> Type:
    """Parse one type, e.g. ``Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)``."""
    parser = _Parser(text)
    try:
        result = parser.parse_type()
        if parser.peek() != _END:
            raise parser.error(f"unexpected {parser.describe(parser.peek())} after the type")
        return result
    except IRParseError:
        raise
    except Exception as exc:
        raise parser.error(f"cannot parse type ({type(exc).__name__}: {_shorten(str(exc))})") from None

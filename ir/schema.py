"""Operator schemas: parse and print TorchScript signatures.

``aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``
parses into a :class:`FunctionSchema` that prints back to the same text. Alias
annotations (``Tensor(a)``, ``Tensor(a!)``) are kept for printing and for the
alias analysis of later passes; matching uses the plain types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .types import (
    TENSOR,
    AnyType,
    DictType,
    FutureType,
    ListType,
    NamedType,
    OptionalType,
    TupleType,
    Type,
    TypeVar,
)

__all__ = ["Argument", "FunctionSchema", "SchemaParseError", "parse_schema", "NO_DEFAULT"]


class SchemaParseError(ValueError):
    """A schema string that does not follow TorchScript's signature syntax."""


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True, slots=True)
class Argument:
    """One formal argument or return of a schema."""

    name: str
    type: Type
    type_text: str
    default: Any = NO_DEFAULT
    default_text: str | None = None
    kwarg_only: bool = False
    alias: str | None = None  # "a", "a!", "a -> *", "*"
    list_size: int | None = None  # the N of ``int[N]``

    @property
    def is_write(self) -> bool:
        return self.alias is not None and "!" in self.alias

    def __str__(self) -> str:
        text = self.type_text
        if self.name:
            text += " " + self.name
        if self.default_text is not None:
            text += "=" + self.default_text
        return text


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    name: str  # "aten::add"
    overload_name: str  # "Tensor" or ""
    arguments: tuple[Argument, ...]
    returns: tuple[Argument, ...]
    is_vararg: bool = False
    is_varret: bool = False

    @property
    def qualified_name(self) -> str:
        return self.name + ("." + self.overload_name if self.overload_name else "")

    def argument_index(self, name: str) -> int | None:
        for index, arg in enumerate(self.arguments):
            if arg.name == name:
                return index
        return None

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.arguments)

    def __str__(self) -> str:
        parts: list[str] = []
        kwarg_started = False
        for arg in self.arguments:
            if arg.kwarg_only and not kwarg_started:
                parts.append("*")
                kwarg_started = True
            parts.append(str(arg))
        if self.is_vararg:
            parts.append("...")
        text = f"{self.qualified_name}({', '.join(parts)}) -> "
        if self.is_varret:
            return text + "..."
        if len(self.returns) == 1:
            # As torch prints it: one result goes without parentheses, unless its
            # type starts with one (``-> ((str, t)[])``), which would read as a tuple.
            single = str(self.returns[0])
            return text + (f"({single})" if single.startswith("(") else single)
        return text + "(" + ", ".join(str(r) for r in self.returns) + ")"


_SIMPLE = {
    "Tensor": TENSOR,
    "Any": AnyType(),
    "SymInt": NamedType("int"),
    "SymFloat": NamedType("float"),
    "SymBool": NamedType("bool"),
    "number": NamedType("Scalar"),
}
_TYPE_VARS = re.compile(r"^t\d*$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


class _SchemaReader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str) -> SchemaParseError:
        return SchemaParseError(f"{message} at column {self.pos + 1} of schema {self.text!r}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def peek(self, token: str) -> bool:
        self.skip()
        return self.text.startswith(token, self.pos)

    def accept(self, token: str) -> bool:
        if self.peek(token):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.accept(token):
            raise self.fail(f"expected {token!r}")

    def ident(self) -> str:
        self.skip()
        match = _IDENT.match(self.text, self.pos)
        if not match:
            raise self.fail("expected a name")
        self.pos = match.end()
        return match.group()

    def alias(self) -> str | None:
        # An alias set directly follows its type: ``Tensor(a!)``, ``t(*)``.
        if self.pos < len(self.text) and self.text[self.pos] == "(":
            end = self.text.find(")", self.pos)
            if end < 0:
                raise self.fail("unclosed alias annotation")
            inner = self.text[self.pos + 1 : end]
            self.pos = end + 1
            return inner
        return None

    def type(self, depth: int = 0) -> tuple[Type, str | None, int | None]:
        if depth > 32:
            raise self.fail("type nested too deeply")
        self.skip()
        alias: str | None = None
        size: int | None = None
        if self.accept("("):
            elems: list[Type] = []
            while not self.accept(")"):
                if elems:
                    self.expect(",")
                elems.append(self.type(depth + 1)[0])
            base: Type = TupleType(tuple(elems))
        else:
            name = self.ident()
            if name in ("Dict", "Future", "RRef", "Await", "Union", "Optional", "List", "Tuple"):
                self.expect("(")
                args: list[Type] = []
                while not self.accept(")"):
                    if args:
                        self.expect(",")
                    args.append(self.type(depth + 1)[0])
                if name == "Dict" and len(args) == 2:
                    base = DictType(args[0], args[1])
                elif name == "Optional" and len(args) == 1:
                    base = OptionalType(args[0])
                elif name == "List" and len(args) == 1:
                    base = ListType(args[0])
                elif name == "Tuple":
                    base = TupleType(tuple(args))
                else:
                    base = FutureType(name, tuple(args))
            elif name in _SIMPLE:
                base = _SIMPLE[name]
            elif _TYPE_VARS.match(name):
                base = TypeVar(name)
            else:
                base = NamedType(name)
            alias = self.alias()
        while True:
            if self.text.startswith("[", self.pos):
                self.pos += 1
                digits = re.match(r"\d*", self.text[self.pos :]).group()  # type: ignore[union-attr]
                self.pos += len(digits)
                if not self.accept("]"):
                    raise self.fail("expected ']'")
                size = int(digits) if digits else None
                base = ListType(base)
                alias = self.alias() or alias
            elif self.text.startswith("?", self.pos):
                self.pos += 1
                base = OptionalType(base)
            else:
                return base, alias, size

    def default(self) -> str:
        self.skip()
        start, depth = self.pos, 0
        in_string = False
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if in_string:
                if ch == "\\":
                    self.pos += 1
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch in "[(":
                depth += 1
            elif ch in "])":
                if depth == 0:
                    break
                depth -= 1
            elif ch == "," and depth == 0:
                break
            self.pos += 1
        return self.text[start : self.pos].strip()

    def argument(self, kwarg_only: bool, is_return: bool) -> Argument:
        self.skip()
        start = self.pos
        type_, alias, size = self.type()
        type_text = self.text[start : self.pos]
        name = ""
        self.skip()
        if self.pos < len(self.text) and (self.text[self.pos].isalpha() or self.text[self.pos] == "_"):
            name = self.ident()
        elif not is_return:
            raise self.fail("expected an argument name")
        default_text = None
        default: Any = NO_DEFAULT
        if not is_return and self.accept("="):
            default_text = self.default()
            default = _parse_default(default_text, type_)
            if size is not None and isinstance(default, int) and not isinstance(default, bool):
                # ``int[2] padding=0`` means [0, 0], as TorchScript expands it.
                default = [default] * size
        return Argument(name, type_, type_text, default, default_text, kwarg_only, alias, size)

    def schema(self) -> FunctionSchema:
        namespace = self.ident()
        if not self.text.startswith("::", self.pos):
            raise self.fail("expected a namespaced name such as aten::add")
        self.pos += 2
        name, _, overload = self.ident().partition(".")
        name = namespace + "::" + name
        self.expect("(")
        arguments: list[Argument] = []
        kwarg_only = is_vararg = False
        while not self.accept(")"):
            if arguments or kwarg_only or is_vararg:
                self.expect(",")
            if self.accept("*"):
                kwarg_only = True
                continue
            if self.accept("..."):
                is_vararg = True
                continue
            arguments.append(self.argument(kwarg_only, is_return=False))
        self.expect("->")
        returns: list[Argument] = []
        is_varret = False
        self.skip()
        if self.accept("..."):
            is_varret = True
        elif self.peek("("):
            self.expect("(")
            while not self.accept(")"):
                if returns:
                    self.expect(",")
                returns.append(self.argument(False, is_return=True))
        else:
            returns.append(self.argument(False, is_return=True))
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("unexpected text after the returns")
        return FunctionSchema(name, overload, tuple(arguments), tuple(returns), is_vararg, is_varret)


def _unescape(body: str) -> str:
    """A string default's value: TorchScript's escapes (``\\"``, ``\\'``, ``\\\\``, ``\\n``) undone."""
    out: list[str] = []
    chars = iter(body)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            out.append({"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}.get(nxt, nxt))
        else:
            out.append(ch)
    return "".join(out)


def _parse_default(text: str, type_: Type) -> Any:
    if text == "None":
        return None
    if text == "True":
        return True
    if text == "False":
        return False
    if text.startswith(('"', "'")):
        return _unescape(text[1:-1])
    if text.startswith("["):
        items = [t.strip() for t in text[1:-1].split(",") if t.strip()]
        return [_parse_default(t, type_) for t in items]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text  # an enum-like name: contiguous_format, Mean


@lru_cache(maxsize=4096)
def parse_schema(text: str) -> FunctionSchema:
    """Parse a TorchScript schema string; raises SchemaParseError on bad syntax."""
    reader = _SchemaReader(text.strip())
    try:
        return reader.schema()
    except SchemaParseError:
        raise
    except (IndexError, AttributeError, ValueError) as exc:
        raise reader.fail(f"malformed schema ({exc})") from None

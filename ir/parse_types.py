"""Types as graphs print them, and as ``annotate(...)`` constants print them.

Two spellings: the IR's own (``Float(3, 4, strides=[4, 1])``, ``int[]``,
``Dict(str, Tensor)``, ``Enum<__torch__.Color>``) and Python's annotation
style that ``annotate(List[int], [])`` uses (``List[int]``, ``Dict[str, int]``,
``Optional[int]``, ``Tuple[()]``).
"""

from __future__ import annotations

from .errors import IRParseError
from .parse_tokens import END, TokenStream, is_int, shorten
from .types import (
    SCALAR_TYPE_NAMES,
    SIMPLE_TYPE_NAMES,
    TENSOR,
    AnyType,
    DictType,
    EnumType,
    FutureType,
    ListType,
    NamedType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
)

__all__ = ["TypeParsing", "MAX_NESTING"]

MAX_NESTING = 100  # types and attribute values nested deeper are rejected
_SCALAR_NAMES = frozenset(SCALAR_TYPE_NAMES)
_INT64_MAX = 2**63 - 1
_COMPOUND_TYPES = frozenset({"Dict", "Future", "RRef", "Await", "Union", "Optional", "List", "Tuple"})
_TYPE_CACHE: dict[str, Type] = {}


class TypeParsing(TokenStream):
    """The type grammar, on top of the token stream."""

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
            base = self.tensor_type(None if tok == "Tensor" else tok)
        elif tok.endswith("Tensor") and tok[:-6] in _SCALAR_NAMES:
            base = TensorType(tok[:-6], None)
            if self.peek() == "(":
                base = self.tensor_type(tok[:-6], rank_known=False)
        elif tok in _COMPOUND_TYPES:
            self.expect("(", f"'(' after {tok}")
            args: list[Type] = []
            while not self.accept(")"):
                if args:
                    self.expect(",", f"',' or ')' in {tok}(...)")
                args.append(self.parse_type(depth + 1))
            base = self.compound(tok, args, start)
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
        elif tok == "Enum" and self.toks[self.i] == "<":
            base = EnumType(self.enum_name())
        elif tok in SIMPLE_TYPE_NAMES or tok.startswith("__torch__."):
            base = NamedType(tok)
        else:
            raise self.error(f"unknown type {self.describe(tok)}", start)
        return self.type_suffixes(base, depth)

    def enum_name(self) -> str:
        """``<__torch__.Color>`` after ``Enum``."""
        self.i += 1
        name = self.take()
        if not (name[0].isalpha() or name[0] == "_"):
            raise self.error(f"expected an enum class name, found {self.describe(name)}", self.i - 1)
        self.expect(">", "'>' to close Enum<...>")
        return name

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
        sub = TypeParsing.fine(tok)
        try:
            result = sub.parse_type(1)
            if sub.peek() != END:
                raise sub.error(f"unexpected {sub.describe(sub.peek())} in type")
        except IRParseError as exc:
            # Point into the type, at the part that is wrong.
            raise self.error(f"{exc.message} (in type {shorten(tok)})", index, exc.column - 1) from None
        return result

    def tensor_type(self, scalar_type: str | None, rank_known: bool = True) -> TensorType:
        """``Float(3, *, strides=[..], requires_grad=0, device=cpu)``; the legacy executor
        also prints ranks without a dtype, ``Tensor(*, *)``."""
        if self.toks[self.i] != "(":
            return TensorType(scalar_type) if scalar_type is None else TensorType(scalar_type, None)
        strides_index = self.i - 1
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
            elif is_int(tok):
                if saw_field:
                    raise self.error("sizes must come before strides, requires_grad and device", self.i - 1)
                if tok[0] == "-":  # torch's parser refuses it too
                    raise self.error(f"a tensor size cannot be negative ({shorten(tok)})", self.i - 1)
                size = self.to_int(tok, self.i - 1)
                if size > _INT64_MAX:  # torch's sizes are int64
                    raise self.error(f"a tensor size cannot exceed int64's {_INT64_MAX} ({shorten(tok)})", self.i - 1)
                sizes.append(size)
            elif tok in ("strides", "requires_grad", "device"):
                saw_field = True
                self.expect("=", f"'=' after {tok}")
                if tok == "strides":
                    strides_index = self.i - 2
                    strides = self.strides()
                elif tok == "requires_grad":
                    flag = self.take()
                    if flag not in ("0", "1", "True", "False"):
                        raise self.error(f"requires_grad must be 0 or 1, not {self.describe(flag)}", self.i - 1)
                    requires_grad = flag in ("1", "True")
                else:
                    device = self.device_name()
            else:
                raise self.error(f"unexpected {self.describe(tok)} in a tensor type", self.i - 1)
        if strides is not None and len(strides) != len(sizes):
            raise self.error(f"{len(strides)} strides given for {len(sizes)} dimensions", strides_index)
        shape: tuple[int | None, ...] | None
        if scalar_type is None:
            # Tensor(*, *) has a rank; Tensor(requires_grad=0) has none; Tensor() is 0-dim.
            shape = tuple(sizes) if sizes or first else None
        else:
            shape = tuple(sizes) if rank_known else None
        return TensorType(
            scalar_type, shape, tuple(strides) if strides is not None else None, requires_grad, device
        )

    def strides(self) -> list[int | None]:
        self.expect("[", "'[' to open the strides")
        strides: list[int | None] = []
        while not self.accept("]"):
            if strides:
                self.expect(",", "',' or ']' in strides")
            if self.accept("*"):
                strides.append(None)
            else:
                stride = self.number_token(int)
                if abs(stride) > _INT64_MAX:
                    raise self.error(f"a stride cannot exceed int64's {_INT64_MAX} ({shorten(str(stride))})", self.i - 1)
                strides.append(stride)
        return strides

    def device_name(self) -> str:
        tok = self.take()
        if not (tok[0].isalpha() or tok[0] == "_"):
            raise self.error(f"expected a device such as cpu or cuda:0, found {self.describe(tok)}", self.i - 1)
        if self.toks[self.i] == ":" and is_int(self.toks[self.i + 1]):
            tok += ":" + self.toks[self.i + 1]
            self.i += 2
        return tok

    def compound(self, name: str, args: list[Type], index: int) -> Type:
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
        raise self.error(f"{name}(...) takes {'two types' if name == 'Dict' else 'one type'}, got {len(args)}", index)

    # -- Python's annotation spelling, as in annotate(List[int], []) ------------------
    def annotation_type(self, depth: int = 0) -> Type:
        """``List[int]``, ``Dict[str, Tensor]``, ``Optional[int]``, ``Tuple[()]``, ``Tensor``..."""
        if depth > MAX_NESTING:
            raise self.error(f"type is nested more than {MAX_NESTING} levels deep")
        start = self.i
        tok = self.take()
        if tok in _COMPOUND_TYPES and self.toks[self.i] == "[":
            self.i += 1
            args: list[Type] = []
            if tok == "Tuple" and self.toks[self.i] == "(" and self.toks[self.i + 1] == ")":
                self.i += 2  # Tuple[()]: the empty tuple
            else:
                while True:
                    args.append(self.annotation_type(depth + 1))
                    if not self.accept(","):
                        break
            self.expect("]", f"',' or ']' in {tok}[...]")
            return self.compound(tok, args, start)
        if tok == "Tensor":
            return TENSOR
        if tok == "Any":
            return AnyType()
        if tok in SIMPLE_TYPE_NAMES or tok.startswith("__torch__."):
            return NamedType(tok)
        raise self.error(f"unknown type {self.describe(tok)} in an annotation", start)

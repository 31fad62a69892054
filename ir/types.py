"""TorchScript's type system, as far as graphs print it.

Types are immutable and hashable, so a graph can share one instance between
many values and passes can compare types with ``==``. ``str(t)`` prints the
exact spelling TorchScript uses in its textual IR.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Type",
    "NamedType",
    "TensorType",
    "ListType",
    "OptionalType",
    "TupleType",
    "DictType",
    "FutureType",
    "EnumType",
    "TypeVar",
    "IntType",
    "FloatType",
    "BoolType",
    "StringType",
    "NoneType",
    "DeviceType",
    "FunctionType",
    "NumberType",
    "AnyType",
    "ScalarTypeType",
    "TENSOR",
    "SCALAR_TYPE_NAMES",
    "SIMPLE_TYPE_NAMES",
]

# TorchScript's scalar-type names, in the order of c10::ScalarType.
SCALAR_TYPE_NAMES: tuple[str, ...] = (
    "Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double",
    "ComplexHalf", "ComplexFloat", "ComplexDouble", "Bool", "QInt8", "QUInt8",
    "QInt32", "BFloat16", "QUInt4x2", "QUInt2x4", "Bits1x8", "Bits2x4",
    "Bits4x2", "Bits8", "Bits16", "Float8_e5m2", "Float8_e4m3fn",
    "Float8_e5m2fnuz", "Float8_e4m3fnuz", "UInt16", "UInt32", "UInt64",
)


class Type:
    """Base class of every IR type."""

    __slots__ = ()

    def is_tensor(self) -> bool:
        return False

    def contains_tensor(self) -> bool:
        return self.is_tensor()

    def is_subtype_of(self, other: Type) -> bool:
        """TorchScript's subtyping, enough for schema matching and lint."""
        if self == other or isinstance(other, (AnyType, TypeVar)):
            return True
        if isinstance(other, OptionalType):
            return self == NoneType() or self.is_subtype_of(other.elem)
        if isinstance(other, TensorType):
            return isinstance(self, TensorType) and other.is_unrefined()
        if isinstance(other, NamedType) and other.name in ("Scalar", "number"):
            # NumberType holds int, float and complex; bool is not a number.
            return self in (IntType(), FloatType(), NumberType(), NamedType("complex"))
        if isinstance(other, NamedType) and other.name == "SymInt":
            return self == IntType()
        if isinstance(self, NamedType) and self.name == "SymInt":
            return other == IntType()
        if isinstance(self, ListType) and isinstance(other, ListType):
            return self.elem.is_subtype_of(other.elem) and _invariant_ok(self.elem, other.elem)
        if isinstance(self, TupleType) and isinstance(other, TupleType):
            return len(self.elems) == len(other.elems) and all(
                a.is_subtype_of(b) for a, b in zip(self.elems, other.elems, strict=True)
            )
        return False


def _invariant_ok(elem: Type, other: Type) -> bool:
    # Lists are invariant in TorchScript, but refinements of Tensor are still
    # "Tensor" for this purpose (Float(2)[] is a Tensor[]).
    if isinstance(elem, TensorType) and isinstance(other, TensorType):
        return True
    return elem == other or isinstance(other, (AnyType, TypeVar)) or (
        isinstance(other, NamedType) and other.name in ("Scalar", "SymInt")
    )


@dataclass(frozen=True, slots=True)
class NamedType(Type):
    """A type with no parameters: ``int``, ``float``, ``Device``, ``Function``..."""

    name: str

    def __str__(self) -> str:
        return self.name


SIMPLE_TYPE_NAMES = frozenset({
    "int", "float", "bool", "str", "NoneType", "Device", "Function", "Scalar",
    "number", "Layout", "ScalarType", "MemoryFormat", "Generator", "Storage",
    "Stream", "QScheme", "complex", "SymInt", "SymFloat", "SymBool", "Capsule",
    "AnyEnumType", "AnyClassType", "AnyTupleType", "AnyListType", "Dimname",
    "Await", "Quantizer", "RRef", "Object", "t", "t1", "t2", "Any",
})


def IntType() -> NamedType:  # reads like a type constructor
    return _INT


def FloatType() -> NamedType:
    return _FLOAT


def BoolType() -> NamedType:
    return _BOOL


def StringType() -> NamedType:
    return _STR


def NoneType() -> NamedType:
    return _NONE


def DeviceType() -> NamedType:
    return _DEVICE


def FunctionType() -> NamedType:
    return _FUNCTION


def NumberType() -> NamedType:
    return _NUMBER


def ScalarTypeType() -> NamedType:
    return _SCALAR_TYPE


_INT = NamedType("int")
_FLOAT = NamedType("float")
_BOOL = NamedType("bool")
_STR = NamedType("str")
_NONE = NamedType("NoneType")
_DEVICE = NamedType("Device")
_FUNCTION = NamedType("Function")
_NUMBER = NamedType("Scalar")
_SCALAR_TYPE = NamedType("ScalarType")


@dataclass(frozen=True, slots=True)
class AnyType(Type):
    def __str__(self) -> str:
        return "Any"


@dataclass(frozen=True, slots=True)
class TypeVar(Type):
    """A schema type variable such as ``t`` in ``t[] a``."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    """A tensor, refined as far as is known.

    ``sizes`` is None when the rank is unknown, else one entry per dimension
    (None for an unknown size). ``requires_grad`` None means "not known", which
    TorchScript treats as "may require grad" (see :attr:`requires_grad_or_true`).
    ``undefined`` True marks a tensor known to be undefined (an AutogradZero).
    """

    scalar_type: str | None = None
    sizes: tuple[int | None, ...] | None = None
    strides: tuple[int | None, ...] | None = None
    requires_grad: bool | None = None
    device: str | None = None
    undefined: bool | None = None

    def is_tensor(self) -> bool:
        return True

    def is_unrefined(self) -> bool:
        return self == TENSOR

    @property
    def requires_grad_or_true(self) -> bool:
        return self.requires_grad is not False

    @property
    def rank(self) -> int | None:
        return None if self.sizes is None else len(self.sizes)

    def is_complete(self) -> bool:
        """Known dtype, device and every size and stride, as PyTorch profiles them."""
        return (
            self.scalar_type is not None
            and self.device is not None
            and self.sizes is not None
            and all(s is not None for s in self.sizes)
            and self.strides is not None
            and all(s is not None for s in self.strides)
        )

    def with_requires_grad(self, requires_grad: bool | None) -> TensorType:
        return TensorType(
            self.scalar_type, self.sizes, self.strides, requires_grad, self.device, self.undefined
        )

    def dimensioned_only(self) -> TensorType:
        """Keep rank, dtype, device and requires_grad; forget sizes and strides."""
        sizes = None if self.sizes is None else tuple(None for _ in self.sizes)
        return TensorType(self.scalar_type, sizes, None, self.requires_grad, self.device)

    def __str__(self) -> str:
        # Printing a 100,000-node graph formats the same few types over and
        # over: remember each type's text.
        text = _TENSOR_TEXT.get(self)
        if text is None:
            text = self._format()
            if len(_TENSOR_TEXT) < 65536:
                _TENSOR_TEXT[self] = text
        return text

    def _format(self) -> str:
        fields: list[str] = []
        if self.sizes is not None:
            fields.extend("*" if s is None else str(s) for s in self.sizes)
            if (
                self.strides is not None
                and len(self.sizes) > 0
                and len(self.strides) == len(self.sizes)
                and all(s is not None for s in self.strides)
            ):
                fields.append("strides=[" + ", ".join(str(s) for s in self.strides) + "]")
        if self.requires_grad is not None:
            fields.append(f"requires_grad={int(self.requires_grad)}")
        if self.device is not None:
            fields.append(f"device={self.device}")
        if self.scalar_type is None:
            head = "Tensor"
        elif self.sizes is None:
            head = self.scalar_type + "Tensor"
        else:
            head = self.scalar_type
        text = head
        if self.sizes is not None or fields:
            text += "(" + ", ".join(fields) + ")"
        if self.undefined:
            text += "[Undefined]"
        return text


_TENSOR_TEXT: dict[TensorType, str] = {}
TENSOR = TensorType()


@dataclass(frozen=True, slots=True)
class ListType(Type):
    elem: Type

    def contains_tensor(self) -> bool:
        return self.elem.contains_tensor()

    def __str__(self) -> str:
        return f"{self.elem}[]"


@dataclass(frozen=True, slots=True)
class OptionalType(Type):
    elem: Type

    def contains_tensor(self) -> bool:
        return self.elem.contains_tensor()

    def __str__(self) -> str:
        return f"{self.elem}?"


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    """``(T1, T2)``, or ``NamedTuple(a : T1, b : T2)`` when ``names`` are given."""

    elems: tuple[Type, ...]
    names: tuple[str, ...] | None = None

    def contains_tensor(self) -> bool:
        return any(e.contains_tensor() for e in self.elems)

    def __str__(self) -> str:
        if self.names is not None:
            fields = ", ".join(f"{n} : {e}" for n, e in zip(self.names, self.elems, strict=True))
            return f"NamedTuple({fields})"
        return "(" + ", ".join(str(e) for e in self.elems) + ")"


@dataclass(frozen=True, slots=True)
class DictType(Type):
    key: Type
    value: Type

    def contains_tensor(self) -> bool:
        return self.key.contains_tensor() or self.value.contains_tensor()

    def __str__(self) -> str:
        return f"Dict({self.key}, {self.value})"


@dataclass(frozen=True, slots=True)
class EnumType(Type):
    """A Python ``Enum`` class used in TorchScript: ``Enum<__torch__.Color>``."""

    name: str

    def __str__(self) -> str:
        return f"Enum<{self.name}>"


@dataclass(frozen=True, slots=True)
class FutureType(Type):
    """``Future(T)``, ``RRef(T)``, ``Await(T)``, ``Union(...)``: a name applied to types."""

    name: str
    args: tuple[Type, ...]

    def __str__(self) -> str:
        return f"{self.name}(" + ", ".join(str(a) for a in self.args) + ")"

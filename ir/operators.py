"""The operator registry: schemas by operator name, and overload resolution.

A node such as ``aten::add(%a, %b, %one)`` names an operator, not an
overload; :func:`resolve_schema` picks the first registered overload whose
arguments accept the node's input types, as TorchScript's matcher does.

The registry knows every ``aten::`` signature PyTorch has (``builtin_schemas``,
parsed per operator on first use), so a graph PyTorch prints always parses
with its schemas; whether gradview can run or differentiate an op is the op
library's business (``gradview.ops``), which also adds gradview's own ops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .builtin_schemas import BUILTIN_SCHEMAS
from .schema import NO_DEFAULT, Argument, FunctionSchema, parse_schema
from .types import (
    AnyType,
    DictType,
    FutureType,
    ListType,
    NamedType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
    TypeVar,
)

if TYPE_CHECKING:
    from .node import Node

__all__ = [
    "register_schema",
    "schemas_for",
    "resolve_schema",
    "node_matches",
    "is_known_op",
    "PRIM_OPS",
    "all_schemas",
]

_REGISTRY: dict[str, list[FunctionSchema]] = {}
_REGISTERED: set[str] = set()
# (kind, input types) -> the overload they resolve to; cleared when one is added.
_RESOLVED: dict[tuple[str, tuple[Type, ...]], FunctionSchema | None] = {}
_MISSING = object()

# Primitive nodes of TorchScript that have no schema but are part of the IR.
PRIM_OPS = frozenset({
    "prim::Constant", "prim::If", "prim::Loop", "prim::TupleConstruct", "prim::TupleUnpack",
    "prim::TupleIndex", "prim::TupleSlice", "prim::ListConstruct", "prim::ListUnpack",
    "prim::DictConstruct", "prim::GradOf", "prim::AutogradAdd", "prim::AutogradZero",
    "prim::AutogradAnyNonZero", "prim::AutogradAllZero", "prim::AutogradAllNonZero",
    "prim::DifferentiableGraph", "prim::FallbackGraph", "prim::RequiresGradCheck",
    "prim::TypeCheck", "prim::profile", "prim::profile_ivalue", "prim::ConstantChunk",
    "prim::BroadcastSizes", "prim::CallFunction", "prim::CallMethod", "prim::RaiseException",
    "prim::unchecked_cast", "prim::Reverse", "prim::Param", "prim::Return", "prim::Uninitialized",
    "prim::GetAttr", "prim::SetAttr", "prim::Print", "prim::device", "prim::dtype",
    "prim::layout", "prim::requires_grad", "prim::shape", "prim::min", "prim::max", "prim::abs",
    "prim::data", "prim::is_cuda", "prim::NumToTensor", "prim::ImplicitTensorToNum",
    "prim::Enter", "prim::Exit", "prim::FusionGroup", "prim::TensorExprGroup",
    "prim::BailOut", "prim::BailoutTemplate", "prim::Guard", "prim::Closure", "prim::CreateObject",
    "prim::rpc_async", "prim::unchecked_unwrap_optional", "prim::Drop", "prim::Store",
    "prim::Load", "prim::ReturnStmt", "prim::BreakStmt", "prim::ContinueStmt", "prim::EmptyListLiteral",
    "prim::isinstance", "prim::ChunkSizes", "prim::MMTreeReduce", "prim::MMBatchSide",
    "prim::StaticSubgraph", "prim::is_nested", "prim::type",
    "aten::__is__", "aten::__isnot__",
})


def register_schema(text: str) -> FunctionSchema:
    """Add a schema to the registry (idempotent) and return it parsed."""
    schema = parse_schema(text)
    _load_builtin(schema.name)  # PyTorch's own overloads of the name come first
    if text not in _REGISTERED:
        _REGISTERED.add(text)
        _REGISTRY.setdefault(schema.name, []).append(schema)
        _RESOLVED.clear()  # a new overload may change earlier resolutions
    return schema


def _load_builtin(kind: str) -> None:
    """Parse PyTorch's overloads of ``kind`` into the registry, once."""
    texts = BUILTIN_SCHEMAS.get(kind)
    if texts is None or kind in _REGISTRY:
        return
    overloads = _REGISTRY.setdefault(kind, [])
    for text in texts:
        _REGISTERED.add(text)
        overloads.append(parse_schema(text))
    _RESOLVED.clear()


def all_schemas() -> list[FunctionSchema]:
    """Every registered overload of every operator, in registration order per operator."""
    for kind in BUILTIN_SCHEMAS:
        _load_builtin(kind)
    return [schema for overloads in _REGISTRY.values() for schema in overloads]


def schemas_for(kind: str) -> list[FunctionSchema]:
    """Every registered overload of ``kind`` (``"aten::add"``), in resolution order."""
    if kind not in _REGISTRY:
        _load_builtin(kind)
    return list(_REGISTRY.get(kind, ()))


def is_known_op(kind: str) -> bool:
    """Does the IR know the operator: one of PyTorch's, gradview's own, or a structural prim?"""
    return kind in _REGISTRY or kind in BUILTIN_SCHEMAS or kind in PRIM_OPS


_INT_ENUMS = frozenset({"ScalarType", "Layout", "MemoryFormat", "QScheme"})


def _accepts(formal: Type, actual: Type, bindings: dict[str, Type]) -> bool:
    """Does an input of type ``actual`` fit a formal argument of type ``formal``?"""
    if isinstance(formal, TypeVar):
        bound = bindings.get(formal.name)
        if bound is None:
            bindings[formal.name] = actual
            return True
        return _accepts(bound, actual, bindings) or _accepts(actual, bound, {})
    if isinstance(formal, AnyType):
        return True
    if isinstance(formal, TensorType):
        return isinstance(actual, TensorType)
    if isinstance(formal, OptionalType):
        if actual == NamedType("NoneType"):
            return True
        inner = actual.elem if isinstance(actual, OptionalType) else actual
        return _accepts(formal.elem, inner, bindings)
    if isinstance(formal, ListType):
        if isinstance(actual, ListType):
            return _accepts(formal.elem, actual.elem, bindings)
        return False
    if isinstance(formal, TupleType):
        return (
            isinstance(actual, TupleType)
            and len(actual.elems) == len(formal.elems)
            and all(_accepts(f, a, bindings) for f, a in zip(formal.elems, actual.elems, strict=True))
        )
    if isinstance(formal, DictType):
        return isinstance(actual, DictType) and _accepts(formal.key, actual.key, bindings) and _accepts(
            formal.value, actual.value, bindings
        )
    if isinstance(formal, FutureType):
        return isinstance(actual, FutureType) and actual.name == formal.name
    if isinstance(formal, NamedType):
        if formal.name == "Scalar":
            # TorchScript's NumberType: int, float and complex, but not bool.
            return actual in (NamedType("int"), NamedType("float"), NamedType("Scalar"),
                              NamedType("complex"))
        if formal.name in _INT_ENUMS:
            # TorchScript passes these enums as plain ints (the schema's "fake" type).
            return actual in (formal, NamedType("int"))
        if formal.name == "Dimname":
            return actual in (formal, NamedType("str"))
        return actual == formal
    return actual == formal


def schema_accepts(schema: FunctionSchema, input_types: list[Type]) -> bool:
    if schema.is_vararg:
        if len(input_types) < len(schema.arguments):
            return False
    elif len(input_types) != len(schema.arguments):
        return False
    bindings: dict[str, Type] = {}
    return all(
        _accepts(arg.type, actual, bindings) or _single_int_for_fixed_list(arg, actual)
        for arg, actual in zip(schema.arguments, input_types, strict=False)
    )


def _single_int_for_fixed_list(arg: Argument, actual: Type) -> bool:
    """TorchScript passes one int where a fixed-size ``int[N]`` list is expected."""
    formal = arg.type.elem if isinstance(arg.type, OptionalType) else arg.type
    return (
        arg.list_size is not None
        and isinstance(formal, ListType)
        and formal.elem == NamedType("int")
        and actual == NamedType("int")
    )


def resolve_schema(node: Node) -> FunctionSchema | None:
    """The first overload of ``node.kind()`` that accepts the node's input types."""
    candidates = _REGISTRY.get(node.kind())
    if candidates is None:
        _load_builtin(node.kind())
        candidates = _REGISTRY.get(node.kind())
    if not candidates:
        return None
    input_types = [v.type() for v in node._inputs]
    # Types are immutable and hashable: a graph of 10,000 nodes resolves the
    # same few (kind, input types) combinations over and over.
    key = (node.kind(), tuple(input_types))
    cached = _RESOLVED.get(key, _MISSING)
    if cached is not _MISSING:
        return cached  # type: ignore[return-value]
    found = _resolve(candidates, input_types)
    if len(_RESOLVED) < 65536:
        _RESOLVED[key] = found
    return found



def _resolve(candidates: list[FunctionSchema], input_types: list[Type]) -> FunctionSchema | None:
    accepted = [schema for schema in candidates if schema_accepts(schema, input_types)]
    if accepted:
        # TorchScript's lists are invariant: a ``Tensor[]`` input picks the overload
        # taking ``Tensor[]`` (``index.Tensor_hacked_twin``) over one taking
        # ``Tensor?[]`` (``index.Tensor``) when both are there.
        exact = [schema for schema in accepted if not _widens_a_list(schema, input_types)]
        return exact[0] if exact else accepted[0]
    # Hand-written IR may leave out trailing arguments that have defaults
    # (TorchScript always prints them); the interpreter fills them in.
    for schema in candidates:
        if _accepts_with_defaults(schema, input_types):
            return schema
    return None


def _widens_a_list(schema: FunctionSchema, input_types: list[Type]) -> bool:
    """Does the schema take a list of optionals where the input is a list of non-optionals?"""
    for argument, actual in zip(schema.arguments, input_types, strict=False):
        formal = argument.type
        if (
            isinstance(formal, ListType) and isinstance(formal.elem, OptionalType)
            and isinstance(actual, ListType) and not isinstance(actual.elem, OptionalType)
        ):
            return True
    return False


def _accepts_with_defaults(schema: FunctionSchema, input_types: list[Type]) -> bool:
    count = len(input_types)
    if schema.is_vararg or count >= len(schema.arguments):
        return False
    if any(arg.default is NO_DEFAULT for arg in schema.arguments[count:]):
        return False
    return schema_accepts(_truncated(schema, count), input_types)


def _truncated(schema: FunctionSchema, count: int) -> FunctionSchema:
    return FunctionSchema(schema.name, schema.overload_name, schema.arguments[:count], schema.returns)


def node_matches(node: Node, schema: str | FunctionSchema) -> bool:
    """TorchScript's ``Node::matches``: same operator, and the inputs fit the arguments."""
    parsed = parse_schema(schema) if isinstance(schema, str) else schema
    if parsed.name != node.kind():
        return False
    return schema_accepts(parsed, [v.type() for v in node._inputs])

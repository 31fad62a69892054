"""gradview.ir: a TorchScript-compatible graph IR.

Graph, Block, Node and Value mirror ``torch._C``'s classes (``graph.nodes()``,
``node.kind()``, ``value.debug_name()``...); :func:`parse_ir` reads and
``str(graph)`` prints TorchScript's textual IR.
"""

from .arity import check_argument_counts
from .attributes import AttributeKind, TensorConstant
from .constants import NOT_CONSTANT, constant_value, insert_constant
from .errors import IRParseError, IRVerifyError
from .frontend import FromTorchError, ScriptError, ScriptFunction, from_torch, script
from .graph import Block, Graph, InsertPoint
from .lint import lint
from .nesting import MAX_RUNNABLE_NESTING, check_block_depth
from .node import Node, Use, Value
from .operators import is_known_op, register_schema, resolve_schema, schemas_for
from .parser import parse_ir, parse_type
from .printer import node_summary, print_graph
from .schema import Argument, FunctionSchema, SchemaParseError, parse_schema
from .types import (
    TENSOR,
    AnyType,
    BoolType,
    DeviceType,
    DictType,
    FloatType,
    FunctionType,
    IntType,
    ListType,
    NamedType,
    NoneType,
    NumberType,
    OptionalType,
    StringType,
    TensorType,
    TupleType,
    Type,
)

verify = lint

__all__ = [
    "AnyType", "Argument", "AttributeKind", "check_argument_counts", "check_block_depth", "MAX_RUNNABLE_NESTING", "Block", "BoolType", "DeviceType", "DictType",
    "FloatType", "FromTorchError", "from_torch", "FunctionSchema", "FunctionType", "Graph", "IRParseError", "IRVerifyError",
    "InsertPoint", "IntType", "ScriptError", "ScriptFunction", "script", "ListType", "NOT_CONSTANT", "NamedType", "Node", "NoneType",
    "NumberType", "OptionalType", "SchemaParseError", "StringType", "TENSOR", "TensorConstant",
    "TensorType", "TupleType", "Type", "Use", "Value", "constant_value", "insert_constant",
    "is_known_op", "lint", "node_summary", "parse_ir", "parse_schema", "parse_type", "print_graph",
    "register_schema", "resolve_schema", "schemas_for", "verify",
]

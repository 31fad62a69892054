"""An FX graph read from a TORCH_TRACE log, as a gradview graph.

AOTAutograd prints its graphs as Python (:mod:`gradview.loaders.fx_graph_text`
reads them); the viewer, the passes' printer and the interpreter speak
TorchScript's IR. The two say the same things differently, and this module
translates:

* ``torch.ops.aten.addmm.default(b, x, w)`` is the node ``aten::addmm`` whose
  schema is the overload ``default`` (``aten::addmm``'s unnamed one); the
  arguments are placed by the schema, keyword arguments included, and
  constants become ``prim::Constant`` nodes (lists of them one constant, lists
  holding values a ``prim::ListConstruct``);
* a multi-output op (``native_layer_norm``, ``_native_batch_norm_legit_functional``)
  is one node with one output per return; FX reads them with ``getitem``, which
  here is simply that output (named after the ``getitem``). An op returning a
  list (``split.Tensor``, what ``chunk`` becomes) keeps its list, and
  ``getitem`` reads it with ``aten::__getitem__``;
* every annotation ``"f32[8, 16][16, 1]cpu"`` becomes a complete tensor type,
  ``Float(8, 16, strides=[16, 1], device=cpu)``; a symbolic size stays unknown
  (``*``) and ``Sym(s0)`` is an ``int``;
* the ``# File: model.py:12 in forward, code: ...`` comment above a node
  becomes the node's source location, printed after it as TorchScript does.
* the module PyTorch recorded for a node (``nn_module_stack``, where the log
  holds it: :mod:`gradview.loaders.compiled_modules`) becomes the node's
  ``scope`` in TorchScript's form (``__module.layer1/__module.layer1.0``).

An op gradview has no schema for (a ``prims`` op, a custom op) is kept with
the inputs as written and its outputs typed by their annotations, so it shows
and prints; running it is refused at that node, by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gradview.ir import Graph, TensorType, Value
from gradview.ir.constants import insert_constant
from gradview.ir.module_scope import scope_text
from gradview.ir.operators import schemas_for
from gradview.ir.schema import NO_DEFAULT, FunctionSchema
from gradview.ir.types import (
    DeviceType,
    IntType,
    ListType,
    OptionalType,
    Type,
)
from gradview.runtime.tensor_sizes import SCALAR_TYPE_OF_DTYPE

from .fx_graph_text import FxGraph, FxNode, FxRef, FxValue
from .fx_tensor_types import SymbolAnnotation, TensorAnnotation

__all__ = ["FxToIrError", "fx_to_graph", "tensor_type_of"]

# ``torch.float32`` as an argument is the ScalarType's number, as TorchScript passes dtypes.
_DTYPE_NUMBERS = {
    "uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "float32": 6, "float64": 7,
    "complex32": 8, "complex64": 9, "complex128": 10, "bool": 11, "bfloat16": 15,
}
_TORCH_CONSTANTS = {
    **{f"torch.{name}": number for name, number in _DTYPE_NUMBERS.items()},
    "torch.float": 6, "torch.double": 7, "torch.half": 5, "torch.long": 4, "torch.int": 3,
    "torch.contiguous_format": 0, "torch.preserve_format": 1, "torch.channels_last": 2,
    "torch.channels_last_3d": 3, "torch.strided": 0, "torch.sparse_coo": 1,
}


class FxToIrError(ValueError):
    """An FX graph that does not translate; the message names the node and its line."""


def tensor_type_of(annotation: TensorAnnotation) -> TensorType:
    """``f32[8, 16][16, 1]cpu`` -> ``Float(8, 16, strides=[16, 1], device=cpu)`` (symbols: unknown)."""
    sizes = tuple(size if isinstance(size, int) else None for size in annotation.sizes)
    strides = tuple(stride if isinstance(stride, int) else None for stride in annotation.strides)
    return TensorType(
        scalar_type=SCALAR_TYPE_OF_DTYPE.get(annotation.dtype), sizes=sizes, strides=strides,
        requires_grad=None, device=annotation.device,
    )


def _type_of(annotation: Any) -> Type:
    if isinstance(annotation, TensorAnnotation):
        return tensor_type_of(annotation)
    if isinstance(annotation, SymbolAnnotation):
        return IntType()
    return TensorType()


def fx_to_graph(fx: FxGraph, modules: Mapping[str, str] | None = None) -> Graph:
    """The gradview graph of ``fx``: same inputs, nodes (in order) and outputs, same names.

    ``modules`` (FX node name -> module path, as PyTorch recorded it:
    :mod:`gradview.loaders.compiled_modules`) gives the nodes their ``scope``."""
    return _Translator(fx, modules or {}).graph


class _Translator:
    def __init__(self, fx: FxGraph, modules: Mapping[str, str]) -> None:
        self.graph = Graph()
        self.modules = modules
        self.values: dict[str, Value] = {}
        self.lists: dict[str, Value] = {}  # an op's list result, read by getitem
        self.multi: dict[str, list[Value]] = {}  # a multi-output node's outputs, read by getitem
        self.none: Value | None = None
        getitems = _getitem_uses(fx)
        for value in fx.inputs:
            self.values[value.name] = self.graph.add_input(value.name, _type_of(value.annotation))
        for node in fx.nodes:
            try:
                if node.op == "getitem":
                    self._getitem(node)
                else:
                    self._call(node, getitems.get(node.name, 0))
            except FxToIrError:
                raise
            except (TypeError, ValueError, KeyError) as exc:
                raise FxToIrError(f"line {node.line}: {node.name} = {node.op}: {exc}") from None
        for output in fx.outputs:
            self.graph.register_output(self._output(output))

    # -- nodes -----------------------------------------------------------------------------------
    def _call(self, node: FxNode, read_items: int) -> None:
        schema = _schema(node)
        if schema is not None:
            inputs = self._placed(node, schema)
            returns = schema.returns
            count = len(returns)
        else:
            inputs = [self._argument(arg, None) for arg in node.args] + [
                self._argument(arg, None) for arg in node.kwargs.values()
            ]
            returns = ()
            count = max(read_items, 1)
        created = self.graph.create(node.op, inputs, count)
        if node.source:
            created.source_location = node.source.removeprefix("File:").strip()
        created.scope = scope_text(self.modules.get(node.name, ""))
        self.graph.insert_node(created)
        outputs = created.outputs()
        if count == 1:
            outputs[0].set_debug_name(node.name)
            declared = returns[0].type if returns else None
            if isinstance(declared, ListType):
                outputs[0].set_type(declared)
                self.lists[node.name] = outputs[0]
            else:
                outputs[0].set_type(_type_of(node.annotation))
            self.values[node.name] = outputs[0]
        else:
            for position, (output, formal) in enumerate(zip(outputs, returns or [None] * count, strict=True)):
                output.set_debug_name(f"{node.name}_{position}")
                declared = formal.type if formal is not None else None
                output.set_type(TensorType() if declared is None or isinstance(declared, TensorType) else declared)
            self.multi[node.name] = outputs

    def _getitem(self, node: FxNode) -> None:
        source, index = node.args[0], node.args[1]
        if not isinstance(source, FxRef) or not isinstance(index, int):
            raise FxToIrError(f"line {node.line}: {node.name} = getitem of {source!r}[{index!r}]: not an op's output")
        if source.name in self.multi:
            outputs = self.multi[source.name]
            if not 0 <= index < len(outputs):
                raise FxToIrError(f"line {node.line}: {node.name} reads output {index} of {source.name}, which has {len(outputs)}")
            output = outputs[index]
            output.set_debug_name(node.name)
            output.set_type(_type_of(node.annotation))
            self.values[node.name] = output
            return
        listed = self.lists.get(source.name) or self.values.get(source.name)
        if listed is None:
            raise FxToIrError(f"line {node.line}: {node.name} reads {source.name}, which is not defined above it")
        created = self.graph.create("aten::__getitem__", [listed, insert_constant(self.graph, index)], 1)
        if node.source:
            created.source_location = node.source.removeprefix("File:").strip()
        created.scope = scope_text(self.modules.get(node.name, ""))
        self.graph.insert_node(created)
        created.output().set_debug_name(node.name).set_type(_type_of(node.annotation))
        self.values[node.name] = created.output()

    def _placed(self, node: FxNode, schema: FunctionSchema) -> list[Value]:
        """The inputs in the schema's order: positional, then keywords by name, the
        defaults between them filled in as TorchScript's compiler does."""
        formals = schema.arguments
        given: dict[int, Any] = {}
        if len(node.args) > len(formals):
            raise FxToIrError(f"line {node.line}: {node.name}: {len(node.args)} arguments for {schema}")
        for position, arg in enumerate(node.args):
            given[position] = arg
        for name, arg in node.kwargs.items():
            position = schema.argument_index(name)
            if position is None:
                raise FxToIrError(f"line {node.line}: {node.name}: {schema.qualified_name} has no argument {name!r}")
            given[position] = arg
        last = max(given, default=-1)
        inputs = []
        for position in range(last + 1):
            formal = formals[position]
            if position in given:
                inputs.append(self._argument(given[position], formal.type))
            elif formal.default is not NO_DEFAULT:
                inputs.append(self._argument(_listed(formal.default), formal.type))
            else:
                raise FxToIrError(f"line {node.line}: {node.name}: no value for {formal.name} of {schema}")
        return inputs

    def _argument(self, arg: Any, formal: Type | None) -> Value:
        if isinstance(arg, FxRef):
            found = self.values.get(arg.name) or self.lists.get(arg.name)
            if found is None:
                raise FxToIrError(f"{arg.name} is not defined above it")
            return found
        if isinstance(arg, tuple):
            if not _constant_list(arg):  # values (sizes under dynamic shapes) or nested lists
                items = [self._argument(item, _element(formal)) for item in arg]
                node = self.graph.create("prim::ListConstruct", items, 1)
                element = items[0].type() if items else TensorType()
                node.output().set_type(ListType(element if not isinstance(element, TensorType) else TensorType()))
                self.graph.insert_node(node)
                return node.output()
            return insert_constant(self.graph, [_plain(item) for item in arg])
        constant = insert_constant(self.graph, _plain(arg), DeviceType() if _is_device(arg) else None)
        if _wants_tensor(formal) and isinstance(arg, int | float) and not isinstance(arg, bool):
            # A number where the schema takes a Tensor (``sub.Tensor(1, mul)`` in Inductor's
            # graphs): PyTorch wraps it as a 0-d tensor, TorchScript with prim::NumToTensor.
            wrapped = self.graph.create("prim::NumToTensor", [constant], 1)
            scalar = "Long" if isinstance(arg, int) else "Double"
            wrapped.output().set_type(TensorType(scalar_type=scalar, sizes=(), strides=()))
            self.graph.insert_node(wrapped)
            return wrapped.output()
        return constant

    def _output(self, output: FxValue) -> Value:
        if output.name == "None":
            if self.none is None:
                self.none = insert_constant(self.graph, None)
            return self.none
        found = self.values.get(output.name) or self.lists.get(output.name)
        if found is None:
            raise FxToIrError(f"line {output.line}: the output {output.name} is not defined")
        return found


def _schema(node: FxNode) -> FunctionSchema | None:
    if "::" not in node.op:
        return None
    wanted = "" if node.overload in (None, "default") else node.overload
    for schema in schemas_for(node.op):
        if schema.overload_name == wanted:
            return schema
    return None


def _getitem_uses(fx: FxGraph) -> dict[str, int]:
    """Node name -> how many outputs ``getitem`` reads of it (the highest index plus one)."""
    counts: dict[str, int] = {}
    for node in fx.nodes:
        if node.op == "getitem" and node.args and isinstance(node.args[0], FxRef) and isinstance(node.args[1], int):
            name = node.args[0].name
            counts[name] = max(counts.get(name, 0), node.args[1] + 1)
    return counts


def _plain(arg: Any) -> Any:
    """A constant as TorchScript holds it: dtypes and formats as numbers, devices as text."""
    if isinstance(arg, str):
        if arg in _TORCH_CONSTANTS:
            return _TORCH_CONSTANTS[arg]
        if _is_device(arg):
            return _device_text(arg)
    return arg


def _is_device(arg: Any) -> bool:
    return isinstance(arg, str) and arg.startswith(("device(", "torch.device("))


def _device_text(text: str) -> str:
    """``device(type='cuda', index=0)`` -> ``cuda:0``."""
    inside = text[text.index("(") + 1 : text.rindex(")")]
    parts = dict(part.strip().split("=", 1) for part in inside.split(",") if "=" in part)
    kind = parts.get("type", "'cpu'").strip("'\"")
    index = parts.get("index")
    return kind if index is None else f"{kind}:{index.strip()}"


def _required(formal: Type | None) -> Type | None:
    """``T`` of ``T?``."""
    return formal.elem if isinstance(formal, OptionalType) else formal


def _wants_tensor(formal: Type | None) -> bool:
    return isinstance(_required(formal), TensorType)


def _listed(default: Any) -> Any:
    """A schema default as an FX argument (lists as tuples)."""
    return tuple(default) if isinstance(default, list) else default


def _constant_list(items: Sequence[Any]) -> bool:
    return all(isinstance(item, int | float | bool) for item in items)


def _element(formal: Type | None) -> Type | None:
    formal = _required(formal)
    return formal.elem if isinstance(formal, ListType) else None

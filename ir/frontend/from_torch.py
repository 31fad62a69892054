"""A PyTorch model in one call: ``from_torch(model, example_inputs)`` -> ``(graph, inputs)``.

PyTorch compiles the model (``torch.jit.trace`` or ``torch.jit.script``); this
module turns the method graph PyTorch prints into a self-contained function
graph gradview can run and differentiate:

    graph(%self : __torch__.M, %x : Tensor):             graph(%x : Double(2, 4, ...),
      %lin : Linear = prim::GetAttr[name="lin"](%self)          %lin.weight : Double(3, 4, ...),
      %w : Tensor = prim::GetAttr[name="weight"](%lin)  ->      %lin.bias : Double(3, ...)):
      %b : Tensor = prim::GetAttr[name="bias"](%lin)          %y : Tensor = aten::linear(%x, %lin.weight, %lin.bias)
      %y : Tensor = aten::linear(%x, %w, %b)                  return (%y)
      return (%y)

Methods are inlined (``prim::CallMethod`` on a submodule becomes its body),
every parameter and buffer becomes a graph input named after it, and other
attributes (``training``, numbers, strings, lists...) become constants. The
inputs come in this order: the example inputs, then ``named_parameters()``,
then ``named_buffers()``, all of them, read by the graph or not, so a training
step can hand back a gradient (or an updated buffer) for each one.

PyTorch is needed only here, and only when this function is called: ``.ir``
files, JIT logs and saved traces never need it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy

from ..attributes import TensorConstant
from ..errors import IRParseError, IRVerifyError
from ..graph import Graph
from ..lint import lint
from ..parser import parse_ir

__all__ = ["FromTorchError", "from_torch"]

_INSTALL_HINT = "from_torch needs PyTorch: pip install 'gradview[torch]'"


class FromTorchError(Exception):
    """The model cannot be turned into a gradview graph; the message says why and where."""


def from_torch(model_or_fn: Any, example_inputs: Any, how: str = "trace") -> tuple[Graph, list[Any]]:
    """Compile ``model_or_fn`` with PyTorch and return ``(graph, inputs)``.

    ``model_or_fn`` is a ``torch.nn.Module``, a plain function of tensors, or
    something PyTorch already compiled (a ``ScriptModule``/``ScriptFunction``,
    used as it is). ``example_inputs`` is a tuple (or a single tensor) of the
    arguments of one call. ``how`` is ``"trace"`` (``torch.jit.trace``: records
    the ops one call runs, with complete tensor types) or ``"script"``
    (``torch.jit.script``: compiles the source, control flow included).

    ``inputs`` holds one value per graph input: tensors as NumPy arrays (copies,
    so running the graph never writes into the model), other arguments as
    Python values; the example inputs first, then every parameter, then every
    buffer. Tensor inputs are typed completely (dtype, sizes, strides,
    ``requires_grad``) from the values returned.
    """
    torch = _import_torch()
    if how not in ("trace", "script"):
        raise ValueError(f"from_torch: how must be 'trace' or 'script', not {how!r}")
    args = tuple(example_inputs) if isinstance(example_inputs, list | tuple) else (example_inputs,)
    is_module = isinstance(model_or_fn, torch.nn.Module)
    names = _name(model_or_fn)
    # Tracing runs the model once, and a training-mode BatchNorm updates its running
    # statistics as it runs: put the buffers back, so the user's model and the
    # inputs handed back are as they were before the call.
    before = [(b, b.detach().clone()) for _, b in model_or_fn.named_buffers()] if is_module else []
    compiled = _compile(torch, model_or_fn, args, how)
    with torch.no_grad():
        for buffer, value in before:
            buffer.copy_(value)
    graph = _forward_graph(torch, compiled, is_module, args, names)
    parameters = list(model_or_fn.named_parameters()) if is_module else []
    buffers = list(model_or_fn.named_buffers()) if is_module else []
    _refuse_calls(graph, names)
    if is_module:
        _lift_attributes(torch, graph, compiled, model_or_fn, parameters, buffers, names)
    if len(list(graph.inputs())) != len(args) + len(parameters) + len(buffers):
        raise FromTorchError(
            f"from_torch({names}): the graph takes {len(list(graph.inputs()))} inputs for "
            f"{len(args)} example inputs, {len(parameters)} parameters and {len(buffers)} buffers"
        )
    arrays = [_to_python(torch, value, f"example input {i}") for i, value in enumerate(args)]
    arrays += [_to_python(torch, p, f"parameter {n}") for n, p in parameters]
    arrays += [_to_python(torch, b, f"buffer {n}") for n, b in buffers]
    _type_inputs(torch, graph, list(args) + [p for _, p in parameters] + [b for _, b in buffers])
    try:
        result = parse_ir(str(graph))
    except IRParseError as exc:
        raise FromTorchError(
            f"from_torch({names}): gradview cannot read the graph PyTorch printed: {exc.summary.strip()}"
        ) from exc
    _copy_tensor_constants(torch, graph, result, names)
    try:
        lint(result)
    except IRVerifyError as exc:
        raise FromTorchError(f"from_torch({names}): the converted graph is invalid: {exc}") from exc
    return result, arrays


# -- compiling -----------------------------------------------------------------------------------
def _import_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ImportError(_INSTALL_HINT) from None
    return torch


def _compile(torch: Any, model_or_fn: Any, args: tuple[Any, ...], how: str) -> Any:
    """A ScriptModule or ScriptFunction for ``model_or_fn``, as ``how`` asks."""
    if isinstance(model_or_fn, torch.jit.ScriptModule | torch.jit.ScriptFunction):
        return model_or_fn  # already compiled: its graph is what the user means
    try:
        if how == "script":
            return torch.jit.script(model_or_fn)
        # check_trace would run the model twice more and warn about nondeterministic
        # ops (dropout); the graph is the same either way.
        return torch.jit.trace(model_or_fn, args, check_trace=False)
    except Exception as exc:  # torch's own error, reported on one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FromTorchError(f"from_torch({_name(model_or_fn)}): torch.jit.{how} failed: {first}") from exc


def _forward_graph(torch: Any, compiled: Any, is_module: bool, args: tuple[Any, ...], names: str) -> Any:
    """The inlined graph (a copy) of the call ``compiled(*args)``.

    A scripted module may overload ``forward`` (``nn.LSTM`` has ``forward__0``
    for tensors and ``forward__1`` for packed sequences): the overload whose
    arguments take ``args`` is chosen. Arguments left out take their default
    values, as constants, as they would in the call.
    """
    if not is_module:
        method = compiled
    elif compiled._c._has_method("forward"):
        method = compiled._c._get_method("forward")
    else:
        overloads = [n for n in compiled._c._method_names() if re.fullmatch(r"forward__\d+", n)]
        method = _choose_overload(torch, [compiled._c._get_method(n) for n in overloads], args, names)
    graph = method.inlined_graph  # every method and function call inlined
    parameters = method.schema.arguments[1:] if is_module else method.schema.arguments
    first = 1 if is_module else 0
    if len(args) > len(parameters):
        raise FromTorchError(f"from_torch({names}): {len(args)} example inputs for {method.schema}")
    defaulted = parameters[len(args):]
    missing = [a.name for a in defaulted if not a.has_default_value()]
    if missing:
        raise FromTorchError(f"from_torch({names}): no example input for {', '.join(missing)} of {method.schema}")
    graph_inputs = list(graph.inputs())
    first_node = next(iter(graph.nodes()), graph.return_node())
    with graph.insert_point_guard(first_node):
        for i, argument in enumerate(defaulted, start=first + len(args)):
            graph_inputs[i].replaceAllUsesWith(graph.insertConstant(argument.default_value))
    for i in reversed(range(first + len(args), len(graph_inputs))):
        graph.eraseInput(i)
    return graph


def _choose_overload(torch: Any, methods: list[Any], args: tuple[Any, ...], names: str) -> Any:
    """The first overload whose arguments accept the example inputs' types."""
    for method in methods:
        parameters = method.schema.arguments[1:]
        if len(args) > len(parameters) or any(not p.has_default_value() for p in parameters[len(args):]):
            continue
        if all(_accepts(torch, p.type, value) for p, value in zip(parameters, args, strict=False)):
            return method
    schemas = "; ".join(str(m.schema) for m in methods) or "none"
    raise FromTorchError(f"from_torch({names}): no forward overload takes the example inputs (overloads: {schemas})")


def _accepts(torch: Any, type_: Any, value: Any) -> bool:
    inferred = torch._C._jit_try_infer_type(value)
    return bool(inferred.success()) and inferred.type().isSubtypeOf(type_)


def _name(model_or_fn: Any) -> str:
    return getattr(model_or_fn, "__qualname__", None) or type(model_or_fn).__name__


def _type_inputs(torch: Any, graph: Any, values: list[Any]) -> None:
    """Complete tensor types for the tensor inputs, describing the arrays handed back:
    on the CPU and contiguous (NumPy copies them so), ``requires_grad`` as in torch."""
    for graph_input, value in zip(graph.inputs(), values, strict=True):
        if isinstance(value, torch.Tensor):
            typed = value.detach().cpu().contiguous().requires_grad_(value.requires_grad)
            graph_input.setType(torch._C.TensorType.create_from_tensor(typed))


# -- lifting attributes ----------------------------------------------------------------------
def _lift_attributes(
    torch: Any,
    graph: Any,
    compiled: Any,
    module: Any,
    parameters: list[tuple[str, Any]],
    buffers: list[tuple[str, Any]],
    names: str,
) -> None:
    """Replace every ``prim::GetAttr`` chain from ``%self`` by a graph input or a constant.

    Each attribute along a chain ``%self.sub.lin.weight`` is read from the
    compiled module: a submodule is followed; a parameter or buffer (under any
    of its names: tied weights share one) is its input, appended after the
    example inputs; a list of them (``nn.LSTM``'s ``_flat_weights``) a
    ``prim::ListConstruct`` of those inputs; a value without tensors
    (``training``, numbers, strings, lists of them) a constant.
    """
    self_value = next(iter(graph.inputs()))
    by_tensor = _lifted_inputs(graph, parameters, buffers)
    objects: dict[int, tuple[str, Any]] = {self_value.unique(): ("", compiled)}
    getattrs = []
    for node in _walk(graph.block()):
        if node.kind() == "prim::SetAttr":
            raise FromTorchError(
                f"from_torch({names}): the model assigns attribute {node.s('name')!r} "
                "(prim::SetAttr); a lifted attribute is a graph input and cannot be assigned"
            )
        if node.kind() != "prim::GetAttr":
            continue
        owner = objects.get(node.input().unique())
        if owner is None:
            raise FromTorchError(
                f"from_torch({names}): attribute {node.s('name')!r} of {node.input().type()} "
                "(not a submodule) cannot be lifted"
            )
        getattrs.append(node)
        path = f"{owner[0]}.{node.s('name')}" if owner[0] else node.s("name")
        value = getattr(owner[1], node.s("name"))
        if isinstance(value, torch.nn.Module):
            objects[node.output().unique()] = (path, value)
            continue
        with graph.insert_point_guard(node):
            replacement = _attribute_value(torch, graph, node, value, by_tensor, f"from_torch({names}): attribute {path}")
        node.output().replaceAllUsesWith(replacement)
    for node in reversed(getattrs):  # users (the chain's tail) first
        if node.output().uses():
            user = node.output().uses()[0].user
            raise FromTorchError(
                f"from_torch({names}): submodule {objects[node.output().unique()][0]} is used as a "
                f"value by {user.kind()}; only its parameters, buffers and attributes can be lifted"
            )
        node.destroy()
    if self_value.uses():
        user = self_value.uses()[0].user
        raise FromTorchError(
            f"from_torch({names}): the module itself is used as a value by {user.kind()}; "
            "only its parameters, buffers and attributes can be lifted"
        )
    graph.eraseInput(0)


def _attribute_value(torch: Any, graph: Any, node: Any, value: Any, by_tensor: dict[int, Any], where: str) -> Any:
    """The graph value standing for attribute ``value``, inserted at the insert point."""
    if isinstance(value, torch.Tensor):
        if id(value) not in by_tensor:
            raise FromTorchError(
                f"{where} is a tensor that is neither a parameter nor a buffer; register it "
                "with register_buffer so it becomes a graph input"
            )
        return by_tensor[id(value)]
    if isinstance(value, list | tuple) and any(isinstance(v, torch.Tensor) for v in value):
        items = [_attribute_value(torch, graph, node, v, by_tensor, f"{where}[{i}]") for i, v in enumerate(value)]
        kind = "prim::ListConstruct" if isinstance(value, list) else "prim::TupleConstruct"
        construct = graph.insertNode(graph.create(kind, items))
        construct.output().setType(node.output().type())
        return construct.output()
    try:
        return graph.insertConstant(value)
    except Exception as exc:  # torch cannot hold it as a constant
        raise FromTorchError(f"{where} ({type(value).__name__}) cannot become a constant") from exc


def _lifted_inputs(graph: Any, parameters: list[tuple[str, Any]], buffers: list[tuple[str, Any]]) -> dict[int, Any]:
    """Append one graph input per parameter and buffer, named after it; map each tensor to it.

    Keyed by the tensor itself, so tied weights and shared submodules, which
    reach one tensor under several paths, share one input.
    """
    by_tensor: dict[int, Any] = {}
    taken: set[str] = set()
    for name, tensor in parameters + buffers:
        value = graph.addInput()
        value.setDebugName(_unique(_sanitize(name), taken))
        by_tensor[id(tensor)] = value
    return by_tensor


_INVALID = re.compile(r"[^A-Za-z0-9_]")


def _sanitize(name: str) -> str:
    """A value name both parsers read back: ``layers.0.weight`` stays, ``0.weight`` becomes
    ``_0.weight`` (TorchScript's lexer reads ``0.`` as a number), ``conv-1`` becomes ``conv_1``."""
    parts = [_INVALID.sub("_", part) or "_" for part in name.split(".")]
    for i, part in enumerate(parts):
        if part[0].isdigit() and (i == 0 or not part.isdigit()):
            parts[i] = "_" + part
    return ".".join(parts)


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    taken.add(candidate)
    return candidate


def _walk(block: Any) -> Any:
    """Every node of ``block`` and its nested blocks, in order (definitions before uses)."""
    stack = [iter(block.nodes())]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        yield node
        stack.extend(iter(b.nodes()) for b in reversed(list(node.blocks())))


def _refuse_calls(graph: Any, names: str) -> None:
    """Calls inlining could not remove: a method of an interface, a function value."""
    for node in _walk(graph.block()):
        kind = node.kind()
        if kind == "prim::CallMethod":
            raise FromTorchError(
                f"from_torch({names}): method {node.s('name')!r} is called through "
                f"{node.inputsAt(0).type()} (an interface or a module value), which cannot be inlined"
            )
        if kind == "prim::CallFunction":
            raise FromTorchError(
                f"from_torch({names}): a function value is called (prim::CallFunction), "
                "which cannot be inlined"
            )


# -- tensor constants ------------------------------------------------------------------------
_SCALAR_TYPES = {
    "float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long", "int32": "Int",
    "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
}


def _copy_tensor_constants(torch: Any, source: Any, target: Graph, names: str) -> None:
    """Give ``target``'s tensor constants the exact values of ``source``'s.

    PyTorch prints a tensor constant with 6 significant digits (MultiheadAttention's
    scaling ``{0.707107}``) or not at all (``<Tensor>``); the graph object holds
    the exact values. Both graphs list their nodes in the same order.
    """
    tensors = [
        node.t("value")
        for node in _walk(source.block())
        if node.kind() == "prim::Constant" and node.hasAttribute("value") and node.kindOf("value") == "t"
    ]
    constants = [
        node
        for node in target.all_nodes()
        if node.kind() == "prim::Constant" and node.has_attribute("value") and node.attribute_kind("value") == "t"
    ]
    if len(tensors) != len(constants):
        raise FromTorchError(
            f"from_torch({names}): {len(tensors)} tensor constants in PyTorch's graph, "
            f"{len(constants)} in gradview's"
        )
    for node, tensor in zip(constants, tensors, strict=True):
        scalar_type = _SCALAR_TYPES.get(str(tensor.dtype).removeprefix("torch."))
        if scalar_type is None:
            raise FromTorchError(f"from_torch({names}): a tensor constant has dtype {tensor.dtype}")
        values = tuple(tensor.detach().cpu().reshape(-1).tolist())
        device = "cpu" if tensor.device.type == "cpu" else str(tensor.device)
        node.t_("value", TensorConstant(values, tuple(tensor.shape), scalar_type, device))


# -- values ------------------------------------------------------------------------------------------
def _to_python(torch: Any, value: Any, what: str) -> Any:
    """A tensor as a NumPy array (a contiguous copy); tuples and lists element-wise."""
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu().resolve_conj().resolve_neg()
        if tensor.layout != torch.strided:
            raise FromTorchError(
                f"from_torch: {what} is a {str(tensor.layout).removeprefix('torch.')} tensor: "
                "gradview does not run sparse tensors (its tensors are dense)"
            )
        try:
            return numpy.array(tensor.numpy(), copy=True, order="C")
        except TypeError as exc:  # bfloat16 and friends
            raise FromTorchError(f"from_torch: {what} has dtype {tensor.dtype}, which NumPy cannot hold") from exc
    if isinstance(value, Sequence) and not isinstance(value, str):
        return type(value)(_to_python(torch, v, what) for v in value)
    return value

"""The names users act on for a compiled graph's inputs and gradients, read from a TORCH_TRACE log.

AOTAutograd calls the inputs of its graphs ``primals_1``, ``primals_2``, ...
and marks each with a descriptor: ``PlainAOTInput(idx=i)`` is input ``i`` of
the graph Dynamo handed it, ``ParamAOTInput(target='layer4.1.conv2.weight')``
a parameter by its qualified name. Dynamo, which lifts a model's parameters
and buffers to graph inputs, says which is which in two entries of the same
compile:

* ``dynamo_output_graph`` names its input ``i`` after the input's *source*,
  every run of other characters made one ``_``
  (``L_self_modules_layer1_modules_0_modules_conv1_parameters_weight_``);
* ``describe_source`` gives each source exactly
  (``L['self']._modules['layer1']._modules['0']._modules['conv1']._parameters['weight']``).

So input ``i`` of AOTAutograd's graphs is named after the source of Dynamo's
input ``i``: a parameter or buffer by its qualified name as ``named_parameters()``
writes it (``layer1.0.conv1.weight``; prefixed with the root's name when the
compiled code reads several models), an argument by its name (``x``). A
gradient (``GradAOTOutput(grad_of=PlainAOTInput(idx=i))``) is named after its
input: ``layer1.0.conv1.weight.grad``. Nothing is guessed: an input whose
source the log does not give, or gives ambiguously, keeps its graph name alone.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import NamedTuple

from .fx_graph_text import FxGraph
from .torch_trace_log import TraceEntry

__all__ = ["InputName", "dynamo_input_names", "source_name", "graph_value_names", "parameter_owners", "GRAD_SUFFIX"]

GRAD_SUFFIX = ".grad"  # a gradient's name: its input's, as PyTorch keeps it (param.grad)

_MANGLE = re.compile(r"[^a-zA-Z0-9]+")  # Dynamo's rule for a graph input's name (variables/builder.py)
_PARAMETER = re.compile(
    r"^[LG]\['(?P<root>[^']+)'\](?P<modules>(?:\._modules\['[^']+'\])*)\._(?:parameters|buffers)\['(?P<leaf>[^']+)'\]$"
)
_MODULE = re.compile(r"\._modules\['([^']+)'\]")
_ARGUMENT = re.compile(r"^[LG]\['([A-Za-z_][A-Za-z0-9_]*)'\]$")
_INPUT_INDEX = re.compile(r"^PlainAOTInput\(idx=(\d+)\)$")
_TARGET = re.compile(r"^(?:Param|Buffer)AOTInput\(target='([^']+)'\)$")
_GRAD_OF = re.compile(r"^GradAOTOutput\(grad_of=(.*)\)$")


def source_name(source: str, roots: int = 1) -> str | None:
    """What a user calls the tensor at Dynamo's ``source``: a parameter or buffer by its
    qualified name (``L['self']._modules['fc']._parameters['weight']`` -> ``fc.weight``;
    with ``roots`` > 1 models read, the root's name first: ``model.fc.weight``), an
    argument or a global tensor by its name (``L['x']`` -> ``x``); None for any other source."""
    match = _PARAMETER.match(source)
    if match is not None:
        parts = [*_MODULE.findall(match.group("modules")), match.group("leaf")]
        if roots > 1:
            parts.insert(0, match.group("root"))
        return ".".join(parts)
    match = _ARGUMENT.match(source)
    return match.group(1) if match is not None else None


class InputName(NamedTuple):
    """What an input of Dynamo's graph is to the user."""

    name: str  # "layer1.0.conv1.weight", "x"
    is_parameter: bool  # a parameter or buffer (owned by the module its name's prefix names)


def dynamo_input_names(entries: Sequence[TraceEntry]) -> dict[tuple[str, str], list[InputName | None]]:
    """Per (log file, compile id): the name users act on for each input of Dynamo's
    graph, in order (None where the log does not say)."""
    sources: dict[tuple[str, str], list[str]] = {}
    signatures: dict[tuple[str, str], list[str]] = {}
    for entry in entries:
        key = (entry.source, entry.compile_id or "")
        if entry.key == "describe_source" and isinstance(entry.value, dict) and isinstance(entry.value.get("source"), str):
            sources.setdefault(key, []).append(entry.value["source"])
        elif entry.key == "dynamo_output_graph":
            signatures[key] = _placeholders(entry.payload)
    found = {}
    for key, placeholders in signatures.items():
        by_mangled: dict[str, str | None] = {}
        for source in sources.get(key, []):
            mangled = _MANGLE.sub("_", source)
            # Two sources that read the same once mangled: neither is named.
            by_mangled[mangled] = source if by_mangled.get(mangled, source) == source else None
        roots = {m.group("root") for s in by_mangled.values() if s and (m := _PARAMETER.match(s))}
        found[key] = [_input(by_mangled.get(name), len(roots)) for name in placeholders]
    return found


def _input(source: str | None, roots: int) -> InputName | None:
    name = source_name(source, roots) if source else None
    return InputName(name, bool(_PARAMETER.match(source or ""))) if name else None


def _placeholders(payload: str) -> list[str]:
    """The input names of Dynamo's printed graph (its ``forward``'s parameters after self),
    read from the signature alone: the body, as long as the graph, is not needed."""
    start = payload.find("def forward(")
    end = payload.find("):", start)
    if start < 0 or end < 0:
        return []
    try:
        module = ast.parse(payload[start : end + 2] + " pass")
    except SyntaxError:
        return []
    function = module.body[0]
    return [arg.arg for arg in function.args.args[1:]] if isinstance(function, ast.FunctionDef) else []


def graph_value_names(fx: FxGraph, inputs: Sequence[InputName | None]) -> dict[str, str]:
    """Graph value name -> the name users act on, for one of AOTAutograd's graphs: its
    inputs by their descriptors (``inputs``: Dynamo's input names, from
    :func:`dynamo_input_names`), its gradients after the inputs they are for."""
    names: dict[str, str] = {}
    for value in fx.inputs:
        found = _input_name(value.descriptor or "", inputs)
        if found is not None:
            names[value.name] = found.name
    for value in fx.outputs:
        match = _GRAD_OF.match(value.descriptor or "")
        if match is None or value.name == "None":
            continue
        of = _input_name(match.group(1), inputs)
        if of is not None:
            names.setdefault(value.name, of.name + GRAD_SUFFIX)
    return names


def parameter_owners(fx: FxGraph, inputs: Sequence[InputName | None]) -> dict[str, str]:
    """Graph input name -> the module owning it, for the inputs that are parameters or
    buffers (``layer1.0.conv1.weight`` -> ``layer1.0.conv1``; ``""``: the model's own)."""
    owners = {}
    for value in fx.inputs:
        found = _input_name(value.descriptor or "", inputs)
        if found is not None and found.is_parameter:
            owners[value.name] = found.name.rpartition(".")[0]
    return owners


def _input_name(descriptor: str, inputs: Sequence[InputName | None]) -> InputName | None:
    match = _TARGET.match(descriptor)
    if match is not None:
        return InputName(match.group(1), True)
    match = _INPUT_INDEX.match(descriptor)
    if match is not None and int(match.group(1)) < len(inputs):
        return inputs[int(match.group(1))]
    return None

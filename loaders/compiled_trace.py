"""torch.compile's autodiff graphs, from a TORCH_TRACE log, as a pass trace.

For each graph Dynamo hands it, AOTAutograd traces one *joint* graph (the
forward and the backward together: it takes the inputs and the tangents and
returns the outputs and the gradients), then *partitions* it into a forward
graph and a backward graph. The forward returns its real outputs followed by
the values the backward needs (``SavedForBackwardsAOTOutput``); the backward
takes those saved values, then one tangent per output that needs a gradient,
and returns one gradient per input (``None`` where an input needs none).

That is the shape of TorchScript's ``differentiate``: ``f``, ``df``, and the
captured values between them. So each compiled graph k of the log becomes
the steps the viewer already shows for DifferentiableGraph k:

* ``aot_joint_graph`` on the graph ``main`` (``main (compilation k+1)`` for
  the second compiled graph on);
* with Inductor, ``inductor_post_grad_graph`` on ``forward k`` and on
  ``backward k``: each graph after Inductor's post-grad passes (the
  ``inductor_post_grad_graph`` artifacts, the forward's first), which keep
  its inputs and outputs;
* before those, ``partition`` on ``forward k``, then ``partition`` on ``backward k``, the
  forward step carrying the Gradient's lists: ``f_real_outputs``, the
  outputs whose tangents the backward takes (``df_input_vjps``), the saved
  graph inputs (``df_input_captured_inputs``) and saved results
  (``df_input_captured_outputs``), the inputs it returns gradients for
  (``df_output_vjps``), and where the backward takes and returns each of
  them (AOTAutograd's order is not TorchScript's).

Every step of compiled graph k carries, under ``value_names``, the names users
act on for its parameters, buffers, arguments and gradients, and under
``parameter_owners`` the module owning each parameter or buffer
(:mod:`gradview.loaders.compiled_names`); where the log records each node's
module (``--compile``'s logs: :mod:`gradview.loaders.compiled_modules`), the
nodes carry it as their ``scope`` and the trace the module classes.

Graphs come in the order they were compiled (a graph break gives several,
``0/0`` and ``1/0``). Entries that are not these graphs (Dynamo's own graph,
guards, metrics, artifacts such as ``aot_forward_graph_fw_metadata``) are
counted and skipped. A log whose forward and backward disagree, or whose
graph text does not read, is refused with the line of the entry.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gradview.ir import Graph
from gradview.runtime.graph_match import match_graphs
from gradview.runtime.pass_trace import PassTrace
from gradview.runtime.trace_types import GraphName, GraphRole, Note

from .compiled_modules import ARTIFACT as MODULES_ARTIFACT
from .compiled_modules import module_paths
from .compiled_names import InputName, dynamo_input_names, graph_value_names, parameter_owners
from .fx_graph_text import FxGraph, FxGraphError, parse_fx_graph
from .fx_tensor_types import SymbolAnnotation, TensorAnnotation
from .fx_to_ir import FxToIrError, fx_to_graph
from .torch_trace_log import TorchTraceError, TraceEntry, load_torch_trace

__all__ = [
    "CompiledGraph", "CompiledTrace", "compiled_graphs", "compiled_trace", "load_compiled_trace",
    "JOINT_STEP", "PARTITION_STEP",
]

JOINT_STEP = "aot_joint_graph"
PARTITION_STEP = "partition"
POST_GRAD_STEP = "inductor_post_grad_graph"  # an artifact, once for the forward and once for the backward

# What the viewer's docs pane says about these steps (they are not gradview passes).
JOINT_DOC = """AOTAutograd's joint graph: the forward and the backward of one compiled graph, traced together.

torch.compile hands AOTAutograd each graph Dynamo captured. AOTAutograd runs
it once with PyTorch's own autograd on fake tensors, recording every aten op
of the forward and of the backward into one graph. Its inputs are the
forward's inputs (primals) and one tangent per output that needs a gradient;
its outputs are the forward's outputs and one gradient per input (None where
an input needs none). Nothing has been decided yet about what the backward
keeps from the forward: that is the partition's job, the next step."""

POST_GRAD_DOC = """The graph after Inductor's post-grad passes, the last FX graph before code generation.

With the Inductor backend (torch.compile's default), each of the forward and
backward graphs goes through Inductor's post-grad passes: pattern rewrites
(views to permutes and reshapes, fused patterns, decompositions), dead-code
elimination and reordering. The inputs and outputs stay as the partition made
them, so the saved values and gradients line up with the previous step; the
diff shows what the passes rewrote."""

PARTITION_DOC = """The joint graph cut in two: a forward graph and a backward graph.

The partitioner decides which values cross from the forward to the backward.
The forward returns its real outputs, then the values it saves for backward
(marked SavedForBackwardsAOTOutput); the backward takes those saved values
first, then the tangents, and returns one gradient per forward input. Every
saved value stays in memory from the forward pass until the backward has run,
which is why the Saved pane lists them with their bytes. A value the backward
needs can also be recomputed in the backward instead of saved (the
partitioner's min-cut does this for cheap ops), trading memory for compute.

This is the same shape as TorchScript's differentiate: f, df and the
captured values between them, so the forward, backward and joint views show
it the same way."""
_GRAPH_KEYS = ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph")
_INDEX = re.compile(r"idx=(\d+)")


@dataclass
class CompiledGraph:
    """One compiled graph of the log: AOTAutograd's joint, forward and backward graphs."""

    compile_id: str  # "0/0"; "rank0.log 0/0" when the log is a directory of several processes' logs
    forward: Graph
    backward: Graph
    joint: Graph | None
    notes: dict[str, object]  # the Gradient's lists, keyed by Note
    entries: dict[str, TraceEntry] = field(default_factory=dict)  # log key -> its entry
    post_grad: list[tuple[Graph, TraceEntry]] = field(default_factory=list)  # Inductor's, forward first
    # Per graph (its role: the joint graph is the main one), its steps' naming annotations
    # (:mod:`gradview.loaders.compiled_names`): Note.VALUE_NAMES (value name -> the name
    # users act on) and Note.PARAMETER_OWNERS (parameter input name -> its module).
    naming: dict[GraphRole, dict[str, dict[str, str]]] = field(default_factory=dict)
    # Module path -> class name, where the log records the nodes' modules (--compile's logs).
    module_types: dict[str, str] = field(default_factory=dict)


@dataclass
class CompiledTrace:
    graphs: list[CompiledGraph]
    skipped: int  # entries that are not graphs gradview shows
    trace: PassTrace


def _index_of(descriptor: str | None, entry: TraceEntry, what: str) -> int:
    match = _INDEX.search(descriptor or "")
    if match is None:
        raise TorchTraceError(f"{entry.where}: {what} has no index in its descriptor {descriptor!r}")
    return int(match.group(1))


def gradient_notes(forward: FxGraph, backward: FxGraph, entry: TraceEntry) -> dict[str, object]:
    """The Gradient's lists for AOTAutograd's pair, read from the descriptors."""
    is_saved = [(o.descriptor or "").startswith("SavedForBackwards") for o in forward.outputs]
    saved = [o for o, flag in zip(forward.outputs, is_saved, strict=True) if flag]
    real = len(forward.outputs) - len(saved)
    if any(is_saved[:real]):
        raise TorchTraceError(f"{entry.where}: the forward returns a saved value before a real output")
    plain_output_position = {
        _index_of(o.descriptor, entry, f"output {o.name}"): position
        for position, o in enumerate(forward.outputs[:real])
        if (o.descriptor or "").startswith("PlainAOTOutput")
    }
    input_position = {value.name: position for position, value in enumerate(forward.inputs)}
    output_position = {o.name: real + j for j, o in enumerate(saved)}
    tangent_params = [p for p, v in enumerate(backward.inputs) if (v.descriptor or "").startswith("TangentAOTInput")]
    is_tangent = set(tangent_params)
    saved_params = [p for p in range(len(backward.inputs)) if p not in is_tangent]
    if len(saved_params) != len(saved):
        raise TorchTraceError(
            f"{entry.where}: the forward saves {len(saved)} values but the backward takes "
            f"{len(saved_params)} besides its tangents"
        )
    # The backward takes the saved values under the forward's names, though not always in
    # the forward's order (symbolic sizes come first): match them by name.
    param_of = {backward.inputs[p].name: p for p in saved_params}
    missing = [value.name for value in saved if value.name not in param_of]
    if missing:
        raise TorchTraceError(f"{entry.where}: the backward does not take the saved value {missing[0]} by its name")
    captured_inputs, captured_input_params, captured_outputs, captured_output_params = [], [], [], []
    for value in saved:
        param = param_of[value.name]
        if value.name in input_position:  # a forward input saved as it is
            captured_inputs.append(input_position[value.name])
            captured_input_params.append(param)
        else:
            captured_outputs.append(output_position[value.name])
            captured_output_params.append(param)
    # A tangent names the output it is for by that output's descriptor: a plain output, or
    # the base of an aliased one (IntermediateBaseAOTOutput(base_of=PlainAOTOutput(idx=1))).
    output_by_descriptor = {o.descriptor: position for position, o in enumerate(forward.outputs[:real]) if o.descriptor}
    vjps = []
    for param in tangent_params:
        descriptor = backward.inputs[param].descriptor or ""
        names = descriptor.partition("output=")[2].removesuffix(")")
        if names in output_by_descriptor:
            vjps.append(output_by_descriptor[names])
            continue
        index = _index_of(names, entry, f"tangent {backward.inputs[param].name}")
        if index not in plain_output_position:
            raise TorchTraceError(f"{entry.where}: tangent {backward.inputs[param].name} is for output {index}, which the forward does not return")
        vjps.append(plain_output_position[index])
    input_by_descriptor = {v.descriptor: position for position, v in enumerate(forward.inputs) if v.descriptor}
    output_vjps, output_returns = [], []
    for position, value in enumerate(backward.outputs):
        descriptor = value.descriptor or ""
        if value.name == "None" or not descriptor.startswith("GradAOTOutput"):
            continue
        of = descriptor.partition("grad_of=")[2].removesuffix(")")
        # The input it is for, by that input's descriptor (PlainAOTInput(idx=1), or a
        # parameter's ParamAOTInput(target='0.weight')), else by the index it names.
        index = input_by_descriptor[of] if of in input_by_descriptor else _index_of(of, entry, f"gradient {value.name}")
        if not 0 <= index < len(forward.inputs):
            raise TorchTraceError(f"{entry.where}: gradient {value.name} is for input {index}, which the forward does not take")
        output_vjps.append(index)
        output_returns.append(position)
    return {
        Note.F_REAL_OUTPUTS: real,
        Note.DF_INPUT_VJPS: vjps,
        Note.DF_INPUT_CAPTURED_INPUTS: captured_inputs,
        Note.DF_INPUT_CAPTURED_OUTPUTS: captured_outputs,
        Note.DF_OUTPUT_VJPS: output_vjps,
        Note.DF_VJP_PARAMS: tangent_params,
        Note.DF_CAPTURED_INPUT_PARAMS: captured_input_params,
        Note.DF_CAPTURED_OUTPUT_PARAMS: captured_output_params,
        Note.DF_OUTPUT_RETURNS: output_returns,
    }


def _what_it_holds(entries: Sequence[TraceEntry]) -> str:
    """Why a log gives no forward/backward pair, from what it does hold."""
    keys = [entry.key for entry in entries]
    forwards = keys.count("aot_forward_graph") + keys.count("aot_joint_graph")
    if forwards and not keys.count("aot_backward_graph"):
        return (
            "the log holds AOTAutograd's joint or forward graph but no backward graph: the backward did not "
            "run under TORCH_TRACE, or the log was cut before it"
        )
    inference = keys.count("aot_inference_graph")
    if inference:
        return (
            f"the log holds {inference} inference graph{'s' if inference != 1 else ''} (no backward): "
            "run a training step (parameters or inputs requiring grad, then .backward()) under TORCH_TRACE"
        )
    frames = keys.count("dynamo_start")
    if frames:
        return (
            f"Dynamo started on {frames} frame{'s' if frames != 1 else ''} but compiled no graph with AOTAutograd "
            "(it may have run the code eagerly: look for graph breaks or skipped frames)"
        )
    count = len(entries)
    return (
        f"the log's {count} entr{'ies hold' if count != 1 else 'y holds'} no torch.compile graph: "
        "was the model compiled with torch.compile?"
    )


def _read(entry: TraceEntry, modules: dict[str, str] | None = None) -> tuple[FxGraph, Graph]:
    try:
        fx = parse_fx_graph(entry.payload)
        return fx, fx_to_graph(fx, modules)
    except (FxGraphError, FxToIrError) as exc:
        # The payload starts on the line after the envelope.
        message = str(exc)
        match = re.match(r"line (\d+)(?::(\d+))?: (.*)", message)
        if match is not None:
            column = f":{match.group(2)}" if match.group(2) else ""
            where = f"{entry.source}:{entry.line + int(match.group(1))}{column}"
            raise TorchTraceError(f"{where}: {entry.key}: {match.group(3)}") from None
        raise TorchTraceError(f"{entry.where}: {entry.key}: {message}") from None


def compiled_graphs(entries: Sequence[TraceEntry]) -> tuple[list[CompiledGraph], int]:
    """The compiled graphs in ``entries``, in compile order, and how many entries were skipped."""
    # A directory may hold several processes' logs, each numbering its compiles from 0/0.
    by_id: dict[tuple[str, str], dict[str, TraceEntry]] = {}
    skipped = 0
    post_grad: dict[tuple[str, str], list[TraceEntry]] = {}
    symbols = _symbol_values(entries)
    dynamo_inputs = dynamo_input_names(entries)
    modules = module_paths(entries)
    for entry in entries:
        if _is_post_grad(entry) and entry.compile_id is not None:
            post_grad.setdefault((entry.source, entry.compile_id), []).append(entry)
            continue
        if entry.key == "artifact" and isinstance(entry.value, dict) and entry.value.get("name") == MODULES_ARTIFACT:
            continue  # read above, into the graphs' node scopes
        if entry.key not in _GRAPH_KEYS or entry.compile_id is None:
            skipped += 1
            continue
        found = by_id.setdefault((entry.source, entry.compile_id), {})
        if entry.key in found:
            raise TorchTraceError(f"{entry.where}: a second {entry.key} for compiled graph {entry.compile_id}")
        found[entry.key] = entry
    graphs = []
    sources = {source for source, _ in by_id}
    for (source, compile_id), found in by_id.items():
        forward_entry, backward_entry = found.get("aot_forward_graph"), found.get("aot_backward_graph")
        if forward_entry is None or backward_entry is None:
            # An inference-only compile (no backward) has no autodiff to show.
            skipped += len(found)
            continue
        paths, module_types = modules.get((source, compile_id), ({}, {}))
        forward_fx, forward = _read(forward_entry, paths)
        backward_fx, backward = _read(backward_entry, paths)
        joint_fx, joint = _read(found[JOINT_STEP], paths) if JOINT_STEP in found else (None, None)
        notes = gradient_notes(forward_fx, backward_fx, backward_entry)
        symbolic = _symbolic_sizes(forward_fx)
        if symbolic:
            notes[Note.SYMBOLIC_SIZES] = symbolic
            notes[Note.SYMBOL_VALUES] = symbols.get((source, compile_id), {})
        name = compile_id if len(sources) == 1 else f"{Path(source).name} {compile_id}"
        inputs = dynamo_inputs.get((source, compile_id), [])
        naming = {GraphRole.FORWARD: _naming(forward_fx, inputs), GraphRole.BACKWARD: _naming(backward_fx, inputs)}
        if joint_fx is not None:
            naming[GraphRole.MAIN] = _naming(joint_fx, inputs)
        compiled = CompiledGraph(name, forward, backward, joint, notes, dict(found), naming=naming, module_types=module_types)
        later = post_grad.pop((source, compile_id), [])
        for entry, partitioned in zip(later, (forward, backward), strict=False):
            graph = _read(entry)[1]
            if len(graph.inputs()) == len(partitioned.inputs()) and len(graph.outputs()) == len(partitioned.outputs()):
                compiled.post_grad.append((graph, entry))
            else:  # a signature the Gradient's positions do not fit: not shown as this graph
                skipped += 1
        skipped += max(len(later) - 2, 0)
        graphs.append(compiled)
    skipped += sum(len(left) for left in post_grad.values())
    return graphs, skipped


def _symbol_values(entries: Sequence[TraceEntry]) -> dict[tuple[str, str | None], dict[str, int]]:
    """Per log file and compile, the value each symbol had when Dynamo made it
    (``create_symbol``'s ``val``). Symbol names are reused from frame to frame
    (``s77`` is the first size of ``x`` in every frame), so each compile keeps its own."""
    found: dict[tuple[str, str | None], dict[str, int]] = {}
    for entry in entries:
        if entry.key == "create_symbol" and isinstance(entry.value, dict):
            symbol, value = entry.value.get("symbol"), str(entry.value.get("val", ""))
            if isinstance(symbol, str) and value.lstrip("-").isdigit():
                found.setdefault((entry.source, entry.compile_id), {})[symbol] = int(value)
    return found


def _symbolic_sizes(fx: FxGraph) -> dict[str, list[int | str] | str]:
    """Forward value name -> sizes, for the tensors whose sizes hold symbols (dynamic
    shapes), and -> the expression of each symbolic integer input (``Sym(s77)``)."""
    sized = [*fx.inputs, *fx.nodes]
    found: dict[str, list[int | str] | str] = {
        value.name: list(value.annotation.sizes)
        for value in sized
        if isinstance(value.annotation, TensorAnnotation) and any(not isinstance(s, int) for s in value.annotation.sizes)
    }
    found.update({v.name: v.annotation.expr for v in fx.inputs if isinstance(v.annotation, SymbolAnnotation)})
    return found


def _is_post_grad(entry: TraceEntry) -> bool:
    return entry.key == "artifact" and isinstance(entry.value, dict) and entry.value.get("name") == POST_GRAD_STEP


def compiled_trace(entries: Sequence[TraceEntry], source: str = "<trace>") -> CompiledTrace:
    """The pass trace of the compiled graphs in ``entries`` (see the module's docstring)."""
    graphs, skipped = compiled_graphs(entries)
    if not graphs:
        raise TorchTraceError(f"{source}: no compiled graph with a backward: {_what_it_holds(entries)}")
    trace = PassTrace()
    for compiled in graphs:
        trace.module_types.update(compiled.module_types)
    for k, compiled in enumerate(graphs):
        common = {Note.COMPILE_ID: compiled.compile_id}
        if compiled.joint is not None:
            entry = compiled.entries[JOINT_STEP]
            trace.record(
                JOINT_STEP, compiled.joint, which=GraphName.main(k + 1), changed=True,
                annotations={**common, **compiled.naming.get(GraphRole.MAIN, {}), Note.HEADER: entry.key, Note.LOG_LINE: entry.line},
            )
        forward_entry, backward_entry = compiled.entries["aot_forward_graph"], compiled.entries["aot_backward_graph"]
        trace.record(
            PARTITION_STEP, compiled.forward, which=GraphName.forward(k), changed=True,
            annotations={
                **common, **compiled.notes, **compiled.naming.get(GraphRole.FORWARD, {}),
                Note.HEADER: forward_entry.key, Note.LOG_LINE: forward_entry.line,
            },
        )
        trace.record(
            PARTITION_STEP, compiled.backward, which=GraphName.backward(k), changed=True,
            annotations={
                **common, **compiled.naming.get(GraphRole.BACKWARD, {}),
                Note.HEADER: backward_entry.key, Note.LOG_LINE: backward_entry.line,
            },
        )
        partitioned = (compiled.forward, compiled.backward)
        whiches = (GraphName.forward(k), GraphName.backward(k))
        for (graph, entry), before, which in zip(compiled.post_grad, partitioned, whiches, strict=False):
            trace.inherit_ids(match_graphs(before, graph))  # what the passes kept keeps its id
            names = {note: _by_position(before, graph, table) for note, table in compiled.naming.get(which.role, {}).items()}
            trace.record(
                POST_GRAD_STEP, graph, which=which, changed=True,
                annotations={**common, **names, Note.HEADER: POST_GRAD_STEP, Note.LOG_LINE: entry.line},
            )
    return CompiledTrace(graphs, skipped, trace)


def _naming(fx: FxGraph, inputs: list[InputName | None]) -> dict[str, dict[str, str]]:
    tables = {Note.VALUE_NAMES: graph_value_names(fx, inputs), Note.PARAMETER_OWNERS: parameter_owners(fx, inputs)}
    return {str(note): table for note, table in tables.items() if table}


def _by_position(before: Graph, after: Graph, names: dict[str, str]) -> dict[str, str]:
    """``names`` (keyed by value name) carried to a graph with the same inputs and outputs in the same places
    (Inductor's post-grad graph keeps the partition's signature, not its value names)."""
    carried = {}
    pairs = [*zip(before.inputs(), after.inputs(), strict=False), *zip(before.outputs(), after.outputs(), strict=False)]
    for old, new in pairs:
        if old.debug_name() in names:
            carried.setdefault(new.debug_name(), names[old.debug_name()])
    return carried


def load_compiled_trace(path: str | Path) -> CompiledTrace:
    """:func:`compiled_trace` of a TORCH_TRACE log file or directory."""
    return compiled_trace(load_torch_trace(path), str(path))


"""The graphs of one OpInfo sample that the suite checks, each with its eager reference.

* traced: the graph of torch.jit.trace of the call; its inputs are the
  sample's tensors, and the reference is the op called eagerly.
* scripted: each DifferentiableGraph section torch's profiling executor
  differentiated for the scripted call (``opinfo_sections``); its inputs are
  found from the record's sources, and the reference is the section itself
  run op by op by torch's interpreter with the executor's optimizations off,
  so every op records eager autograd.
* executor (report only): the traced graph run by gradview's GraphExecutor
  on gradview Tensors, then ``gradview.runtime.autograd.grad``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

from .opinfo_cases import GRAD_SEED, Case, flatten, output_grads_like, to_numpy
from .opinfo_check import Reference, torch_readable, without_profiles

__all__ = ["traced_reference", "script_tensors", "section_reference", "run_executor"]


def traced_reference(case: Case) -> Reference:
    eager = case.eager()
    return Reference(case.input_arrays(), eager.outputs, eager.output_grads, eager.input_grads)


def script_tensors(case: Case) -> list[Any]:
    """The scripted function's arguments, as ``gen_script_fn_and_args`` makes them:
    one per positional tensor or list of tensors (keyword tensors are literals)."""
    leaves = iter(case.leaf_inputs())
    found: list[Any] = []
    for arg in (case.sample.input, *case.sample.args):
        if isinstance(arg, torch.Tensor):
            found.append(next(leaves))
        elif isinstance(arg, list | tuple) and arg and all(isinstance(t, torch.Tensor) for t in arg):
            found.append([next(leaves) for _ in arg])
    return found


def _section_value(source: list[Any], tensors: list[Any]) -> Any:
    kind = source[0]
    if kind == "input":
        return tensors[source[1]]
    if kind == "element":
        return tensors[source[1]][source[2]]
    if kind == "constant":
        return source[1]
    raise AssertionError(f"harness: a section input comes from {source}, which the harness cannot supply")


def _reference_graph(text: str) -> Any:
    """torch's graph of ``text``, runnable by its interpreter, outputs in one tuple."""
    graph = without_profiles(torch._C.parse_ir(torch_readable(text)))
    graph.makeMultiOutputIntoTuple()
    return graph


def section_reference(case: Case, section: dict[str, Any]) -> Reference:
    """The section's inputs and what eager autograd computes through it."""
    values = [_section_value(s, script_tensors(case)) for s in section["sources"]]
    fn = torch._C._create_function_from_graph("section", _reference_graph(section["text"]))
    leaves = [v for value in values for v in (value if isinstance(value, list) else [value])]
    leaves = [v for v in leaves if isinstance(v, torch.Tensor) and v.requires_grad]
    with warnings.catch_warnings(), torch.jit.optimized_execution(False):
        warnings.simplefilter("ignore")
        outputs = [o for o in flatten(fn(*values)) if isinstance(o, torch.Tensor)]
    grads = output_grads_like(outputs, seed=GRAD_SEED + case.index)
    pairs = [(o, torch.from_numpy(g)) for o, g in zip(outputs, grads, strict=True) if o.requires_grad]
    found: dict[int, Any] = {}
    if pairs and leaves:
        computed = torch.autograd.grad(
            [p[0] for p in pairs], leaves, [p[1] for p in pairs], allow_unused=True
        )
        found = {id(leaf): g for leaf, g in zip(leaves, computed, strict=True)}

    def grad_of(value: Any) -> Any:
        if isinstance(value, list):
            return [grad_of(v) for v in value]
        g = found.get(id(value)) if isinstance(value, torch.Tensor) else None
        return None if g is None else to_numpy(g)

    arrays = [_as_arrays(v) for v in values]
    return Reference(arrays, [to_numpy(o) for o in outputs], grads, [grad_of(v) for v in values])


def _as_arrays(value: Any) -> Any:
    if isinstance(value, list):
        return [_as_arrays(v) for v in value]
    return to_numpy(value) if isinstance(value, torch.Tensor) else value


def run_executor(text: str, ref: Reference) -> None:
    """The traced graph through gradview's GraphExecutor and autograd, against the
    reference (raises AssertionError with what differs)."""
    from gradview.ir import parse_ir
    from gradview.runtime import GraphExecutor, Tensor, autograd

    from .opinfo_check import CheckFailure, _close, _describe, stage

    def wrap(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return Tensor(value.copy(), requires_grad=value.dtype.kind == "f")
        return value

    inputs = [wrap(v) for v in ref.inputs]
    with stage("executor run"):
        outputs = flatten(GraphExecutor(parse_ir(text)).run(inputs))
    for index, output in enumerate(outputs):
        if not isinstance(output, Tensor):
            raise CheckFailure(
                "executor run", f"output tensor {index} comes back as {type(output).__name__}, not a Tensor"
            )
    if len(outputs) != len(ref.outputs):
        raise CheckFailure("numbers", f"{len(outputs)} outputs, eager {len(ref.outputs)}")
    for index, (ours, theirs) in enumerate(zip(outputs, ref.outputs, strict=True)):
        if not _close(ours.detach().numpy(), theirs):
            raise CheckFailure("numbers", f"output {index}: {_describe(ours.detach().numpy(), theirs)}")
    pairs = [(o, Tensor(g)) for o, g in zip(outputs, ref.output_grads, strict=True) if o.requires_grad]
    wanted = [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    got: dict[int, Any] = {}
    if pairs and wanted:
        with stage("executor backward"):
            grads = autograd.grad(
                [p[0] for p in pairs], [w[1] for w in wanted], [p[1] for p in pairs], allow_unused=True
            )
        got = {i: g for (i, _), g in zip(wanted, grads, strict=True)}
    for index, theirs in enumerate(ref.input_grads):
        ours = got.get(index)
        if theirs is None or (ours is None and not np.any(theirs)):
            continue  # (an undefined gradient is autograd's zero)
        if ours is None:
            raise CheckFailure("numbers", f"gradient of input {index} lost; eager computes one")
        if not _close(ours.numpy(), theirs):
            raise CheckFailure("numbers", f"gradient of input {index}: {_describe(ours.numpy(), theirs)}")

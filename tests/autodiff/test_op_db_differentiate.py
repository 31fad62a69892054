"""The op_db sweep through ``differentiate`` (issue 22, acceptance 2).

Every OpInfo with float64 CPU samples (those PyTorch asserts its JIT
differentiates are test_opinfo's), every sample, traced as torch prints it: in ``torch`` mode gradview differentiates exactly the graphs torch's
``_jit_differentiate`` accepts (with torch's bookkeeping lists), and refuses
the others; in ``extended`` mode it differentiates every graph whose ops all
have a gradient, and f and df give eager autograd's outputs and gradients
(``opinfo_check.check_graph``). A graph with an op that has no gradient (an
integer result, PyTorch's "not implemented") is refused in one line naming
the node. Samples that draw random numbers are checked for the torch-mode
verdict only (their values are gradview's own). Where torch's own JIT (its f
and df run by its interpreter) differs from eager autograd, gradview must
lose the same gradient (``_as_torchs_jit``): traced convolutions are typed
``requires_grad=0``, so torch's ``_jit_differentiate`` gives them no gradient,
and neither does gradview in torch mode.
"""

from __future__ import annotations

import functools
import re
import warnings
from typing import Any

import numpy as np
import pytest
import torch

from gradview.autodiff import DifferentiationError, differentiate
from gradview.ir import parse_ir

from ..ops.op_db_cases import draws_random_values, eager, op_samples, processed_call, sweep_ops
from .opinfo_cases import Case, error_line, op_label
from .opinfo_check import CheckFailure, Reference, check_graph, torch_jit_status


@functools.cache
def _ops() -> dict[str, Any]:
    """The sweep's OpInfos but those PyTorch asserts its JIT differentiates: those,
    every sample, are test_opinfo's (with the table of where torch's JIT and eager
    autograd disagree)."""
    return {op_label(op): op for op in sweep_ops() if not op.assert_autodiffed}


def _reference(case: Case, text: str) -> Reference | None:
    """Eager's numbers for the traced graph's inputs, or None for a random sample.

    Where torch's text rounds a tensor constant (``value={0.918939}``), the
    reference is that printed graph run op by op by torch's own interpreter
    (every op recording eager autograd), since the text is what differentiate
    is given."""
    found = eager(case)
    if found.random or found.input_grads is None:
        return None
    if not all(isinstance(o, np.ndarray) for o in found.outputs):
        return None  # a Python result, or a dtype NumPy lacks (gradview refuses it: test_op_db)
    # Each output's gradient in the output's dtype, as eager autograd was given it.
    grads = [g.astype(o.dtype) for g, o in zip(found.output_grads, found.outputs, strict=True)]
    if _ROUNDED_CONSTANT.search(text):
        try:
            return _printed_graph_reference(case, text, grads)
        except RuntimeError:  # torch's parser cannot read {nan} or {inf}: exact values, eager's
            pass
    return Reference(case.input_arrays(), list(found.outputs), grads, list(found.input_grads))


# A tensor constant torch prints with fewer digits than it holds: a fraction
# (``{0.918939}``) or a many-element tensor's values (``value= 0.5400 -0.4600 [ ...``);
# integers such as ``{-1}`` are exact.
_ROUNDED_CONSTANT = re.compile(r"prim::Constant\[value=(?:\{-?[\d.]*(?:\.|e[+-]?)\d*\}|\s+-?[\d.]+\s)")


def _printed_graph_reference(case: Case, text: str, grads: list[np.ndarray]) -> Reference:
    graph = torch._C.parse_ir(text, parse_tensor_constants=True)
    graph.makeMultiOutputIntoTuple()
    fn = torch._C._create_function_from_graph("printed", graph)
    inputs = case.leaf_inputs()
    with torch.jit.optimized_execution(False), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outputs = [o for o in _flat(fn(*inputs))]
    pairs = [(o, torch.from_numpy(g)) for o, g in zip(outputs, grads, strict=True) if o.requires_grad]
    wanted = [t for t in inputs if t.requires_grad]
    found = iter(torch.autograd.grad([p[0] for p in pairs], wanted, [p[1] for p in pairs], allow_unused=True)
                 if pairs and wanted else [])
    input_grads = [
        (None if (g := next(found, None)) is None else g.detach().numpy()) if t.requires_grad else None
        for t in inputs
    ]
    return Reference(case.input_arrays(), [o.detach().numpy() for o in outputs], grads, input_grads)


def _flat(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in _flat(item)]
    return [value]


def _traced(case: Case) -> tuple[str, Any]:
    """torch's traced graph of the call, as text and as torch's own graph object."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(
            lambda *ts: processed_call(case, ts), tuple(case.leaf_inputs()), check_trace=False
        )
    return str(traced.graph), traced.graph


def _torch_verdict(graph: Any) -> tuple[Any | None, str]:
    """torch's Gradient of its own graph, or None and torch's message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch._C._jit_differentiate(graph.copy()), ""
    except RuntimeError as error:
        return None, error_line(error)


def check_sample(case: Case) -> str:
    """Raises CheckFailure where gradview and torch or eager disagree; returns the
    outcome ("torch", "extended", "refused", "random", "untraceable", "sparse")."""
    if any(t.layout != torch.strided for t in case.tensors):
        return "sparse"  # gradview refuses sparse inputs (test_op_db)
    try:
        text, graph = _traced(case)
    except Exception:  # what torch cannot trace, test_op_db lists
        return "untraceable"
    verdict = _torch_verdict(graph)
    ref = _reference(case, text)
    if ref is None or draws_random_values(parse_ir(text)):
        try:
            differentiate(parse_ir(text), mode="torch")
        except DifferentiationError:
            if verdict[0] is not None:
                raise CheckFailure("differentiate", "torch differentiates it, gradview refuses") from None
            return "random"
        if verdict[0] is None:
            raise CheckFailure("differentiate", f"torch refuses it ({verdict[1]}), gradview in torch mode accepts it")
        return "random"
    try:
        return check_graph(text, ref, torch_result=verdict).mode
    except CheckFailure as failure:
        if failure.stage == "differentiate extended" and "DifferentiationError" in failure.message:
            return "refused"
        if failure.stage == "numbers" and verdict[0] is not None and _as_torchs_jit(text, ref, failure):
            return "as torch's JIT"
        raise


# torch's JIT running its own f and df of a traced unbatched transposed convolution.
_TORCH_JIT_CRASH = "fails: strides() called on an undefined Tensor"


def _as_torchs_jit(text: str, ref: Reference, failure: CheckFailure) -> bool:
    """Does torch's own JIT (its f and df run by its interpreter) lose the same
    gradient? Traced convolutions carry ``requires_grad=0``, so
    ``_jit_differentiate`` accepts the graph without differentiating them: run,
    torch's df gives no gradient (batched) or crashes (unbatched, transposed).
    gradview in torch mode gives torch's lists; its GraphExecutor, which
    recomputes the flags, gives eager's gradients (test_op_db)."""
    status = torch_jit_status(text, ref)
    return status == f"differs: {failure.message}" or (status == _TORCH_JIT_CRASH and " lost " in failure.message)


# OpInfo -> (the start of the failure, why): differences found and not fixed, strict
# (each entry must still fail so, else it goes).
KNOWN_DIFFERENCES: dict[str, tuple[str, str]] = {
    "nn.functional.embedding_bag": (
        "[run df] GraphRuntimeError: input 7 (%7) has shape [3] but the graph expects [2]",
        "sum mode with include_last_offset: PyTorch sizes bag_size by the bags when the weight "
        "requires grad (the traced types) and by the offsets when it does not; gradview's kernel "
        "cannot see requires_grad and gives the second, so df's input check refuses it (the "
        "GraphExecutor, which recomputes types, runs the same graph: test_op_db)",
    ),
}


@pytest.mark.parametrize("label", list(_ops()))
def test_differentiate_follows_torch_and_eager(label: str) -> None:
    op = _ops()[label]
    failures = []
    known = 0
    for index, sample in enumerate(op_samples(op)):
        case = Case(op, index, sample)
        try:
            check_sample(case)
        except CheckFailure as failure:
            if label in KNOWN_DIFFERENCES and str(failure).startswith(KNOWN_DIFFERENCES[label][0]):
                known += 1
                continue
            failures.append(f"{case.case_id}: {failure}")
    assert not failures, f"{len(failures)} samples:\n" + "\n".join(failures[:8])
    if label in KNOWN_DIFFERENCES:
        assert known, f"{label} no longer differs: remove it from KNOWN_DIFFERENCES"

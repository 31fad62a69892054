"""The explanation of each step of a trace: the docstrings of the code that ran it.

A step's name is looked up (in any spelling, see ``normalize_pass_name``)
among the graph passes of ``gradview.ir.passes.PASSES``, the executor's own
phases, the autodiff passes and ``differentiate``'s named steps. The text is
the function's docstring followed by its module's (which usually explains
the idea with an example). A name used twice, like ``EliminateDeadCode``
(a graph pass, and a step of differentiate on the reverse block), gets both
texts, each under a heading. The text is rewritten for people learning
autodiff (doc_text.for_people: no return values or argument notes, Markdown).
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from functools import cache
from typing import Any

from gradview.autodiff import (
    create_autodiff_subgraphs,
    differentiate,
    inline_autodiff_subgraphs,
    specialize_autograd_zero,
)
from gradview.autodiff.lambda_lift import (
    lambda_lift_reverse,
    pack_return_values_into_tuple,
    update_requires_grad,
)
from gradview.autodiff.optimize import OPTIMIZE_STEPS
from gradview.autodiff.reverse import add_reverse_inline
from gradview.ir.passes import PASSES, eliminate_dead_code
from gradview.ir.passes.pipelines import (
    run_nondiff_optimization,
    run_optimization,
    run_required_passes,
)
from gradview.loaders.compiled_trace import (
    JOINT_DOC,
    JOINT_STEP,
    PARTITION_DOC,
    PARTITION_STEP,
    POST_GRAD_DOC,
    POST_GRAD_STEP,
)
from gradview.runtime import normalize_pass_name, pack_gradient, specialize_types

from .doc_text import for_people
from .executor_phase_docs import ALIASES, PHASE_DOCS

__all__ = ["pass_doc"]

# Steps that are not a function: what the viewer's session records itself.
INPUT_DOC = """The graph as it was loaded, before any pass ran.

Every later step shows the same graph after one more pass (or one more step
of differentiate), so stepping forward from here replays the whole
compilation. Nodes keep their ids while they live, which is how the viewer
knows what each step added, removed or rewired."""

_DIFFERENTIATE = "In differentiate (on the forward graph and the reverse block)"
# Names with a DifferentiableGraph's number (and a graph after "in"): one doc each.
_DIFF_NODE = re.compile(r"^(Optimizing diff node|Could not guardDifferentiableGraph) \d+(?: in)?$")


def _sources() -> dict[str, list[tuple[str | None, Callable[..., Any] | str]]]:
    """Normalized step name -> (heading, function or text) in the order shown."""
    table: dict[str, list[tuple[str | None, Callable[..., Any] | str]]] = {}

    def add(name: str, source: Callable[..., Any] | str, heading: str | None = None) -> None:
        table.setdefault(normalize_pass_name(name), []).append((heading, source))

    add("Input", INPUT_DOC)
    for name, info in PASSES.items():
        add(name, info.run)
    add("specializeTypes", specialize_types)
    add("specializeAutogradZero", specialize_autograd_zero)
    add("CreateAutodiffSubgraphs", create_autodiff_subgraphs)
    add("InlineAutodiffSubgraphs", inline_autodiff_subgraphs)
    add("packGradient", pack_gradient)
    add("addReverseInline", add_reverse_inline)
    for name, run in OPTIMIZE_STEPS:
        add(name, run, _DIFFERENTIATE if normalize_pass_name(name) in table else None)
    add("EliminateDeadCode(f)", eliminate_dead_code)
    add("lambdaLiftReverse", lambda_lift_reverse)
    add("packReturnValuesIntoTuple", pack_return_values_into_tuple)
    add("UpdateDifferentiableGraphRequiresGrad", update_requires_grad)
    add(JOINT_STEP, JOINT_DOC)
    add(PARTITION_STEP, PARTITION_DOC)
    add(POST_GRAD_STEP, POST_GRAD_DOC)
    # The names PyTorch's JIT logs use: its pipelines, its executors' phases.
    add("differentiate", differentiate)
    add("runRequiredPasses", run_required_passes)
    add("runOptimization", run_optimization)
    add("runNondiffOptimization", run_nondiff_optimization)
    for name, text in PHASE_DOCS.items():
        add(name, text)
    return table


def _text(source: Callable[..., Any] | str) -> str:
    if isinstance(source, str):
        return for_people(source)  # paragraphs joined, as the docstrings' are
    try:
        parameters = list(inspect.signature(source).parameters)
    except (TypeError, ValueError):
        parameters = []
    parts = [for_people(inspect.cleandoc(source.__doc__ or ""), parameters)]
    module = sys.modules.get(source.__module__)
    if module is not None and module.__doc__:
        parts.append(for_people(inspect.cleandoc(module.__doc__), parameters))
    return "\n\n".join(part for part in parts if part)


@cache
def _docs() -> dict[str, str]:
    docs: dict[str, str] = {}
    for name, sources in _sources().items():
        texts = []
        for heading, source in sources:
            text = _text(source)
            if text and text not in texts:
                texts.append(f"{heading}:\n\n{text}" if heading else text)
        docs[name] = "\n\n".join(texts)
    return docs


def pass_doc(pass_name: str) -> str:
    """The explanation of the pass or step called ``pass_name``, as Markdown ('' if unknown).
    A JIT log's names count too (``inlining``, ``Optimizing diff node 0``)."""
    name = ALIASES.get(pass_name, pass_name)
    name = _DIFF_NODE.sub(r"\1", name)
    return _docs().get(normalize_pass_name(name), "")

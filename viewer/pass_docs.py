"""The explanation of each step of a trace: the docstrings of the code that ran it.

A step's name is looked up (in any spelling, see ``normalize_pass_name``, and
a JIT log's, see ``STEP_ALIASES``) in the runtime's pipeline table
(``gradview.runtime.PIPELINE_TABLE``: the graph passes, the executor's phases,
the autodiff passes and ``differentiate``'s named steps, PyTorch's executor
phases) and among the steps of AOTAutograd's logs. The text is the function's
docstring followed by its module's (which usually explains the idea with an
example). A name used twice, like ``EliminateDeadCode`` (a graph pass, and a
step of differentiate on the reverse block), gets both texts, each under a
heading. The text is rewritten for people learning autodiff
(doc_text.for_people: no return values or argument notes, Markdown).
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from functools import cache
from typing import Any

from gradview.loaders.compiled_trace import (
    JOINT_DOC,
    JOINT_STEP,
    PARTITION_DOC,
    PARTITION_STEP,
    POST_GRAD_DOC,
    POST_GRAD_STEP,
)
from gradview.runtime import PIPELINE_TABLE, STEP_ALIASES, Phase, normalize_pass_name

from .doc_text import for_people

__all__ = ["pass_doc"]

_DIFFERENTIATE = "In differentiate (on the forward graph and the reverse block)"
# Names with a DifferentiableGraph's number (and a graph after "in"): one doc each.
_DIFF_NODE = re.compile(r"^(Optimizing diff node|Could not guardDifferentiableGraph) \d+(?: in)?$")


def _sources() -> dict[str, list[tuple[str | None, Callable[..., Any] | str]]]:
    """Normalized step name -> (heading, function or text) in the order shown."""
    table: dict[str, list[tuple[str | None, Callable[..., Any] | str]]] = {}

    def add(name: str, source: Callable[..., Any] | str, heading: str | None = None) -> None:
        table.setdefault(normalize_pass_name(name), []).append((heading, source))

    for info in PIPELINE_TABLE:
        # A differentiate step named as a graph pass is told apart by a heading.
        shared = info.phase is Phase.DIFFERENTIATE and normalize_pass_name(info.name) in table
        add(info.name, info.run if info.run is not None else info.text, _DIFFERENTIATE if shared else None)
    add(JOINT_STEP, JOINT_DOC)
    add(PARTITION_STEP, PARTITION_DOC)
    add(POST_GRAD_STEP, POST_GRAD_DOC)
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
    name = STEP_ALIASES.get(pass_name, pass_name)
    name = _DIFF_NODE.sub(r"\1", name)
    return _docs().get(normalize_pass_name(name), "")

"""The pass docs the viewer shows are written for people: no contract notes, Markdown."""

from __future__ import annotations

import re

import pytest

from gradview.viewer.doc_text import API_NOTE_PATTERNS, for_people
from gradview.viewer.pass_docs import _docs, pass_doc


def test_every_shown_doc_is_free_of_api_notes() -> None:
    docs = _docs()
    assert len(docs) > 25  # every graph pass, the executor's phases, differentiate's steps
    for name, text in docs.items():
        assert text.strip(), name
        for pattern in API_NOTE_PATTERNS:
            found = pattern.search(text)
            assert found is None, f"{name}: {text[max(0, found.start() - 60) : found.end() + 40]!r}"
        prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # outside code fences
        assert "``" not in prose, name  # reStructuredText code spans became Markdown
        assert "excluded=" not in text, name


def test_contract_clauses_go_and_the_description_stays() -> None:
    text = "Fold nodes whose inputs are all constants; True if anything was folded."
    assert for_people(text, ["graph"]) == "Fold nodes whose inputs are all constants."
    text = "Inline every call.\n\nReturns True if any call was inlined. Raises InlineError first."
    assert for_people(text, ["graph"]) == "Inline every call."


def test_sentences_about_other_arguments_go_and_graph_reads_the_graph() -> None:
    text = (
        "Group the nodes of ``graph``, in place; returns the groups kept (at least"
        " ``threshold`` ops).\n\nPass ``excluded={}`` to learn why; tests use it."
    )
    assert for_people(text, ["graph", "threshold", "excluded"]) == (
        "Group the nodes of the graph, in place."
    )


def test_roles_code_blocks_headings_and_lists_become_markdown() -> None:
    text = (
        "Uses :func:`gradview.ir.passes.inline` and ``x.t()``.\n\n"
        "What it is\n----------\nA heading.\n\n"
        "Before::\n\n    %a = aten::t(%x)\n    %b = aten::t(%a)\n\n"
        "1. *First.* One step. 2 is next.\n2. *Second.* Another."
    )
    assert for_people(text) == (
        "Uses `inline` and `x.t()`.\n\n"
        "### What it is\n\nA heading.\n\n"
        "Before:\n\n```\n%a = aten::t(%x)\n%b = aten::t(%a)\n```\n\n"
        "1. *First.* One step. 2 is next.\n2. *Second.* Another."
    )


@pytest.mark.parametrize("name", ["ConstantPooling", "CreateAutodiffSubgraphs", "CheckInplace"])
def test_known_passes_open_with_what_they_do(name: str) -> None:
    first = pass_doc(name).split("\n", 1)[0]
    assert len(first) > 30 and "True" not in first and "Raise" not in first

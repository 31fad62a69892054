"""The pass docs the viewer shows are written for people: no contract notes, Markdown."""

from __future__ import annotations

import asyncio
import re

import pytest
from rich.text import Text

from gradview.viewer.app import GradviewApp
from gradview.viewer.doc_text import API_NOTE_PATTERNS, LIST_ITEM, for_people
from gradview.viewer.formatting import _CODE_SPAN, _HEADING, doc_lines, inline_markdown, wrap_text
from gradview.viewer.pass_docs import _docs, pass_doc
from gradview.viewer.session import Session
from gradview.viewer.text_pane import TextPane


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


# -- the docs pane: Markdown rendered for people -------------------------------------------


def _plain(line: object) -> str:
    return line.plain if isinstance(line, Text) else line[0]  # type: ignore[index,attr-defined]


def _word_at(text: str, position: int) -> str:
    start = text.rfind(" ", 0, position) + 1
    end = text.find(" ", position)
    return text[start : len(text) if end < 0 else end]


MARKUP = ("###", "**", "`", ":func:", ":class:")


def test_doc_lines_render_headings_code_emphasis_and_lists() -> None:
    doc = (
        "Runs `prim::DifferentiableGraph` nodes *once* and **only** once.\n\n"
        "### Why it matters\n\n"
        "* first item, long enough to wrap over the pane's width at least once\n"
        "2. second\n\n"
        "```\n%a = aten::t(%x)\n```"
    )
    lines = doc_lines("Pass", doc, 30)
    shown = [_plain(line) for line in lines]
    assert not any(mark in line for line in shown for mark in MARKUP), shown
    styled = [line for line in lines if isinstance(line, Text)]
    spans = {
        (line.plain[span.start : span.end], str(span.style))
        for line in styled
        for span in line.spans
    }
    assert ("prim::DifferentiableGraph", str(_CODE_SPAN)) in spans
    assert ("once", "italic") in spans and ("only", "bold") in spans
    heading = next(line for line in styled if line.plain == "Why it matters")
    assert heading.style == _HEADING or "bold" in str(heading.style)
    assert shown.count("  %a = aten::t(%x)") == 1  # a code block as it is, indented
    bullet = shown.index(next(s for s in shown if s.startswith("• first")))
    assert shown[bullet + 1].startswith("  ") and shown[bullet + 1].strip()  # hanging indent
    assert any(s.startswith("2. second") for s in shown)


@pytest.mark.parametrize("width", [20, 33, 47, 80])
def test_doc_lines_wrap_at_word_boundaries_and_keep_code_spans_whole(width: int) -> None:
    checked = 0
    for name, doc in _docs().items():
        for line in doc_lines(name, doc, width)[2:]:  # below the pass's name (one line, scrolled)
            assert isinstance(line, tuple) or line.cell_len <= width, (name, line)
        prose = re.sub(r"```.*?```", "", doc, flags=re.DOTALL)
        for raw in prose.splitlines():
            if not raw.strip() or raw.startswith("#") or LIST_ITEM.match(raw):
                continue
            text = inline_markdown(raw.strip())
            wrapped = [line.plain for line in wrap_text(text, width)]
            if all(len(word) <= width for word in text.plain.split()):
                # Broken at spaces only: the lines joined give the paragraph back.
                assert " ".join(wrapped) == " ".join(text.plain.split()), (name, wrapped)
                checked += 1
            for span in text.spans:
                code = text.plain[span.start : span.end]
                if span.style == _CODE_SPAN and len(code) <= width:
                    assert any(code in line for line in wrapped), (name, code, wrapped)
    assert checked > 50


def test_the_docs_pane_shows_every_pass_of_the_example_without_markup(mlp_session: Session) -> None:
    """Step through each pass of the bundled example's trace: the Inspect tab's docs
    read as text (no Markdown marks, no Sphinx roles), the pass's name on top."""

    async def run() -> list[tuple[str, str]]:
        app = GradviewApp(mlp_session)
        shown: list[tuple[str, str]] = []
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            seen: set[str] = set()
            for step in mlp_session.trace.steps:
                if step.pass_name in seen:
                    continue
                seen.add(step.pass_name)
                app.show_step(step.index)
                await pilot.pause()
                shown.append((step.pass_name, app.query_one("#passdoc", TextPane).plain))
        return shown

    shown = asyncio.run(run())
    assert len(shown) > 20
    for name, text in shown:
        assert name in text and len(text) > len(name) + 20, (name, text)
        for mark in MARKUP:
            assert mark not in text, (name, mark, text)


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_the_docs_pane_paints_styles_over_the_themes_background(mlp_session: Session, theme: str) -> None:
    """Headings bold, code spans coloured, and every cell on the pane's own background
    (the light theme's pane is light, not the terminal's default)."""
    step = next(s.index for s in mlp_session.trace.steps if s.pass_name == "CreateAutodiffSubgraphs")

    async def run() -> None:
        app = GradviewApp(mlp_session, theme=theme)
        async with app.run_test(size=(140, 50)) as pilot:
            await pilot.pause()
            app.show_step(step)
            await pilot.pause()
            pane = app.query_one("#passdoc", TextPane)
            background = pane.rich_style.bgcolor
            assert background is not None
            rows = [list(pane.render_line(y)) for y in range(pane.size.height)]
            cells = [segment for row in rows for segment in row]
            assert all(s.style is not None and s.style.bgcolor == background for s in cells)
            heading = next(row for row in rows if "".join(s.text for s in row).startswith("What a"))
            assert all(s.style.bold for s in heading if s.text.strip())  # type: ignore[union-attr]
            code = [s for s in cells if s.text == "prim::DifferentiableGraph"]
            assert code and all(s.style.color == _CODE_SPAN.color for s in code)  # type: ignore[union-attr]

    asyncio.run(run())

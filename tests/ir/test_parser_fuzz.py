"""Fuzz ``parse_ir`` with mutated real IR: it returns a Graph or raises IRParseError.

The seeds are the conformance texts in ``shared/conformance`` (the round-trip
graphs and the cases, with their leading ``# %name = <json>`` lines stripped).
Each example applies a few random mutations (delete, duplicate, swap tokens,
insert punctuation, truncate) and checks that

* no exception other than IRParseError escapes (a ValueError subclass with a
  ``line:col`` inside the text),
* nothing hangs (``signal.alarm`` guard, not a speed assertion),
* a text that still parses prints to IR that parses back and prints the same.
"""

from __future__ import annotations

import contextlib
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradview.ir import Graph, IRParseError, parse_ir

from .corpus import CONFORMANCE, corpus_paths, hang_guard, read_graph_text

CORPUS = [read_graph_text(path) for path in corpus_paths()]
pytestmark = pytest.mark.skipif(not CORPUS, reason=f"no conformance corpus under {CONFORMANCE}")

_TOKEN = re.compile(r"%[\w.]+|[A-Za-z_][\w:.]*|\d+|->|\S")
_INSERT_ALPHABET = "()[]{}%:=,->#\"'\\\n\t <>?*.aAbTf019_\x00\r²١é"
# Pieces of IR syntax, so mutations also build plausible-but-wrong structure.
_SNIPPETS = [
    "block0():\n", "block1(%p : int):\n", "-> (%x)\n", "-> ()\n", "return (", "prim::If(", "prim::Loop(",
    "with prim::DifferentiableGraph_0 = graph(%a : Tensor):\n  return (%a)\n", "prim::DifferentiableGraph_0",
    "%0", "%01", "%x.1", "Tensor", "int[]", "Float(2, 3, strides=[3, 1])", "Dict(str, int)", "[Undefined]",
    "[value=1]", "[value=\"s\\377\"]", " 1  2 [ CPUFloatType{2} ]", "<Tensor>", "None", "inf", "-",
]
HANG_GUARD_S = 10  # generous: one parse takes milliseconds; this only catches hangs


def _span(draw, text: str) -> tuple[int, int]:
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, min(len(text), start + 40)))
    return start, end


def _mutate(draw, text: str) -> str:
    op = draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "truncate", "replace_char"]))
    if op == "delete":
        start, end = _span(draw, text)
        return text[:start] + text[end:]
    if op == "duplicate":
        start, end = _span(draw, text)
        at = draw(st.integers(0, len(text)))
        return text[:at] + text[start:end] + text[at:]
    if op == "swap":
        tokens = list(_TOKEN.finditer(text))
        if len(tokens) < 2:
            return text
        a = draw(st.integers(0, len(tokens) - 2))
        b = draw(st.integers(a + 1, min(len(tokens) - 1, a + 30)))
        ta, tb = tokens[a], tokens[b]
        return (text[: ta.start()] + tb.group() + text[ta.end(): tb.start()] + ta.group()
                + text[tb.end():])
    if op == "insert":
        at = draw(st.integers(0, len(text)))
        junk = draw(st.text(alphabet=_INSERT_ALPHABET, min_size=1, max_size=6) | st.sampled_from(_SNIPPETS))
        return text[:at] + junk + text[at:]
    if op == "replace_char":
        if not text:
            return text
        at = draw(st.integers(0, len(text) - 1))
        ch = draw(st.sampled_from(_INSERT_ALPHABET))
        return text[:at] + ch + text[at + 1:]
    cut = draw(st.integers(0, len(text)))
    return text[:cut]


@st.composite
def mutated_ir(draw) -> str:
    text = draw(st.sampled_from(CORPUS))
    for _ in range(draw(st.integers(1, 3))):
        text = _mutate(draw, text)
    return text


def check_parse(text: str) -> Graph | None:
    """Parse ``text``; only a Graph or an IRParseError with a sane position is allowed."""
    with hang_guard(HANG_GUARD_S):
        try:
            graph = parse_ir(text)
        except IRParseError as err:
            assert type(err) is IRParseError
            lines = text.split("\n")
            assert 1 <= err.line <= len(lines), err.summary
            assert 1 <= err.column <= len(lines[err.line - 1]) + 1, err.summary
            assert err.message and "\n" not in err.summary
            # The parser turns its own internal errors into "cannot parse here (...)":
            # that is still an IRParseError, but it means a bug the fuzzer found.
            assert "cannot parse" not in err.message, err.summary
            assert str(err).startswith(f"{err.line}:{err.column}: ")
            return None
    assert isinstance(graph, Graph)
    printed = str(graph)
    with hang_guard(HANG_GUARD_S):
        again = parse_ir(printed)
    assert str(again) == printed, "printing is not idempotent after a re-parse"
    return graph


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_corpus_seeds_parse_and_reprint(index: int) -> None:
    assert check_parse(CORPUS[index]) is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_ir())
def test_mutated_ir_parses_or_raises_parse_error(text: str) -> None:
    check_parse(text)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=_INSERT_ALPHABET + "graph return block0 aten::add prim::If", max_size=200))
def test_random_text_parses_or_raises_parse_error(text: str) -> None:
    check_parse(text)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_parse_or_raise_parse_error(data: bytes) -> None:
    with hang_guard(HANG_GUARD_S):
        try:
            parse_ir(data)
        except IRParseError as err:
            assert type(err) is IRParseError
            assert err.line >= 1 and err.column >= 1
        with contextlib.suppress(IRParseError):
            parse_ir(data.decode("latin-1"))


# Odd texts the fuzzer once broke: they parse, and their print reads back the same.
ODD_BUT_VALID = [
    pytest.param("graph(%01 : int, %1 : int):\n  return (%01, %1)\n", id="leading-zero-number"),
    pytest.param("graph(%² : int, %١ : int):\n  return (%², %١)\n", id="unicode-digit-names"),
    pytest.param("graph(%x : int" + "?" * 100 + "):\n  return (%x)\n", id="100-optional-suffixes"),
    pytest.param("graph(%x : int" + "[]" * 100 + "):\n  return (%x)\n", id="100-list-suffixes"),
    pytest.param('graph():\n  %s : str = prim::Constant[value="\\303\\251\\n\\\\"]()\n  return (%s)\n', id="escapes"),
]


@pytest.mark.parametrize("text", ODD_BUT_VALID)
def test_odd_but_valid_text_reprints_idempotently(text: str) -> None:
    graph = check_parse(text)
    assert graph is not None
    names = [value.debug_name() for value in graph.inputs()]
    assert len(set(names)) == len(names)

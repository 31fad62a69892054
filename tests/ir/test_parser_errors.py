"""Malformed IR text: one clear IRParseError with ``line:col``, never a traceback.

Each case gives the text, the line and column of the error (counted by hand:
both 1-based, the column in characters) and a regular expression the message
must contain. Speed is not asserted here (``benchmarks/parse_errors.py``
times every case); ``signal.alarm`` only turns a hang into a failure.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

import pytest

from gradview.ir import IRParseError, parse_ir
from gradview.ir.parser import MAX_BLOCK_NESTING

from .corpus import hang_guard

HANG_GUARD_S = 10  # a hang guard, not a speed assertion: each case takes well under a second
MB10 = 10_000_000

# A real graph (shared/conformance/roundtrip/script_loop_sum.ir), cut short below.
LOOP_SUM = """\
graph(%x.1 : Tensor,
      %n.1 : int):
  %18 : int = prim::Constant[value=1]()
  %12 : bool = prim::Constant[value=1]() # public_models.py:21:4
  %3 : NoneType = prim::Constant()
  %acc.1 : Tensor = aten::zeros_like(%x.1, %3, %3, %3, %3, %3) # public_models.py:20:10
  %acc : Tensor = prim::Loop(%n.1, %12, %acc.1) # public_models.py:21:4
    block0(%i.1 : int, %acc.11 : Tensor):
      %17 : Tensor = aten::mul(%x.1, %i.1) # public_models.py:22:20
      %acc.5 : Tensor = aten::add(%acc.11, %17, %18) # public_models.py:22:14
      -> (%12, %acc.5)
  return (%acc)
"""

H = "graph(%x : Tensor):\n"  # line 1 of most cases
G = "graph():\n"


def cut(text: str, marker: str, occurrence: int = 1) -> str:
    """``text`` up to and including the ``occurrence``-th ``marker``."""
    end = -1
    for _ in range(occurrence):
        end = text.index(marker, end + 1)
    return text[: end + len(marker)]


def if_graph(block0: str, block1: str | None, ret: str = "%y", head: str = "%y : int = prim::If(%c)") -> str:
    """``graph(%c : bool)`` with one prim::If: line 2 is the If, line 3 ``block0():``."""
    text = f"graph(%c : bool):\n  {head}\n    block0():\n{block0}"
    if block1 is not None:
        text += f"    block1():\n{block1}"
    return text + f"  return ({ret})\n"


ONE = "      %a : int = prim::Constant[value=1]()\n      -> (%a)\n"  # 2 lines: define %a, return it


def loop_graph(params: str, results: str, outputs: str = "%r : Tensor") -> str:
    """A prim::Loop on line 3 with one carried value (%x), whose body is ``params`` -> ``results``."""
    return (
        "graph(%n : int, %x : Tensor):\n"
        "  %t : bool = prim::Constant[value=1]()\n"
        f"  {outputs} = prim::Loop(%n, %t, %x)\n"
        f"    block0({params}):\n"
        f"      -> ({results})\n"
        "  return (%r)\n"
    )


def deep_blocks(depth: int) -> str:
    """prim::If nodes nested ``depth`` deep, each opening its block0 (never closed).

    Not indented (the parser reads blocks by their ``blockN``/``->``, not by
    indentation), so 10,000 levels stay a small text.
    """
    lines = ["graph(%c : bool):\n"]
    for i in range(depth):
        lines.append(f"%y{i} : bool = prim::If(%c)\nblock0():\n")
    return "".join(lines)


def latin1_junk(n: int, seed: int = 0) -> str:
    """``n`` random bytes read as latin-1 (all code points 0-255: NULs, controls, quotes...)."""
    rng = random.Random(seed)
    return bytes(rng.randrange(256) for _ in range(n)).decode("latin-1")


# (text, line, column, regex the message must contain)
CASES = [
    # -- unknown type -----------------------------------------------------------
    pytest.param("graph(%x : Floof):\n  return (%x)\n", 1, 12, "unknown type 'Floof'", id="unknown-type-input"),
    pytest.param(H + "  %y : Tensnor = aten::relu(%x)\n  return (%y)\n", 2, 8, "unknown type 'Tensnor'",
                 id="unknown-type-output"),
    pytest.param("graph(%x : Dict(str, Tensr)):\n  return (%x)\n", 1, 22, "unknown type 'Tensr'",
                 id="unknown-type-inside-dict"),
    pytest.param("graph(%x : Optional(int, int)):\n  return (%x)\n", 1, 12, r"Optional\(\.\.\.\) takes one type",
                 id="optional-two-args"),
    # -- undefined value ----------------------------------------------------------
    pytest.param(H + "  %y : Tensor = aten::relu(%z)\n  return (%y)\n", 2, 28, "undefined value %z",
                 id="undefined-input"),
    pytest.param(H + "  return (%q)\n", 2, 11, "undefined value %q", id="undefined-return"),
    pytest.param(H + "  %y : Tensor = aten::relu(%z)\n  %z : Tensor = aten::neg(%x)\n  return (%y)\n", 2, 28,
                 "undefined value %z", id="use-before-definition"),
    pytest.param(H + "  %y : Tensor = aten::relu(%y)\n  return (%y)\n", 2, 28, "undefined value %y",
                 id="node-uses-own-output"),
    # -- duplicate definition -------------------------------------------------------
    pytest.param(H + "  %x : Tensor = aten::relu(%x)\n  return (%x)\n", 2, 3,
                 r"value %x is defined twice \(first on line 1\)", id="duplicate-output-of-input"),
    pytest.param("graph(%x : Tensor, %x : int):\n  return (%x)\n", 1, 20, "value %x is defined twice",
                 id="duplicate-graph-input"),
    pytest.param("graph(%t : (int, int)):\n  %a : int, %a : int = prim::TupleUnpack(%t)\n  return (%a)\n", 2, 13,
                 r"defined twice \(first on line 2\)", id="duplicate-in-one-node"),
    pytest.param(if_graph(ONE, ONE), 7, 7, r"value %a is defined twice \(first on line 4\)",
                 id="duplicate-across-sibling-blocks"),
    pytest.param(loop_graph("%x : int, %xi : Tensor", "%t, %xi"), 4, 12, "value %x is defined twice",
                 id="duplicate-block-param"),
    # -- unbalanced parentheses -------------------------------------------------------
    pytest.param(H + "  %y : Tensor = aten::relu(%x))\n  return (%y)\n", 2, 31,
                 "expected a value name like %x but found '\\)'", id="paren-too-many-inputs"),
    pytest.param(H + "  %y : Tensor = aten::relu(%x\n  return (%y)\n", 3, 3,
                 r"',' or '\)' in the inputs of aten::relu but found 'return'", id="paren-too-few-inputs"),
    pytest.param("graph(%x : Tensor:\n  return (%x)\n", 1, 18, r"',' or '\)' in the graph's inputs",
                 id="paren-too-few-header"),
    pytest.param("graph(%x : Tensor)):\n  return (%x)\n", 1, 19, "':' after the graph's inputs",
                 id="paren-too-many-header"),
    pytest.param("graph(%x : Dict(str, List(int)):\n  return (%x)\n", 1, 32, r"',' or '\)' in the graph's inputs",
                 id="paren-too-few-type"),
    pytest.param("graph(%x : Dict(str, List(int)))):\n  return (%x)\n", 1, 33, "':' after the graph's inputs",
                 id="paren-too-many-type"),
    pytest.param("graph(%x : (int, (int, int):\n  return (%x)\n", 1, 28, r"',' or '\)' in a tuple type",
                 id="paren-too-few-tuple-type"),
    pytest.param(H + "  return (%x\n", 3, 1, r"',' or '\)' in the graph's outputs but the input ends here",
                 id="paren-too-few-return"),
    pytest.param(H + "  return (%x))\n", 2, 14, r"unexpected '\)' after the graph's return", id="paren-too-many-return"),
    pytest.param(G + "  %c : int[] = prim::Constant[value=[1, 2]()\n  return (%c)\n", 2, 43,
                 r"',' or '\]' in the attribute list but found '\('", id="bracket-too-few-attribute"),
    # -- wrong block arity -------------------------------------------------------------
    pytest.param(if_graph(ONE, None), 2, 3, r"prim::If needs two blocks \(then, else\), got 1", id="if-one-block"),
    pytest.param(if_graph(ONE, "      -> ()\n"), 2, 3, "block1 of prim::If returns 0 values but the node has 1 outputs",
                 id="if-block-output-count"),
    pytest.param(if_graph(ONE, ONE.replace("%a", "%b"), head="%y : int = prim::If(%c, %c)"), 2, 3,
                 "prim::If takes one condition input, got 2", id="if-two-conditions"),
    pytest.param(if_graph(ONE, "      -> (%p)\n").replace("block1()", "block1(%p : int)"), 2, 3,
                 "block1 of prim::If takes no parameters", id="if-block-params"),
    pytest.param(loop_graph("%i : int", "%t, %x"), 3, 3,
                 r"prim::Loop body takes the iteration number and 1 carried values \(2 parameters\), got 1",
                 id="loop-too-few-params"),
    pytest.param(loop_graph("%i : int, %xi : Tensor", "%t"), 3, 3,
                 r"prim::Loop body returns the condition and 1 carried values \(2 results\), got 1",
                 id="loop-too-few-results"),
    pytest.param(loop_graph("%i : int, %xi : Tensor", "%t, %xi", "%r : Tensor, %s : Tensor"), 3, 3,
                 "prim::Loop has 1 carried values but 2 outputs", id="loop-too-many-outputs"),
    pytest.param(loop_graph("%i : int, %xi : Tensor", "%t, %xi").replace(
        "  return", "    block1(%j : int, %xj : Tensor):\n      -> (%t, %xj)\n  return"), 3, 3,
                 "prim::Loop needs exactly one block, got 2", id="loop-two-blocks"),
    pytest.param(H + "  %y : Tensor = aten::relu(%x)\n    block0():\n      -> ()\n  return (%y)\n", 2, 3,
                 "aten::relu is not a control-flow node but has 1 blocks", id="block-on-plain-node"),
    pytest.param(H + "  block0():\n      -> ()\n  return (%x)\n", 2, 3, "block0 must follow the node that owns it",
                 id="block-without-owner"),
    pytest.param(deep_blocks(MAX_BLOCK_NESTING + 1), 2 * MAX_BLOCK_NESTING + 3, 1,
                 f"blocks nest more than {MAX_BLOCK_NESTING} levels deep", id="blocks-too-deep"),
    # -- values out of scope -------------------------------------------------------------
    pytest.param(if_graph(ONE, "      -> (%a)\n"), 7, 11,
                 r"value %a is used outside the block that defines it \(line 4\)", id="use-in-sibling-block"),
    pytest.param(if_graph(ONE, ONE.replace("%a", "%b"), ret="%a"), 9, 11, "value %a is used outside the block",
                 id="use-after-block"),
    pytest.param(if_graph("      -> (%y)\n", "      -> (%c)\n", head="%y : bool = prim::If(%c)"), 4, 11,
                 r"value %y is used inside a block of the node that defines it \(line 2\)", id="use-own-output-in-block"),
    # -- structure -----------------------------------------------------------------------------
    pytest.param(H + "  -> (%x)\n", 2, 3, "'->' outside of a block", id="arrow-at-top-level"),
    pytest.param(if_graph("      return (%c)\n", None), 4, 7, "'return' inside a block", id="return-inside-block"),
    pytest.param(H + "  return (%x)\nfoo\n", 3, 1, "unexpected 'foo' after the graph's return", id="junk-after-return"),
    pytest.param(H + "  return (%x)\nwith prim::DifferentiableGraph_0 = graph():\n  return ()\n", 3, 1,
                 "section 'prim::DifferentiableGraph_0' matches no node", id="with-matches-no-node"),
    pytest.param(H + "  %y : Tensor = prim::DifferentiableGraph_0(%x)\n  return (%y)\n"
                 "with prim::DifferentiableGraph_0 graph(%a : Tensor):\n  return (%a)\n", 4, 34,
                 "'=' after with prim::DifferentiableGraph_0", id="with-missing-equals"),
    pytest.param("", 1, 1, "expected 'graph\\(' at the start, found the end of the input", id="empty-input"),
    pytest.param("  \n\n", 3, 1, "expected 'graph\\(' at the start", id="whitespace-only"),
    pytest.param("(%x : Tensor):\n  return (%x)\n", 1, 1, "expected 'graph\\(' at the start, found '\\('",
                 id="missing-graph"),
    pytest.param("grahp(%x : Tensor):\n  return (%x)\n", 1, 1, "expected 'graph\\(' at the start, found 'grahp'",
                 id="misspelled-graph"),
    pytest.param("graph(%x : Tensor)\n  return (%x)\n", 2, 3, "':' after the graph's inputs", id="header-missing-colon"),
    pytest.param(H + "  %y : Tensor aten::relu(%x)\n  return (%y)\n", 2, 15, "'=' after the node's outputs",
                 id="node-missing-equals"),
    pytest.param(H + "  %y : Tensor = relu(%x)\n  return (%y)\n", 2, 17,
                 "expected an operator name such as aten::mul, found 'relu'", id="kind-without-namespace"),
    # -- tensor types --------------------------------------------------------------------------
    pytest.param("graph(%x : Float(3, 4, strides=[1])):\n  return (%x)\n", 1, 24, "1 strides given for 2 dimensions",
                 id="strides-count"),
    pytest.param("graph(%x : Float(3, requires_grad=7)):\n  return (%x)\n", 1, 35,
                 "requires_grad must be 0 or 1, not '7'", id="requires-grad-7"),
    pytest.param("graph(%x : Float(3, strides=[1], 4)):\n  return (%x)\n", 1, 34,
                 "sizes must come before strides", id="size-after-strides"),
    pytest.param("graph(%x : Float(3, device=7)):\n  return (%x)\n", 1, 28, "expected a device such as cpu",
                 id="bad-device"),
    pytest.param("graph(%x : Float(3, grad=1)):\n  return (%x)\n", 1, 21, "unexpected 'grad' in a tensor type",
                 id="unknown-tensor-field"),
    # torch's parser refuses these too ("expected number but found '-'").
    pytest.param("graph(%x : Float(3, -1)):\n  return (%x)\n", 1, 21, r"a tensor size cannot be negative \(-1\)",
                 id="negative-size"),
    pytest.param("graph(%x : Tensor(*, -4, strides=[1, 1])):\n  return (%x)\n", 1, 22,
                 "a tensor size cannot be negative", id="negative-size-no-dtype"),
    # torch: "out of bounds access at 1 to schema->returns()".
    pytest.param(H + "  %a : Tensor, %b : Tensor = aten::relu(%x)\n  return (%a)\n", 2, 16,
                 r"aten::relu returns 1 value, not 2 \(schema: aten::relu\(Tensor self\) -> Tensor\)",
                 id="more-outputs-than-schema"),
    pytest.param(H + "  %a : Tensor, %b : Tensor, %c : Tensor = aten::max(%x)\n  return (%a)\n", 2, 29,
                 "aten::max returns 2 values, not 3", id="more-outputs-than-any-overload"),
    # -- attributes ----------------------------------------------------------------------------
    pytest.param(G + "  %c : int = prim::Constant[]()\n  return (%c)\n", 2, 29, "expected an attribute name, found '\\]'",
                 id="empty-attribute-list"),
    pytest.param(G + "  %c : int = prim::Constant[value 1]()\n  return (%c)\n", 2, 35, "'=' after attribute value",
                 id="attribute-missing-equals"),
    pytest.param(G + "  %c : int = prim::Constant[value=1, value=2]()\n  return (%c)\n", 2, 38,
                 "attribute value is given twice", id="attribute-twice"),
    pytest.param(G + "  %c : int = prim::Constant[value=]()\n  return (%c)\n", 2, 35,
                 "expected an attribute value, found '\\]'", id="attribute-missing-value"),
    pytest.param(G + '  %c : str = prim::Constant[value="ab]()\n  return (%c)\n', 2, 35, "unterminated string literal",
                 id="unterminated-string"),
    pytest.param(G + '  %c : str = prim::Constant[value="a\\qb"]()\n  return (%c)\n', 2, 35,
                 r"unknown escape \\q in string", id="bad-escape"),
    pytest.param(G + '  %c : str = prim::Constant[value="\\377"]()\n  return (%c)\n', 2, 35,
                 "string literal is not valid UTF-8", id="string-not-utf8"),
    pytest.param(G + "  %c : Tensor = prim::Constant[value= 1  2  3 [ CPUFloatType{2} ]]()\n  return (%c)\n", 2, 39,
                 r"tensor constant has 3 values for shape \(2,\)", id="tensor-constant-count"),
    pytest.param(G + "  %c : Tensor = prim::Constant[value= 1  1e999 [ CPULongType{2} ]]()\n  return (%c)\n", 2, 39,
                 "tensor constant has a value that does not fit Long", id="tensor-constant-inf-long"),
    pytest.param(G + "  %c : Any = prim::Constant[value=<Graph>]()\n  return (%c)\n", 2, 35,
                 "<Graph> attributes cannot be read back", id="graph-placeholder"),
    pytest.param(G + "  %c : int = prim::Constant[value=" + "9" * 5000 + "]()\n  return (%c)\n", 2, 35,
                 r"has too many digits \(5000\)", id="int-5000-digits"),
    # -- deep nesting (50,000 levels) ------------------------------------------------------------
    pytest.param("graph(%x : " + "(" * 50_000 + "Tensor" + ")" * 50_000 + "):\n  return (%x)\n", 1, 113,
                 "type is nested more than 100 levels deep", id="type-50k-parens"),
    pytest.param("graph(%x : " + "List(" * 50_000 + "int" + ")" * 50_000 + "):\n  return (%x)\n", 1, 517,
                 "type is nested more than 100 levels deep", id="type-50k-list"),
    pytest.param("graph(%x : int" + "?" * 50_000 + "):\n  return (%x)\n", 1, 115,
                 "type is nested more than 100 levels deep", id="type-50k-optional-suffix"),
    pytest.param("graph(%x : int" + "[]" * 50_000 + "):\n  return (%x)\n", 1, 215,
                 "type is nested more than 100 levels deep", id="type-50k-list-suffix"),
    pytest.param(G + "  %c : int[] = prim::Constant[value=" + "[" * 50_000 + "]" * 50_000 + "]()\n  return (%c)\n",
                 2, 138, "attribute value is nested more than 100 levels deep", id="attribute-50k-lists"),
    pytest.param(G + "  %c : Any = prim::Constant[value=" + "(" * 50_000 + ")" * 50_000 + "]()\n  return (%c)\n",
                 2, 136, "attribute value is nested more than 100 levels deep", id="attribute-50k-tuples"),
    pytest.param(H + "  %y : Tensor = aten::relu(" + "(" * 50_000 + "\n", 2, 28,
                 "expected a value name like %x but found '\\('", id="inputs-50k-parens"),
    # -- truncated file: the real graph above, cut at several points ------------------------------
    pytest.param(cut(LOOP_SUM, "graph(%x.1 : Ten"), 1, 14, "unknown type 'Ten'", id="cut-in-type-name"),
    pytest.param(cut(LOOP_SUM, "Tensor,\n"), 2, 1, "found the end of the input", id="cut-after-first-input"),
    pytest.param(cut(LOOP_SUM, "%n.1 : int"), 2, 17, r"',' or '\)' in the graph's inputs but the input ends here",
                 id="cut-in-header"),
    pytest.param(cut(LOOP_SUM, "[value="), 3, 36, "expected an attribute value but the input ends here",
                 id="cut-in-attribute"),
    pytest.param(cut(LOOP_SUM, "# public_mod"), 4, 54, r"unexpected end of input: expected 'return \(\.\.\.\)'",
                 id="cut-in-comment"),
    pytest.param(cut(LOOP_SUM, "(%x.1, %3"), 6, 46,
                 r"',' or '\)' in the inputs of aten::zeros_like but the input ends here", id="cut-in-inputs"),
    pytest.param(cut(LOOP_SUM, "22:20\n"), 10, 1, r"unexpected end of input: expected the block's '-> \(\.\.\.\)'",
                 id="cut-in-block"),
    pytest.param(cut(LOOP_SUM, "%acc.5)\n"), 12, 1, r"unexpected end of input: expected 'return \(\.\.\.\)'",
                 id="cut-before-return"),
    pytest.param(cut(LOOP_SUM, "  return ("), 12, 11, "found the end of the input", id="cut-in-return"),
    # -- binary junk ----------------------------------------------------------------------------------
    pytest.param("\x00\x01\x02\x03", 1, 1, "expected 'graph\\(' at the start, found '\\\\x00'", id="nul-bytes"),
    pytest.param(H + "  \x00\x01garbage\n", 2, 3, "expected a value name like %x but found '\\\\x00'",
                 id="nul-in-body"),
    pytest.param(b"\xff\xfe\x00\x00", 1, 1, r"input is not UTF-8 text \(byte 0 is 0xff\)", id="bytes-not-utf8"),
    pytest.param(b"graph(%x : Tensor):\n  \xc3\x28\n", 2, 3, r"input is not UTF-8 text \(byte 22 is 0xc3\)",
                 id="bytes-not-utf8-line-2"),
    pytest.param(H + "  \x00" + latin1_junk(4096), 2, 3, "expected a value name like %x", id="latin1-junk-body"),
    pytest.param("\x7f" + latin1_junk(4096, seed=1), 1, 1, "expected 'graph\\(' at the start", id="latin1-junk"),
    # -- a 10 MB single line ------------------------------------------------------------------------
    pytest.param(H + "  " + "a" * MB10, 2, 3, "expected a value name like %x but found 'aaaa", id="10mb-word"),
    pytest.param(G + '  %c : str = prim::Constant[value="' + "s" * MB10 + "\n", 2, 35, "unterminated string literal",
                 id="10mb-unterminated-string"),
    pytest.param(H + "  return (%x)" + " " * MB10 + "junk\n", 2, 14 + MB10, "unexpected 'junk' after the graph's return",
                 id="10mb-blanks-then-junk"),
    pytest.param(H + "  %y : Tensor = aten::relu(%" + "q" * MB10 + ")\n", 2, 28, "undefined value %qqqq",
                 id="10mb-value-name"),
    pytest.param(G + "  %c : int = prim::Constant[value=" + "9" * MB10 + "]()\n", 2, 35,
                 r"has too many digits \(10000000\)", id="10mb-integer"),
    pytest.param(H + "  %y : Tensor = aten::" + "r" * MB10 + "[(%x)\n", 2, 24 + MB10, "expected an attribute name",
                 id="10mb-kind"),
]

TEN_MB_IDS = {"10mb-word", "10mb-unterminated-string", "10mb-blanks-then-junk", "10mb-value-name", "10mb-integer",
              "10mb-kind"}
TEN_MB = [case for case in CASES if case.id in TEN_MB_IDS]


@pytest.fixture(autouse=True)
def _hang_guard() -> Iterator[None]:
    """Turn a hang into a failure after HANG_GUARD_S seconds (not a speed assertion)."""
    with hang_guard(HANG_GUARD_S):
        yield


def parse_error(text: str | bytes) -> IRParseError:
    """The error ``parse_ir(text)`` raises; any other exception type fails the test."""
    try:
        parse_ir(text)
    except IRParseError as err:
        return err
    pytest.fail("parse_ir accepted malformed text")


def test_at_least_thirty_cases() -> None:
    assert len(CASES) >= 30
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize(("text", "line", "column", "keyword"), CASES)
def test_malformed_text_gives_one_clear_error(text: str | bytes, line: int, column: int, keyword: str) -> None:
    err = parse_error(text)
    assert type(err) is IRParseError
    assert isinstance(err, ValueError)
    assert (err.line, err.column) == (line, column), err.summary
    assert re.search(keyword, err.message), err.summary
    # One clear error: no chained exception (no "During handling of..." traceback).
    assert err.__cause__ is None
    assert err.__context__ is None or err.__suppress_context__
    # str(err): "line:col: message", the offending line, a caret under the column.
    first, source, caret = str(err).split("\n")
    assert first == err.summary == f"{line}:{column}: {err.message}"
    assert caret.strip() == "^"
    assert len(source) <= 200 and len(caret) <= 200
    assert len(err.message) <= 200, "the message must stay one short line"


@pytest.mark.parametrize(("text", "line", "column", "keyword"), [c for c in CASES if isinstance(c.values[0], str)])
def test_bytes_input_reports_the_same_place(text: str, line: int, column: int, keyword: str) -> None:
    err = parse_error(text.encode("utf-8"))
    assert (type(err), err.line, err.column) == (IRParseError, line, column), err.summary


@pytest.mark.parametrize(("text", "line", "column", "keyword"), TEN_MB)
def test_ten_megabyte_line_message_stays_short(text: str, line: int, column: int, keyword: str) -> None:
    assert max(len(row) for row in text.split("\n")) >= MB10
    err = parse_error(text)
    rendered = str(err)
    # Without any CLI: the first line starts with "line:col" digits ...
    assert re.match(r"^\d+:\d+: \S", rendered)
    assert rendered.split("\n")[0].startswith(f"{line}:{column}: ")
    # ... and the source window around the caret is short.
    rows = rendered.split("\n")
    assert len(rows) == 3
    assert all(len(row) <= 200 for row in rows), [len(row) for row in rows]
    assert len(rendered) <= 600


def test_caret_points_at_the_column() -> None:
    err = parse_error(H + "  %y : Tensor = aten::relu(%z)\n  return (%y)\n")
    _, source, caret = str(err).split("\n")
    assert source == "      %y : Tensor = aten::relu(%z)"
    assert caret.index("^") == source.index("%z")


def test_caret_window_in_a_long_line() -> None:
    err = parse_error(H + "  return (%x)" + " " * 5000 + "junk\n")
    _, source, caret = str(err).split("\n")
    assert source.lstrip().startswith("...") and source.endswith("junk")
    assert source[caret.index("^"):].startswith("junk")


def test_caret_under_tabs() -> None:
    err = parse_error("graph(%x : Tensor):\n\t\t%y : Tensor = aten::relu(%z)\n\treturn (%y)\n")
    assert (err.line, err.column) == (2, 28)
    _, source, caret = str(err).split("\n")
    assert caret.index("^") == source.index("%z") and caret[4:6] == "\t\t"


def test_not_text_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        parse_ir(12345)  # type: ignore[arg-type]

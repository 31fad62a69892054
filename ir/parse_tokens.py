"""Tokens of TorchScript's textual IR, and the token stream the parsers share.

The text is cut into tokens by one regular expression at C speed; types
without nested parentheses (``Float(3, 4, strides=[4, 1], ...)``) come out as
a single token whose parse is cached (see ``parse_types``), which keeps large
graphs fast. Positions are only recomputed when an error is reported.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import islice
from typing import Any

from .errors import IRParseError

__all__ = ["TokenStream", "END", "TOKEN", "FINE_TOKEN", "tokenize", "shorten", "is_int", "is_number"]

_TOKEN_PARTS = r"""
      \#[^\n]*                                   # comment (source location)
    | "[^"\\\n]*(?:\\.[^"\\\n]*)*"?                # string (maybe unterminated)
    | '[^'\\\n]*(?:\\.[^'\\\n]*)*'?
    | %[\w.]*                                    # value name
    | ->
    | \.\.\.
    | -?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?     # number
    {flat_type}
    | [A-Za-z_]\w*(?:(?:::|\.)\w+)*              # names, kinds, qualified names
    | ::
    | ,\ scope:\ [^\n\#]*                        # a traced node's scope, up to its comment
    | \S                                         # anything else: one character
"""
# Each match eats the whitespace before its token (group 1) in one step, so
# long runs of blanks cost no per-character search; "" marks the end.
TOKEN = re.compile(
    r"\s*(" + _TOKEN_PARTS.format(flat_type=r'| [A-Z]\w*\([^()\n"]*\)  # a type, flat parens') + r"|\Z)",
    re.VERBOSE,
)
# The same tokens with types split into their parts, to parse a one-token type.
FINE_TOKEN = re.compile(r"\s*(" + _TOKEN_PARTS.format(flat_type="") + r"|\Z)", re.VERBOSE)
SCOPE_PREFIX = ", scope: "
END = "\x00<end of input>"


def tokenize(pattern: re.Pattern[str], text: str) -> list[str]:
    tokens = pattern.findall(text)
    while tokens and not tokens[-1]:  # the end-of-text matches
        tokens.pop()
    return tokens


def shorten(tok: str) -> str:
    """A token as quoted in a message: long ones are cut so messages stay one short line."""
    return tok if len(tok) <= 40 else tok[:37] + "..."


def is_int(tok: str) -> bool:
    # isdigit() alone accepts "²", which int() rejects.
    return (tok.isdigit() or (tok[0] == "-" and tok[1:].isdigit())) and tok.isascii()


def is_number(tok: str) -> bool:
    first = tok[0]
    return first.isdigit() or (first in "-." and len(tok) > 1 and (tok[1].isdigit() or tok[1] == "."))


class TokenStream:
    """Tokens of one text, a cursor ``i`` and errors that name ``line:col``."""

    token_re = TOKEN  # the flat-type sub-parser uses FINE_TOKEN

    def __init__(self, text: str) -> None:
        self.text = text
        raw = tokenize(TOKEN, text)
        # Token indices (in self.toks) before which a comment was dropped, to
        # find a token's place in the text again when reporting an error.
        self.dropped: list[int] = []
        self.comments: dict[int, str] = {}
        if "#" in text:
            # Keep source comments that follow a node's ")" (or its scope) as
            # locations; drop every other comment.
            tokens: list[str] = []
            for tok in raw:
                if tok[0] == "#":
                    if tokens and (tokens[-1] == ")" or tokens[-1].startswith(SCOPE_PREFIX)):
                        self.comments[len(tokens)] = tok[1:].strip()
                    self.dropped.append(len(tokens))
                else:
                    tokens.append(tok)
            self.toks = tokens
        else:
            self.toks = raw
        self.toks.append(END)
        self.i = 0
        self._mark = (0, 0)  # (raw token index, its offset): where stream_offset last stopped

    @classmethod
    def fine(cls, text: str) -> Any:
        """A stream over ``text`` that splits types into their parts (no comments in it)."""
        sub = cls.__new__(cls)
        sub.text = text
        sub.token_re = FINE_TOKEN
        sub.toks = tokenize(FINE_TOKEN, text) + [END]
        sub.comments = {}
        sub.dropped = []
        sub.i = 0
        sub._mark = (0, 0)
        return sub

    # -- errors and positions ------------------------------------------------
    def offset_of(self, index: int) -> int:
        """Character offset of token ``index`` (recomputed only when reporting)."""
        # Skip to the token at C speed: a 10 MB line must still report fast.
        raw_index = index + bisect_right(self.dropped, index)
        match = next(islice(self.token_re.finditer(self.text), raw_index, None), None)
        return len(self.text) if match is None else match.start(1)

    def stream_offset(self, index: int) -> int:
        """Character offset of token ``index``, for indices that grow from call to call.

        Each call scans on from where the last one stopped, so taking the
        text of every small tensor constant of a graph costs one pass.
        """
        raw_index = index + bisect_right(self.dropped, index)
        mark_index, mark_offset = self._mark
        if raw_index < mark_index:
            return self.offset_of(index)
        matches = self.token_re.finditer(self.text, mark_offset)
        match = next(islice(matches, raw_index - mark_index, None), None)
        if match is None:
            return len(self.text)
        self._mark = (raw_index, match.start(1))
        return match.start(1)

    def error(self, message: str, index: int | None = None, delta: int = 0) -> IRParseError:
        """An error at token ``index`` (default: the current one), ``delta`` characters into it."""
        offset = min(self.offset_of(self.i if index is None else index) + delta, len(self.text))
        line = self.text.count("\n", 0, offset) + 1
        line_start = self.text.rfind("\n", 0, offset) + 1
        line_end = self.text.find("\n", offset)
        if line_end < 0:
            line_end = len(self.text)
        return IRParseError(message, line, offset - line_start + 1, self.text[line_start:line_end])

    def describe(self, tok: str) -> str:
        if tok == END:
            return "the end of the input"
        return repr(shorten(tok))

    # -- token helpers ---------------------------------------------------------
    def peek(self, ahead: int = 0) -> str:
        index = self.i + ahead
        return self.toks[index] if index < len(self.toks) else END

    def take(self) -> str:
        tok = self.toks[self.i]
        if tok is END:
            raise self.error("unexpected end of input (the text is cut short)")
        self.i += 1
        return tok

    def accept(self, tok: str) -> bool:
        if self.toks[self.i] == tok:
            self.i += 1
            return True
        return False

    def expect(self, tok: str, what: str | None = None) -> None:
        if self.toks[self.i] != tok:
            found = self.toks[self.i]
            if found == END:
                raise self.error(f"expected {what or repr(tok)} but the input ends here (truncated?)")
            raise self.error(f"expected {what or repr(tok)} but found {self.describe(found)}")
        self.i += 1

    def value_name(self) -> str:
        tok = self.toks[self.i]
        if tok[0] != "%" or tok == END:
            raise self.error(f"expected a value name like %x but found {self.describe(tok)}")
        if len(tok) == 1:
            raise self.error("'%' must be followed by a value name")
        self.i += 1
        return tok[1:]

    def number_token(self, kind: type) -> Any:
        tok = self.take()
        if kind is int and is_int(tok):
            return self.to_int(tok, self.i - 1)
        try:
            return kind(tok)
        except ValueError:
            raise self.error(f"expected {'an integer' if kind is int else 'a number'}, found {self.describe(tok)}",
                             self.i - 1) from None

    def to_int(self, tok: str, index: int) -> int:
        try:
            return int(tok)
        except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
            raise self.error(f"integer {self.describe(tok)} has too many digits ({len(tok)})", index) from None

"""Colours of the marks, one table for the terminal canvas and the SVG export,
so a captured value has the same colour on screen and in a shared diagram."""

from __future__ import annotations

from dataclasses import dataclass

from .model import Mark

__all__ = [
    "Style",
    "PALETTES",
    "OKABE_ITO",
    "CANVAS_BACKGROUND",
    "HIGHLIGHT",
    "LINE_STYLES",
    "STATE_BADGES",
    "style_for",
    "drawn_mark",
    "line_style_for",
    "MARK_PRIORITY",
    "LEGEND",
    "SHORT_LEGEND",
]


@dataclass(frozen=True)
class Style:
    fill: str  # box background
    stroke: str  # box border and edge colour
    text: str


# Which mark wins the colour when a node carries several (the others still
# show in the inspector; the legend lists only what is drawn).
MARK_PRIORITY: tuple[Mark, ...] = (
    Mark.SELECTED,
    Mark.FAILED,
    Mark.LINKED,
    Mark.CAPTURED_INPUT,
    Mark.TEMPORARY,
    Mark.CAPTURED_OUTPUT,
    Mark.VJP_INPUT,
    Mark.VJP_OUTPUT,
    Mark.ADDED,
    Mark.INPUTS_CHANGED,
    Mark.REMOVED,
    Mark.ZERO,
    Mark.NONZERO,
    Mark.UNKNOWN,
    Mark.GRAD_OF,
)

# Okabe & Ito's eight colours ("Color Universal Design", 2008), which stay
# apart for the common kinds of colour blindness. Seven fill the boxes of the
# seven marks a picture most often shows together: what the step changed and
# the Gradient's five roles, each its own hue. The rest take no hue of their
# own: the selection is the plain box inverted, its partners get a bright
# border, a failure is a black box with vermillion text, and AutogradZero's
# states are told apart by line style (LINE_STYLES) and a badge (STATE_BADGES).
OKABE_ITO = {
    "orange": "#e69f00",
    "sky_blue": "#56b4e9",
    "bluish_green": "#009e73",
    "yellow": "#f0e442",
    "blue": "#0072b2",
    "vermillion": "#d55e00",
    "reddish_purple": "#cc79a7",
    "black": "#000000",
}

_HUE: dict[Mark, str] = {
    Mark.ADDED: "bluish_green",
    Mark.INPUTS_CHANGED: "orange",
    Mark.CAPTURED_INPUT: "sky_blue",
    Mark.CAPTURED_OUTPUT: "blue",
    Mark.TEMPORARY: "reddish_purple",
    Mark.VJP_INPUT: "yellow",
    Mark.VJP_OUTPUT: "vermillion",
}

# AutogradZero's states, each a value's line style (solid otherwise) and a
# word on the box that makes the value.
LINE_STYLES: dict[Mark, str] = {Mark.ZERO: "dotted", Mark.UNKNOWN: "dashed"}
STATE_BADGES: dict[Mark, str] = {Mark.ZERO: "Zero", Mark.NONZERO: "Nonzero", Mark.UNKNOWN: "Unknown"}


def _marked(hue: str) -> Style:
    colour = OKABE_ITO[hue]
    return Style(colour, colour, OKABE_ITO["black"])


def _palette(plain: Style) -> dict[Mark | None, Style]:
    # REMOVED is drawn faded and GRAD_OF is named by its label: both keep the plain colours.
    table: dict[Mark | None, Style] = {None: plain, Mark.REMOVED: plain, Mark.GRAD_OF: plain}
    table.update({mark: _marked(hue) for mark, hue in _HUE.items()})
    table[Mark.SELECTED] = Style(plain.text, plain.text, plain.fill)
    table[Mark.LINKED] = Style(plain.fill, plain.text, plain.text)
    table[Mark.FAILED] = Style(OKABE_ITO["black"], OKABE_ITO["vermillion"], OKABE_ITO["vermillion"])
    state = Style(plain.fill, plain.text, plain.text)  # no hue: the line and the badge say which
    table.update({mark: state for mark in STATE_BADGES})
    return table


_DARK = _palette(Style("#1e2430", "#7f8ea3", "#e6edf3"))
_LIGHT = _palette(Style("#ffffff", "#495057", "#212529"))

PALETTES: dict[str, dict[Mark | None, Style]] = {"dark": _DARK, "light": _LIGHT}

# The minimap's marks (search matches, the selection): one bright hue on a map of dots.
HIGHLIGHT = OKABE_ITO["yellow"]

# Behind the graph: the same as the SVG export's page (svg_dot.BACKGROUND).
CANVAS_BACKGROUND: dict[str, str] = {"dark": "#0d1117", "light": "#ffffff"}

LEGEND: dict[Mark, str] = {
    Mark.ADDED: "added by this step",
    Mark.REMOVED: "removed by this step",
    Mark.INPUTS_CHANGED: "inputs changed",
    Mark.CAPTURED_INPUT: "captured input (df reads a DifferentiableGraph input)",
    Mark.CAPTURED_OUTPUT: "captured output (df reads a value of f)",
    Mark.TEMPORARY: "captured temporary (an extra output of f for df)",
    Mark.VJP_INPUT: "incoming gradient of df",
    Mark.VJP_OUTPUT: "gradient df returns",
    Mark.ZERO: "AutogradZero: Zero (dotted)",
    Mark.NONZERO: "AutogradZero: Nonzero (solid)",
    Mark.UNKNOWN: "AutogradZero: Unknown (dashed)",
    Mark.GRAD_OF: "GradOf block",
    Mark.SELECTED: "selected",
    Mark.LINKED: "linked to the selection",
    Mark.FAILED: "failed",
}


# The slide legend's captions: one line each, beside the swatch.
SHORT_LEGEND: dict[Mark, str] = {
    Mark.ADDED: "added",
    Mark.REMOVED: "removed",
    Mark.INPUTS_CHANGED: "inputs changed",
    Mark.CAPTURED_INPUT: "captured input",
    Mark.CAPTURED_OUTPUT: "captured output",
    Mark.TEMPORARY: "temporary",
    Mark.VJP_INPUT: "vjp input",
    Mark.VJP_OUTPUT: "vjp output",
    Mark.ZERO: "Zero",
    Mark.NONZERO: "Nonzero",
    Mark.UNKNOWN: "Unknown",
    Mark.GRAD_OF: "GradOf block",
    Mark.SELECTED: "selected",
    Mark.LINKED: "linked",
    Mark.FAILED: "failed",
}


def drawn_mark(marks: set[Mark] | frozenset[Mark] | None) -> Mark | None:
    """The mark whose colours a box or line carrying ``marks`` is drawn in
    (the highest-priority one; None for none, or for GRAD_OF alone, drawn plain)."""
    if marks:
        for mark in MARK_PRIORITY:
            if mark in marks:
                return None if mark is Mark.GRAD_OF else mark
    return None


def style_for(marks: set[Mark] | None, theme: str = "dark") -> Style:
    """The style of the highest-priority mark in ``marks`` (the plain style for none)."""
    palette = PALETTES[theme]
    if marks:
        for mark in MARK_PRIORITY:
            if mark in marks:
                return palette[mark]
    return palette[None]


def line_style_for(marks: set[Mark] | None) -> str:
    """``dotted``, ``dashed`` or ``solid``: the line of an edge whose value carries ``marks``."""
    for mark, style in LINE_STYLES.items():
        if marks and mark in marks:
            return style
    return "solid"

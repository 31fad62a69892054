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
    "LINE_STYLES",
    "style_for",
    "line_style_for",
    "MARK_PRIORITY",
    "LEGEND",
]


@dataclass(frozen=True)
class Style:
    fill: str  # box background
    stroke: str  # box border and edge colour
    text: str


# Which mark wins the colour when a node carries several (the others still
# show in the inspector and in the legend's text).
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
# apart for the common kinds of colour blindness. Marks share seven hues plus
# black text; what shares a hue is told apart by badges (``captured in #0``,
# ``vjp out #1``) and, for AutogradZero states, by line style (LINE_STYLES).
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
    Mark.SELECTED: "yellow",
    Mark.LINKED: "yellow",  # lit because of the selection; the selection is also bold
    Mark.FAILED: "vermillion",
    Mark.ADDED: "bluish_green",
    Mark.INPUTS_CHANGED: "orange",
    Mark.CAPTURED_INPUT: "sky_blue",
    Mark.CAPTURED_OUTPUT: "sky_blue",
    Mark.TEMPORARY: "sky_blue",
    Mark.VJP_INPUT: "blue",
    Mark.VJP_OUTPUT: "blue",
    # AutogradZero states: one hue none of "inputs changed" and "selected" use.
    Mark.ZERO: "reddish_purple",
    Mark.NONZERO: "reddish_purple",
    Mark.UNKNOWN: "reddish_purple",
}

# Line styles of edges whose value carries the mark (solid otherwise).
LINE_STYLES: dict[Mark, str] = {Mark.ZERO: "dotted", Mark.UNKNOWN: "dashed"}


def _marked(hue: str) -> Style:
    colour = OKABE_ITO[hue]
    return Style(colour, colour, OKABE_ITO["black"])


def _palette(plain: Style) -> dict[Mark | None, Style]:
    # REMOVED is drawn faded and GRAD_OF is named by its label: both keep the plain colours.
    table: dict[Mark | None, Style] = {None: plain, Mark.REMOVED: plain, Mark.GRAD_OF: plain}
    table.update({mark: _marked(hue) for mark, hue in _HUE.items()})
    return table


_DARK = _palette(Style("#1e2430", "#7f8ea3", "#e6edf3"))
_LIGHT = _palette(Style("#ffffff", "#495057", "#212529"))

PALETTES: dict[str, dict[Mark | None, Style]] = {"dark": _DARK, "light": _LIGHT}

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
    Mark.ZERO: "AutogradZero: zero (dotted)",
    Mark.NONZERO: "AutogradZero: nonzero (solid)",
    Mark.UNKNOWN: "AutogradZero: unknown (dashed)",
    Mark.GRAD_OF: "GradOf block",
    Mark.SELECTED: "selected",
    Mark.LINKED: "linked to the selection",
    Mark.FAILED: "failed",
}


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

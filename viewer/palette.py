"""Colours of the marks, one table for the terminal canvas and the SVG export,
so a captured value has the same colour on screen and in a shared diagram."""

from __future__ import annotations

from dataclasses import dataclass

from .model import Mark

__all__ = ["Style", "PALETTES", "style_for", "MARK_PRIORITY", "LEGEND"]


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

_DARK = {
    None: Style("#1e2430", "#7f8ea3", "#e6edf3"),
    Mark.SELECTED: Style("#3d2f00", "#ffd43b", "#fff3bf"),
    Mark.FAILED: Style("#4a1010", "#ff6b6b", "#ffe3e3"),
    Mark.LINKED: Style("#2b2b00", "#fab005", "#fff3bf"),
    Mark.CAPTURED_INPUT: Style("#0b3a4a", "#22b8cf", "#e3fafc"),
    Mark.CAPTURED_OUTPUT: Style("#2a1f4a", "#9775fa", "#f3f0ff"),
    Mark.TEMPORARY: Style("#3f1d38", "#f06595", "#fff0f6"),
    Mark.VJP_INPUT: Style("#173b1f", "#51cf66", "#ebfbee"),
    Mark.VJP_OUTPUT: Style("#2f3b0f", "#a9e34b", "#f4fce3"),
    Mark.ADDED: Style("#0f3b24", "#40c057", "#d3f9d8"),
    Mark.INPUTS_CHANGED: Style("#3b2a0f", "#fd7e14", "#fff4e6"),
    Mark.REMOVED: Style("#202020", "#555555", "#808080"),
    Mark.ZERO: Style("#2a2a2a", "#868e96", "#ced4da"),
    Mark.NONZERO: Style("#10304a", "#4dabf7", "#e7f5ff"),
    Mark.UNKNOWN: Style("#3a3000", "#fcc419", "#fff9db"),
    Mark.GRAD_OF: Style("#25203a", "#b197fc", "#f3f0ff"),
}

_LIGHT = {
    None: Style("#ffffff", "#495057", "#212529"),
    Mark.SELECTED: Style("#fff3bf", "#f08c00", "#212529"),
    Mark.FAILED: Style("#ffe3e3", "#e03131", "#212529"),
    Mark.LINKED: Style("#fff9db", "#f59f00", "#212529"),
    Mark.CAPTURED_INPUT: Style("#e3fafc", "#0c8599", "#212529"),
    Mark.CAPTURED_OUTPUT: Style("#f3f0ff", "#7048e8", "#212529"),
    Mark.TEMPORARY: Style("#fff0f6", "#d6336c", "#212529"),
    Mark.VJP_INPUT: Style("#ebfbee", "#2f9e44", "#212529"),
    Mark.VJP_OUTPUT: Style("#f4fce3", "#66a80f", "#212529"),
    Mark.ADDED: Style("#d3f9d8", "#2b8a3e", "#212529"),
    Mark.INPUTS_CHANGED: Style("#fff4e6", "#e8590c", "#212529"),
    Mark.REMOVED: Style("#f1f3f5", "#adb5bd", "#868e96"),
    Mark.ZERO: Style("#f1f3f5", "#868e96", "#495057"),
    Mark.NONZERO: Style("#e7f5ff", "#1c7ed6", "#212529"),
    Mark.UNKNOWN: Style("#fff9db", "#f08c00", "#212529"),
    Mark.GRAD_OF: Style("#f3f0ff", "#845ef7", "#212529"),
}

PALETTES: dict[str, dict[Mark | None, Style]] = {"dark": _DARK, "light": _LIGHT}

LEGEND: dict[Mark, str] = {
    Mark.ADDED: "added by this step",
    Mark.REMOVED: "removed by this step",
    Mark.INPUTS_CHANGED: "inputs changed",
    Mark.CAPTURED_INPUT: "captured input (df reads a DifferentiableGraph input)",
    Mark.CAPTURED_OUTPUT: "captured output (df reads a value of f)",
    Mark.TEMPORARY: "captured temporary (an extra output of f for df)",
    Mark.VJP_INPUT: "incoming gradient of df",
    Mark.VJP_OUTPUT: "gradient df returns",
    Mark.ZERO: "AutogradZero: zero",
    Mark.NONZERO: "AutogradZero: nonzero",
    Mark.UNKNOWN: "AutogradZero: unknown",
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

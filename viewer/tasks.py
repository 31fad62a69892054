"""The slow work behind r, b, G, e and E, as plain functions a thread worker
runs: each returns its result or a one-line ``error: ...`` string, never raises."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gradview.runtime import PassTrace, checks
from gradview.runtime.checks import CheckCancelled

from .export_paths import unused_path
from .formatting import guarded
from .layout import Layout
from .model import DrawGraph, Marks, View

__all__ = ["run_step", "find_divergence", "gradient_check", "export_svg", "export_slide", "export_html"]


def run_step(trace: PassTrace, index: int, inputs: Any) -> Any:
    """r: the step's run, with the joint view's other half run too (its values go on the edges)."""
    from .edge_values import run_for_views

    return guarded(lambda: run_for_views(trace, index, inputs))


def find_divergence(trace: PassTrace, inputs: Any, report: Callable[[str], None] | None = None) -> Any:
    """b: the first step whose outputs or gradients differ from the original graph's.
    ``report`` hears each step as it is checked and may raise CheckCancelled to stop."""
    return guarded(lambda: checks.find_divergence(trace, inputs, report=report))


def gradient_check(trace: PassTrace, index: int, inputs: Any, report: Callable[[str], None] | None = None) -> Any:
    """G: step ``index``'s gradients against finite differences (gradcheck's fast mode).
    ``report`` hears each input as it is checked and may raise CheckCancelled to stop."""
    return guarded(lambda: checks.check_step_gradient(trace, index, inputs, report=report))


def export_svg(target: Path, drawing: DrawGraph, marks: Marks, layout: Layout | None, theme: str) -> str:
    """Write one view of one step as SVG; the path written, or why not."""
    from . import export

    def run() -> str:
        if layout is None:
            return "error: the layout is not ready yet"
        picture = export.render_svg(drawing, marks, layout, theme=theme)
        target.parent.mkdir(parents=True, exist_ok=True)
        written = unused_path(target)  # an earlier export of this step stays
        with written.open("x", encoding="utf-8") as out:
            out.write(picture)
        return str(written)

    return guarded(run)


def export_slide(target: Path, frame: Any) -> str:
    """Write one step as a slide PNG (:mod:`gradview.viewer.slides`); the path written and its text size, or why not."""
    from . import slides

    def run() -> str:
        if not frame.graph.nodes:
            return "error: nothing on screen to export"
        dot, size = slides.slide_dot(frame)
        picture = slides.render_slide(dot, "png")
        target.parent.mkdir(parents=True, exist_ok=True)
        written = unused_path(target)  # an earlier export of this step stays
        with written.open("xb") as out:
            out.write(picture)
        return f"{written} (text {size:.0f} px at 1600x900)"

    return guarded(run)


def export_html(
    target: Path, trace: PassTrace, view: View, dg: int, theme: str, report: Callable[[str], None] | None = None
) -> str:
    """Write every step as one HTML stepper; the path written, or why not. ``report`` hears
    each picture as it is drawn and may raise CheckCancelled: then nothing is written
    (the page is written whole at the end), and the answer says so."""
    from . import export

    def run() -> str:
        written = unused_path(target)  # an earlier page stays
        try:
            export.export_trace_html(trace, written, view=view, dg=dg, theme=theme, report=report)
        except CheckCancelled as exc:
            where = str(exc).removeprefix("E: ").rstrip("…")
            return f"E: cancelled{f' ({where})' if where else ''}: nothing written, no {written.name} was made"
        return str(written)

    return guarded(run)

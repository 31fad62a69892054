"""Why the layered layout was used instead of dot: each cause says itself, in
the layout and on the app's screen (never "not found" when dot is installed)."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest
from textual.pilot import Pilot

from gradview.viewer import layout as layout_module
from gradview.viewer.app import GradviewApp
from gradview.viewer.layout import union_layout
from gradview.viewer.session import Session

from .driving import drive
from .graphs_for_tests import random_dag


def _fake_dot(directory: Path, body: str) -> None:
    """A ``dot`` on PATH that runs ``body`` (a shell script) instead of Graphviz."""
    program = directory / "dot"
    program.write_text(f"#!/bin/sh\n{body}\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)


def test_a_dot_over_its_time_limit_says_so_with_the_node_count(tmp_path, monkeypatch) -> None:
    _fake_dot(tmp_path, f"exec {shutil.which('sleep')} 30")  # exec: the timeout kills sleep itself
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(layout_module, "AUTO_DOT_TIMEOUT", 0.2)
    placed = union_layout([random_dag(12)])
    assert placed.engine == "layered"
    assert placed.fallback == "dot took over 0.2 s on 12 nodes; using the built-in layout"


def test_a_failing_dot_gives_its_own_first_error_line(tmp_path, monkeypatch) -> None:
    _fake_dot(tmp_path, "echo 'Error: <stdin>: syntax error in line 3' >&2\necho more >&2\nexit 1")
    monkeypatch.setenv("PATH", str(tmp_path))
    placed = union_layout([random_dag(5)])
    assert placed.engine == "layered"
    assert placed.fallback == (
        "dot failed (exit 1): Error: <stdin>: syntax error in line 3; using the built-in layout"
    )


def test_a_missing_dot_says_how_to_install_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    fallback = union_layout([random_dag(5)]).fallback
    assert "not found" in fallback and "apt-get install graphviz" in fallback
    assert fallback.endswith("; using the built-in layout")


def test_a_union_over_dots_node_limit_says_so(monkeypatch) -> None:
    monkeypatch.setattr(layout_module, "DOT_NODE_LIMIT", 20)
    assert union_layout([random_dag(21)]).fallback == (
        "21 nodes is over the 20 that dot is given; using the built-in layout"
    )


def test_dot_or_a_chosen_layered_layout_gives_no_fallback_note() -> None:
    assert union_layout([random_dag(5)], engine="layered").fallback == ""
    if shutil.which("dot"):
        placed = union_layout([random_dag(5)])
        assert placed.engine == "dot" and placed.fallback == ""


@pytest.mark.parametrize(
    ("body", "expected"),
    [("exit 3", "dot failed (exit 3): no message; using the built-in layout")],
)
def test_the_app_shows_the_reason_dot_was_not_used(
    mlp_session: Session, tmp_path, monkeypatch, body: str, expected: str
) -> None:
    # The layout workers are other processes: a fake dot on PATH reaches them, a
    # lowered time limit would not, so the app is shown a dot that fails.
    _fake_dot(tmp_path, body)
    monkeypatch.setenv("PATH", str(tmp_path))
    notes: list[str] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        notes.extend(str(n.message) for n in app._notifications)

    drive(mlp_session, script, (200, 50))
    assert expected in notes
    assert not any("not found" in note for note in notes)

"""The app composes: its parts (large graphs, the Saved tab, long tasks, the palette)
are given what they need and speak in messages; none reaches into the app."""

from __future__ import annotations

import re
from pathlib import Path

VIEWER = Path(__file__).resolve().parents[2] / "viewer"
# The command palette's provider reads the app's trace and OnScreen (Textual hands it the app).
MAY_NAME_THE_APP = {"app.py", "commands.py"}


def test_no_viewer_module_but_the_app_and_the_palette_names_the_app() -> None:
    naming = sorted(
        path.name for path in VIEWER.glob("*.py") if re.search(r"\bGradviewApp\b", path.read_text(encoding="utf-8"))
    )
    assert set(naming) <= MAY_NAME_THE_APP, naming


def test_no_part_is_a_mixin_of_the_app() -> None:
    typed_self = [path.name for path in VIEWER.glob("*.py") if "self: GradviewApp" in path.read_text(encoding="utf-8")]
    assert typed_self == []


def test_the_palette_answers_with_messages_not_widgets() -> None:
    text = (VIEWER / "commands.py").read_text(encoding="utf-8")
    assert ".main." not in text and "query_one" not in text

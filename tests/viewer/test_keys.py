"""The README's key table and the help screen list the same keys."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console
from textual.widgets import Static

from gradview.viewer.app import GradviewApp
from gradview.viewer.help_screen import HelpScreen
from gradview.viewer.keys import KEYS
from gradview.viewer.session import Session

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_keys() -> list[tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| key | what |") :].split("\n\n", 1)[0].splitlines()[2:]
    rows = []
    for line in table:
        key, what = (cell.strip().replace("`", "") for cell in line.strip().strip("|").split(" | ", 1))
        rows.append((key, what))
    return rows


def test_the_readme_lists_exactly_the_help_screens_keys() -> None:
    assert _readme_keys() == list(KEYS)


def test_the_help_screen_shows_every_key_row(mlp_session: Session) -> None:
    shown: list[str] = []

    async def run() -> None:
        app = GradviewApp(mlp_session)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            console = Console(width=200, record=True, file=io.StringIO())
            console.print(app.screen.query(Static).first().content)
            shown.append(console.export_text())

    asyncio.run(run())
    for key, what in KEYS:
        assert key in shown[0] and what.split(",")[0] in shown[0], key


def test_every_key_the_help_names_is_bound(mlp_session: Session) -> None:
    """Each single-character key of the table triggers a binding on the app or the main screen."""
    app = GradviewApp(mlp_session)

    async def run() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            bound = {key for _, binding in app.screen.active_bindings.items() for key in [binding.binding.key]}
            names = {"[": "left_square_bracket", "]": "right_square_bracket", "/": "slash", "+": "plus",
                     "-": "minus", "?": "question_mark", "{": "left_curly_bracket", "}": "right_curly_bracket",
                     "(": "left_parenthesis", ")": "right_parenthesis",
                     "<": "less_than_sign", ">": "greater_than_sign"}
            for keys, _ in KEYS:
                for token in keys.replace(",", " ").replace("/", " / ").split():
                    if len(token) == 1 and token != "/" or token in ("?", "/"):
                        assert names.get(token, token) in bound, token

    asyncio.run(run())

"""``b`` in the app: progress on the Check tab, b again or escape cancels (the check itself:
tests/runtime/checks/test_divergence.py)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from textual.widgets import Static

from gradview.runtime.pass_trace import PassTrace
from gradview.viewer import tasks
from gradview.viewer.app import GradviewApp
from gradview.viewer.session import Session


# -- b in the app: progress on the Check tab, b again or escape cancels --------------------------------
def _status(app: GradviewApp) -> str:
    return str(app.query_one("#check-status", Static).render())


async def _until(pilot: Any, condition: Any, what: str) -> None:
    for _ in range(400):  # a deadline in pauses, not a timed assert
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never: {what}")


@pytest.mark.parametrize("cancel_key", ["b", "escape"])
def test_b_in_the_app_shows_progress_and_cancels(
    mlp_session: Session, monkeypatch: pytest.MonkeyPatch, cancel_key: str
) -> None:
    go = threading.Event()
    real = tasks.find_divergence
    finished = threading.Event()

    def held(trace: PassTrace, inputs: Any, report: Any = None) -> Any:
        def slow(text: str) -> None:
            report(text)
            go.wait(10)  # holds the search at its first step until the test has cancelled it

        try:
            return real(trace, inputs, slow)
        finally:
            finished.set()

    monkeypatch.setattr(tasks, "find_divergence", held)

    async def run() -> None:
        app = GradviewApp(mlp_session)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            await pilot.press("b")
            await _until(pilot, lambda: "checking step 0 of 80" in _status(app), "progress shown")
            await pilot.press(cancel_key)
            await pilot.pause()
            assert _status(app).startswith("b: cancelled (checking step 0 of 80"), _status(app)
            go.set()
            await _until(pilot, finished.is_set, "the search thread ended")
            await pilot.pause(0.2)
            assert _status(app).startswith("b: cancelled"), "a cancelled search posts no result"
            # b again runs to the end and its result replaces the cancelled one.
            monkeypatch.setattr(tasks, "find_divergence", real)
            await pilot.press("b")
            await _until(pilot, lambda: _status(app).startswith("b: no divergence"), "b's result")

    asyncio.run(run())

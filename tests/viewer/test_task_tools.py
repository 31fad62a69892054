"""G and E in the app (viewer/task_tools.py): progress in the view bar (and the Check tab
for G) while they run, escape cancels them, a cancelled export writes nothing.
b's progress and cancellation: tests/viewer/test_checks.py."""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from gradview.viewer import tasks
from gradview.viewer.app import GradviewApp
from gradview.viewer.export import write_whole
from gradview.viewer.session import Session, load_target


def _text(app: GradviewApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def _until(pilot: Any, condition: Any, what: str) -> None:
    for _ in range(600):  # a deadline in pauses, not a timed assert
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never: {what}")


def _held(monkeypatch: pytest.MonkeyPatch, name: str, hold_at: str) -> tuple[threading.Event, threading.Event]:
    """Replace ``tasks.<name>`` by one whose report holds at the first text starting
    ``hold_at`` until the test lets it go; and an event set when the task's thread ends."""
    go, finished = threading.Event(), threading.Event()
    real = getattr(tasks, name)

    def held(*args: Any) -> Any:
        *rest, report = args

        def slow(text: str) -> None:
            report(text)
            if text.startswith(hold_at):
                go.wait(20)  # the task stays at this unit until the test has cancelled it
            report(text)  # the next unit's check of the cancel flag, as the real work makes

        try:
            return real(*rest, slow)
        finally:
            finished.set()

    monkeypatch.setattr(tasks, name, held)
    return go, finished


@pytest.mark.parametrize("cancel_key", ["escape", "G"])
def test_g_shows_each_input_and_escape_cancels(
    mlp_session: Session, monkeypatch: pytest.MonkeyPatch, cancel_key: str
) -> None:
    go, finished = _held(monkeypatch, "gradient_check", "G: input 2 of 5")
    real = tasks.gradient_check

    async def run() -> None:
        app = GradviewApp(mlp_session)
        async with app.run_test(size=(160, 50)) as pilot:
            await app.wait_for_layouts()
            await pilot.press("G")
            await _until(pilot, lambda: "G: input 2 of 5: %" in _text(app, "#check-status"), "progress on the Check tab")
            assert "G: input 2 of 5: %" in _text(app, "#viewbar"), "progress in the view bar"
            await pilot.press(cancel_key)
            await pilot.pause()
            status = _text(app, "#check-status")
            assert status.startswith("G: cancelled (input 2 of 5: %"), status
            assert "G: input" not in _text(app, "#viewbar")
            go.set()
            await _until(pilot, finished.is_set, "the check's thread ended")
            await app.workers.wait_for_complete()
            await pilot.pause(0.2)
            assert _text(app, "#check-status").startswith("G: cancelled"), "a cancelled check posts no result"
            # G again runs to the end; its result replaces the cancelled one.
            monkeypatch.setattr(tasks, "gradient_check", real)
            await pilot.press("G")
            await _until(pilot, lambda: "all 5 gradients match" in _text(app, "#check-status"), "G's result")
            assert "gradcheck's fast mode" in _text(app, "#check-status")

    asyncio.run(run())


def test_e_shows_each_picture_and_a_cancelled_export_writes_nothing(
    mlp_session: Session, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    page = out / "steps.html"
    page.write_text("the page the user had", encoding="utf-8")
    go, finished = _held(monkeypatch, "export_html", "E: picture 3 of")

    async def run() -> list[str]:
        app = GradviewApp(mlp_session, export_dir=str(out))
        async with app.run_test(size=(160, 50)) as pilot:
            await app.wait_for_layouts()
            await pilot.press("E")
            await _until(pilot, lambda: "E: picture 3 of" in _text(app, "#viewbar"), "progress in the view bar")
            await pilot.press("escape")
            await pilot.pause()
            assert "E: cancelling…" in _text(app, "#viewbar")
            go.set()
            await _until(pilot, finished.is_set, "the export's thread ended")
            await app.workers.wait_for_complete()
            await pilot.pause(0.2)
            assert "E:" not in _text(app, "#viewbar")
            return [str(n.message) for n in app._notifications]

    notes = asyncio.run(run())
    assert page.read_text(encoding="utf-8") == "the page the user had"
    assert sorted(p.name for p in out.iterdir()) == ["steps.html"], "no partial file left behind"
    assert any(n.startswith("E: cancelled (picture 3 of") and "nothing written, no steps-whole.html" in n for n in notes), notes


def test_a_page_is_written_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "steps.html"
    page.write_text("the page the user had", encoding="utf-8")
    write_whole(page, "a new page")
    assert page.read_text(encoding="utf-8") == "a new page" and oct(page.stat().st_mode & 0o777) == "0o644"

    def broken(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("gradview.viewer.export.os.replace", broken)
    with pytest.raises(OSError, match="disk full"):
        write_whole(page, "a page that fails")
    assert page.read_text(encoding="utf-8") == "a new page"
    assert [p.name for p in tmp_path.iterdir()] == ["steps.html"], "the temporary file is removed"


def test_e_runs_to_the_end_and_writes_the_page(mlp_session: Session, tmp_path: Path) -> None:
    out = tmp_path / "out"

    async def run() -> None:
        app = GradviewApp(mlp_session, export_dir=str(out))
        async with app.run_test(size=(160, 50)) as pilot:
            await app.wait_for_layouts()
            await pilot.press("E")
            await app.wait_for_layouts()
            await pilot.pause()

    asyncio.run(run())
    assert (out / "steps-whole.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in out.iterdir()) == ["steps-whole.html"]


def test_g_on_the_resnets_backward_says_each_input_and_escape_cancels() -> None:
    """Issue 21, acceptance 5: G on the backward of a ResNet-18's TORCH_TRACE log shows
    its progress (62 parameters) and escape cancels it. Its time: benchmarks/gradient_check.py."""
    pytest.importorskip("torch")
    from tests.real_model_logs import torch_trace_log  # needs PyTorch

    session = load_target(str(torch_trace_log("resnet18").parent))
    backward = next(step.index for step in session.trace.steps if step.which.is_backward)

    async def run() -> None:
        app = GradviewApp(session)
        async with app.run_test(size=(160, 50)) as pilot:
            app.jump_to_pass(backward)
            await pilot.press("G")
            progress = re.compile(r"G: input \d+ of 62: %")
            await _until(pilot, lambda: progress.search(_text(app, "#viewbar")), "progress in the view bar")
            await pilot.press("escape")
            await pilot.pause()
            status = _text(app, "#check-status")
            assert status.startswith("G: cancelled (input ") and " of 62: %" in status, status
            await app.workers.wait_for_complete()  # the check's thread stops at its next input
            await pilot.pause(0.2)
            assert _text(app, "#check-status") == status, "a cancelled check posts no result"
            assert "G:" not in _text(app, "#viewbar")

    asyncio.run(run())

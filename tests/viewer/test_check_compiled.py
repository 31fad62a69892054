"""The viewer lets r, b and G run on a TORCH_TRACE log (the checks themselves:
tests/runtime/checks/test_compiled_divergence.py)."""

from __future__ import annotations

from gradview.loaders.targets import load_target
from gradview.viewer import tasks

from ..runtime.checks.test_compiled_runs import FIXTURES


def test_the_viewer_runs_a_compiled_session() -> None:
    """The app asks Session.can_run before r, b and G, and passes the session's inputs (None)."""
    session = load_target(str(FIXTURES / "mlp.log"))
    assert session.inputs is None and session.can_run
    assert tasks.run_step(session.trace, 2, session.inputs).ok
    assert tasks.gradient_check(session.trace, 2, session.inputs).status == "pass"
    assert tasks.find_divergence(session.trace, session.inputs).status == "pass"
    assert not load_target(str(FIXTURES.parents[2] / "examples" / "mlp.ir"), inputs="none").can_run


def test_r_g_and_b_in_the_app_on_a_compiled_session() -> None:
    from textual.pilot import Pilot
    from textual.widgets import DataTable

    from gradview.viewer.app import GradviewApp

    from .driving import drive
    from .test_app import SIZE, _static_text

    session = load_target(str(FIXTURES / "mlp.log"))

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        app.jump_to_pass(2)  # backward 0
        for key in ("r", "G"):
            await pilot.press(key)
            await app.wait_for_layouts()
            await app.workers.wait_for_complete()
            await pilot.pause()
        assert app.query_one("#values", DataTable).row_count > 0
        table = app.query_one("#gradcheck", DataTable)
        assert [str(table.get_row_at(i)[-1]) for i in range(table.row_count)] == ["pass"] * 4
        assert "all 4 gradients match finite differences" in _static_text(app, "#check-status")
        await pilot.press("b")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "no divergence" in _static_text(app, "#check-status")

    drive(session, script, SIZE)

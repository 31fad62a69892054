"""Snapshot tests of the main screens (SVG screenshots compared with accepted ones).

Regenerate after an intended change with
``.venv/bin/python -m pytest tests/viewer/test_snapshots.py --snapshot-update``
and look at the SVGs in tests/viewer/__snapshots__/ before committing them.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot

from gradview.viewer.app import GradviewApp
from gradview.viewer.session import Session

SIZE = (160, 44)


def _at(pass_name: str, which: object, keys: tuple[str, ...] = ()) -> Callable[[Pilot], object]:
    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, GradviewApp)
        await app.wait_for_layouts()
        index = next(s.index for s in app.trace if s.pass_name == pass_name and s.which == which)
        app.jump_to_pass(index)
        for key in keys:
            await pilot.press(key)
            await app.wait_for_layouts()
        await pilot.pause()

    return run_before


def test_first_step_whole_graph(snap_compare, mlp_session: Session) -> None:  # noqa: ANN001
    assert snap_compare(GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("Input", "main"))


def test_create_autodiff_subgraphs_frames_the_group(snap_compare, mlp_session: Session) -> None:  # noqa: ANN001
    assert snap_compare(GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("CreateAutodiffSubgraphs", "main"))


def test_joint_view_after_lambda_lift(snap_compare, mlp_session: Session) -> None:  # noqa: ANN001
    assert snap_compare(
        GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("lambdaLiftReverse", ("backward", 0), ("4", "0"))
    )


def test_help_screen(snap_compare, mlp_session: Session) -> None:  # noqa: ANN001
    assert snap_compare(GradviewApp(mlp_session), terminal_size=SIZE, run_before=_at("Input", "main", ("question_mark",)))

"""The viewer's e and E write beside the target, in a folder named after it, never over a file (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.viewer.export_paths import default_export_dir, unused_path


@pytest.mark.parametrize(
    ("target", "folder"),
    [
        ("examples/mlp.ir", "examples/mlp-export"),
        ("/data/runs/model.py:build", "/data/runs/model-build-export"),
        ("trace.json", "trace-export"),
        ("logs/torch_trace/", "logs/torch_trace-export"),
    ],
)
def test_the_export_folder_sits_beside_the_target_named_after_it(target: str, folder: str) -> None:
    assert default_export_dir(target) == Path(folder)


def test_a_taken_name_gets_a_number(tmp_path: Path) -> None:
    page = tmp_path / "steps-whole.html"
    assert unused_path(page) == page
    page.write_text("first")
    (tmp_path / "steps-whole-2.html").write_text("second")
    assert unused_path(page) == tmp_path / "steps-whole-3.html"


def test_pressing_e_twice_keeps_both_pictures_and_names_each(tmp_path: Path, mlp_session) -> None:
    import asyncio

    from gradview.viewer.app import GradviewApp

    out = tmp_path / "out"
    app = GradviewApp(mlp_session, export_dir=str(out))

    async def run() -> list[str]:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_for_layouts()
            for _ in range(2):
                await pilot.press("e")
                await app.workers.wait_for_complete()
                await pilot.pause()
            return [str(n.message) for n in app._notifications]

    notes = asyncio.run(run())
    names = sorted(p.name for p in out.iterdir())
    assert names == ["000-Input-main-2.svg", "000-Input-main.svg"]
    assert all(any(str(out / name) in note for note in notes) for name in names), notes


def test_the_app_exports_beside_its_target_by_default(mlp_session) -> None:
    from gradview.viewer.app import GradviewApp

    assert GradviewApp(mlp_session).export_dir == default_export_dir(mlp_session.name)


def test_the_first_export_asks_where_and_later_ones_go_there(tmp_path: Path, mlp_session) -> None:
    import asyncio

    from gradview.viewer.app import GradviewApp
    from gradview.viewer.export_folder_screen import ExportFolderScreen

    chosen = tmp_path / "chosen"
    app = GradviewApp(mlp_session)

    async def run() -> tuple[str, list[str]]:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_for_layouts()
            await pilot.press("e")
            await pilot.pause()
            assert isinstance(app.screen, ExportFolderScreen)
            field = app.screen.query_one("#export-folder-path")
            offered = field.value
            field.value = str(chosen)
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            await pilot.press("e")  # no second question: the same folder
            await pilot.pause()
            assert not isinstance(app.screen, ExportFolderScreen)
            await app.workers.wait_for_complete()
            await pilot.pause()
            return offered, [str(n.message) for n in app._notifications]

    offered, notes = asyncio.run(run())
    assert offered == str(default_export_dir(mlp_session.name))
    assert sorted(p.name for p in chosen.iterdir()) == ["000-Input-main-2.svg", "000-Input-main.svg"]
    assert any(str(chosen) in note for note in notes), notes


def test_escape_at_the_question_writes_nothing(tmp_path: Path, mlp_session) -> None:
    import asyncio

    from gradview.viewer.app import GradviewApp

    app = GradviewApp(mlp_session)

    async def run() -> list[str]:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_for_layouts()
            await pilot.press("e")
            await pilot.pause()
            await pilot.press("escape")
            await pilot.pause()
            return [str(n.message) for n in app._notifications]

    notes = asyncio.run(run())
    assert not default_export_dir(mlp_session.name).exists()
    assert any("nothing written" in note for note in notes), notes

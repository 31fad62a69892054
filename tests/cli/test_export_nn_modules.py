"""Issue 10, acceptance 2: ``gradview export model.py:build --svg DIR --all``
writes every step for every common nn module (traced; the scripted forms run
the same training step in tests/runtime/test_nn_modules.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.viewer.session import load_target

from ..runtime.nn_modules import CASES

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(CASES))
def test_export_writes_every_step(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    builder = tmp_path / "model.py"
    builder.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from tests.runtime.nn_modules import build_case\n\n\n"
        f"def build():\n    return build_case({name!r})\n"
    )
    out = tmp_path / "svg"
    assert main(["export", f"{builder}:build", "--svg", str(out), "--all"]) == 0, capsys.readouterr().err
    steps = len(load_target(f"{builder}:build").trace)
    written = sorted(out.glob("*.svg"))
    assert len(written) == steps > 0
    assert f"wrote {steps} SVG files" in capsys.readouterr().out

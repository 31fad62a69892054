"""A TORCH_TRACE log opened by its file name is read as one, however long the
path of the torch file its first line names (a pip-installed torch's is long)."""

from __future__ import annotations

from pathlib import Path

from gradview.loaders.targets import load_target

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "torch_trace" / "mlp.log"
LONG = ".venv/lib/python3.11/site-packages/torch/"


def test_a_log_whose_lines_name_a_long_torch_path_opens_as_a_torch_trace_log(tmp_path: Path) -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    first = text.splitlines()[0]
    assert " torch/" in first and len(first.split("]")[0]) < 64 + len(LONG)
    moved = text.replace(" torch/", " " + LONG)
    assert len(moved.splitlines()[0].split("]")[0]) > 64, "the envelope runs past 64 bytes"
    log = tmp_path / "dedicated_log_torch_trace_rank_0.log"
    log.write_text(moved, encoding="utf-8")
    expected = load_target(str(FIXTURE)).trace
    trace = load_target(str(log)).trace
    assert [(s.pass_name, str(s.which)) for s in trace] == [(s.pass_name, str(s.which)) for s in expected]

"""``gradview export``: SVGs per step, an HTML page, and one-line errors."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradview.cli.main import main
from gradview.runtime import GraphName
from gradview.runtime.pass_trace import normalize_pass_name
from gradview.viewer.export import export_graph_name, svg_file_name
from gradview.viewer.model import View
from gradview.viewer.session import load_target

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "mlp.ir")


@pytest.fixture(scope="module")
def example_trace():
    return load_target(EXAMPLE).trace


def _name(trace, step, view=View.WHOLE, dg=0) -> str:
    return svg_file_name(step.index, step.pass_name, export_graph_name(trace, step.index, view, dg))


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("gradview: error: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_all_writes_one_valid_svg_per_step(tmp_path, capsys, example_trace):
    out = tmp_path / "svg"
    assert main(["export", EXAMPLE, "--svg", str(out), "--all"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(_name(example_trace, s) for s in example_trace)
    for name in names:
        assert ET.parse(out / name).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert f"wrote {len(example_trace)} SVG files" in capsys.readouterr().out


@pytest.mark.parametrize("spelling", ["specializeAutogradZero", "specialize_autograd_zero"])
def test_step_writes_the_steps_of_one_pass(tmp_path, example_trace, spelling):
    out = tmp_path / "svg"
    assert main(["export", EXAMPLE, "--svg", str(out), "--step", spelling]) == 0
    wanted = [s for s in example_trace if normalize_pass_name(s.pass_name) == "specializeautogradzero"]
    assert len(wanted) >= 2  # the main graph's and the backward executor's
    assert sorted(p.name for p in out.iterdir()) == sorted(_name(example_trace, s) for s in wanted)


def test_default_is_the_last_step_and_html_too(tmp_path, example_trace):
    out, page = tmp_path / "svg", tmp_path / "page" / "steps.html"
    assert main(["export", EXAMPLE, "--svg", str(out), "--html", str(page), "--theme", "light"]) == 0
    last = example_trace[len(example_trace) - 1]
    assert [p.name for p in out.iterdir()] == [_name(example_trace, last)]
    text = page.read_text(encoding="utf-8")
    assert text.count('class="step ') == 1 and f'data-index="{last.index}"' in text


def test_backward_view_exports_the_steps_from_differentiate_on(tmp_path, capsys, example_trace):
    out = tmp_path / "svg"
    assert main(["export", EXAMPLE, "--svg", str(out), "--all", "--view", "backward"]) == 0
    indices = sorted(int(p.name[:3]) for p in out.iterdir())
    first_df = min(s.index for s in example_trace if s.which == GraphName.backward(0))
    # differentiate records f then df: its f half already shows df.
    shown = list(range(first_df - 1, len(example_trace)))
    assert indices[0] == shown[0] and indices[-1] == shown[-1] and set(indices) <= set(shown)
    # A pass recorded on f then on df draws df once: one file per distinct picture.
    same = len(shown) - len(indices)
    assert same > 0 and f"({same} steps drew the same picture as the step before, of the same pass)" in capsys.readouterr().out


def test_missing_target_is_a_one_line_error(tmp_path, capsys):
    assert main(["export", str(tmp_path / "nope.ir"), "--svg", str(tmp_path / "out")]) != 0
    assert "nope.ir" in _one_line_error(capsys)
    assert not (tmp_path / "out").exists()


def test_unknown_pass_is_a_one_line_error(tmp_path, capsys):
    assert main(["export", EXAMPLE, "--svg", str(tmp_path / "out"), "--step", "NoSuchPass"]) != 0
    err = _one_line_error(capsys)
    assert "NoSuchPass" in err and "specializeAutogradZero" in err  # names the passes there are


def test_view_with_nothing_to_show_is_a_one_line_error(tmp_path, capsys):
    assert main(["export", EXAMPLE, "--svg", str(tmp_path / "out"), "--view", "joint", "--dg", "7"]) != 0
    assert "DifferentiableGraph 7" in _one_line_error(capsys)


def test_nothing_to_write_is_a_one_line_error(capsys):
    assert main(["export", EXAMPLE]) != 0
    assert "--svg" in _one_line_error(capsys)


def test_missing_dot_gives_the_fix(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["export", EXAMPLE, "--svg", str(tmp_path / "out"), "--all"]) != 0
    err = _one_line_error(capsys)
    assert "dot" in err and "apt-get install graphviz" in err
    assert not (tmp_path / "out").exists()

"""Slides: every teaching example's joint view at the ops level is a 16:9
picture, 1600x900 as PNG, whose labels are at least 14 px tall when it fills
the slide and which draws none of the shape plumbing; PDF, labels without
types, and the command line."""

from __future__ import annotations

import re
import struct
from functools import cache
from pathlib import Path
from xml.etree import ElementTree

import pytest

from gradview.cli.main import main
from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.detail import Detail
from gradview.viewer.model import View
from gradview.viewer.session import load_target
from gradview.viewer.slides import (
    MIN_TEXT_PX,
    SLIDE_HEIGHT,
    SLIDE_WIDTH,
    export_trace_pictures,
    slide_label,
)
from gradview.viewer.views import view_unavailable_reason

from .conftest import ROOT

SVG = "{http://www.w3.org/2000/svg}"
PLUMBING = ("aten::size", "_size_if_not_equal", "prim::Constant", "ListConstruct", "TupleConstruct")
TEACHING = sorted((ROOT / "examples" / "teaching").glob("*.py"))


@cache
def _trace(path: Path) -> PassTrace:
    # x * w is one op: PyTorch's smallest group is 2 (the README shows it with --min-group-size 1)
    return load_target(f"{path}:f", min_group_size=1 if path.stem == "x_times_w" else None).trace


def _with_joint(path: Path) -> PassTrace:
    trace = _trace(path)
    if view_unavailable_reason(trace, len(trace) - 1, View.JOINT, 0) is not None:
        pytest.skip("no DifferentiableGraph: no joint view")
    return trace


@pytest.mark.parametrize("path", TEACHING, ids=[p.stem for p in TEACHING])
def test_a_teaching_slide_is_16_by_9_and_its_png_1600_by_900(path: Path, tmp_path: Path) -> None:
    trace = _with_joint(path)
    last = [len(trace) - 1]
    (svg_path, _), = export_trace_pictures(trace, tmp_path, View.JOINT, 0, last, "svg", Detail.OPS)
    width, height = _size(ElementTree.fromstring(svg_path.read_text(encoding="utf-8")))
    assert width / height == pytest.approx(16 / 9, rel=0.01)
    (png, _), = export_trace_pictures(trace, tmp_path, View.JOINT, 0, last, "png", Detail.OPS)
    assert struct.unpack(">II", png.read_bytes()[16:24]) == (SLIDE_WIDTH, SLIDE_HEIGHT)


@pytest.mark.parametrize("path", TEACHING, ids=[p.stem for p in TEACHING])
def test_a_teaching_slide_has_labels_of_14_px_and_no_plumbing(path: Path, tmp_path: Path) -> None:
    trace = _with_joint(path)
    (svg_path, _), = export_trace_pictures(trace, tmp_path, View.JOINT, 0, [len(trace) - 1], "svg", Detail.OPS)
    root = ElementTree.fromstring(svg_path.read_text(encoding="utf-8"))
    scale = SLIDE_WIDTH / _size(root)[0]  # pixels per point when the picture fills the slide
    labels = [t for g in root.iter(f"{SVG}g") if (g.get("id") or "").startswith("node_") for t in g.iter(f"{SVG}text")]
    smallest = min(float(t.get("font-size")) for t in labels) * scale
    assert smallest >= MIN_TEXT_PX, f"labels are {smallest:.1f} px on a {SLIDE_WIDTH}x{SLIDE_HEIGHT} slide"
    drawn = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert not [word for word in PLUMBING if word in drawn]


def _size(root: ElementTree.Element) -> tuple[float, float]:
    width, height = (float(root.get(side, "").removesuffix("pt")) for side in ("width", "height"))
    return width, height


def test_a_slide_is_also_a_pdf_and_never_replaces_a_file(tmp_path: Path) -> None:
    trace = _with_joint(ROOT / "examples" / "teaching" / "sin_times_x.py")
    first = export_trace_pictures(trace, tmp_path, View.BACKWARD, 0, [len(trace) - 1], "pdf", Detail.OPS)
    second = export_trace_pictures(trace, tmp_path, View.BACKWARD, 0, [len(trace) - 1], "pdf", Detail.OPS)
    (a, _), (b, _) = first[0], second[0]
    assert a != b and b.name == f"{a.stem}-2.pdf"
    assert a.read_bytes().startswith(b"%PDF") and b.read_bytes() == a.read_bytes()


def test_slide_labels_name_values_without_their_types() -> None:
    assert slide_label("aten::mul\n%y : Double(3, 4)") == "aten::mul\n%y"
    assert slide_label("%x.1 : Float(2, strides=[1], requires_grad=1, device=cpu)") == "%x.1"
    assert slide_label("2") == "2"


def test_export_style_slide_writes_a_png_beside_the_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = ROOT / "examples" / "teaching" / "sin_times_x.py"
    target = tmp_path / source.name
    target.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    arguments = ["export", f"{target}:f", "--view", "joint", "--detail", "ops", "--style", "slide", "--format", "png"]
    assert main(arguments) == 0
    assert main(arguments) == 0  # a second export: a second folder, nothing replaced
    out = capsys.readouterr().out
    assert re.findall(r"wrote 1 PNG slide to (\S+)", out) == [
        str(tmp_path / "sin_times_x-f-export"), str(tmp_path / "sin_times_x-f-export-2")
    ]
    for folder in ("sin_times_x-f-export", "sin_times_x-f-export-2"):
        (png,) = (tmp_path / folder).iterdir()
        assert png.suffix == ".png" and "joint" in png.name

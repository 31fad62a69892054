"""SVG and HTML export: valid files, palette colours, faded removed nodes, text that stays text."""

from __future__ import annotations

import os
import re
import tempfile
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gradview.ir import parse_ir
from gradview.runtime import GraphName
from gradview.runtime.pass_trace import PassTrace
from gradview.viewer.export import (
    Frame,
    export_html,
    export_steps,
    frame_for_step,
    render_svg,
    svg_file_name,
)
from gradview.viewer.html_page import unpack
from gradview.viewer.layout import DotMissingError, union_layout
from gradview.viewer.model import Mark, Marks
from gradview.viewer.palette import LEGEND, PALETTES
from gradview.viewer.svg_dot import graphviz_text

from .graphs_for_tests import drawn as _drawn

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"


def _groups(root: ET.Element) -> dict[str, ET.Element]:
    return {g.get("id"): g for g in root.iter(SVG + "g") if g.get("id")}


def _shapes(group: ET.Element) -> list[ET.Element]:
    return [e for e in group.iter() if e.tag in (SVG + "polygon", SVG + "path")]


def _texts(group: ET.Element) -> list[str]:
    return [t.text or "" for t in group.iter(SVG + "text")]


def _stepper_data(page) -> dict:
    text = page if isinstance(page, str) else page.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/octet-stream" id="data">(.*?)</script>', text, re.S)
    assert found is not None
    return unpack(found.group(1))


def _numbers(text: str) -> list[int]:
    out: list[int] = []
    for run in filter(None, text.split(",")):
        if "*" in run:
            value, count = run.split("*")
            out += [int(value)] * int(count)
        else:
            start, _, end = run.partition("-")
            out += range(int(start), int(end or start) + 1)
    return out


def _step_pieces(data: dict, step: dict) -> list[str]:
    """A step's parts as SVG text, geometry filled in (as the page's script does)."""

    def geometry(match: re.Match) -> str:
        return '"' + data["geometry"][int(match.group(1))] + '"'

    return [re.sub(r'"@(\d+)"', geometry, data["pieces"][n]) for n in _numbers(step["parts"])]


def _frames(trace, which=None) -> list[Frame]:
    return [frame_for_step(step, _drawn(trace, step)) for step in trace if which is None or step.which == which]


# -- every step ---------------------------------------------------------------------------------
def test_every_step_of_the_example_exports_as_valid_svg(mlp_trace, tmp_path):
    frames = _frames(mlp_trace)
    paths = export_steps(frames, tmp_path)
    assert [p.name for p in paths] == [svg_file_name(f.index, f.pass_name) for f in frames]
    assert len(set(paths)) == len(mlp_trace)
    for frame, path in zip(frames, paths, strict=True):
        root = ET.parse(path).getroot()
        assert root.tag == SVG + "svg"
        groups = _groups(root)
        for node_id, node in frame.graph.nodes.items():
            group = groups[f"node_{node_id}"]
            assert _texts(group) == [line for line in node.label.splitlines() if line]
        for edge in frame.graph.edges:
            assert f"edge_{edge.source}_{edge.target}_{edge.value_id}" in groups


def test_a_node_is_drawn_at_the_same_place_in_every_step_of_the_stepper(mlp_trace, tmp_path):
    frames = _frames(mlp_trace, GraphName.main())
    data = _stepper_data(export_html(frames, tmp_path / "main.html"))
    where: dict[str, tuple[str, str]] = {}
    checked = 0
    for step in data["steps"]:
        for piece in _step_pieces(data, step):
            node = re.match(r'<g id="(node_-?\d+)"', piece)
            text = re.search(r'<text x="([^"]+)" y="([^"]+)"', piece)
            if node and text:
                checked += node.group(1) in where
                assert where.setdefault(node.group(1), text.groups()) == text.groups()
    assert checked > 100


def test_filenames_are_safe_and_stable():
    assert svg_file_name(4, "specializeAutogradZero") == "004-specializeAutogradZero.svg"
    assert svg_file_name(12, "EliminateDeadCode(f)") == "012-EliminateDeadCode_f.svg"
    assert svg_file_name(3, "../<x>/é") == "003-x.svg"
    assert svg_file_name(1000, "") == "1000-step.svg"


# -- colours -------------------------------------------------------------------------------------
@pytest.mark.parametrize("theme", ["dark", "light"])
def test_captured_values_are_drawn_in_their_palette_colour(mlp_trace, theme):
    step = next(s for s in mlp_trace if s.which == GraphName.forward(0) and s.annotations.get("df_input_captured_outputs"))
    graph = _drawn(mlp_trace, step)
    producer = {e.value_id: e.source for e in graph.edges}
    marks = Marks()
    captured = {}
    for j, position in enumerate(step.annotations["df_input_captured_outputs"]):
        value = step.graph.returns[position]
        marks.mark_value(value, Mark.CAPTURED_OUTPUT, j)
        marks.mark_node(producer[value], Mark.CAPTURED_OUTPUT, j)
        captured.setdefault(producer[value], j)
    style = PALETTES[theme][Mark.CAPTURED_OUTPUT]
    plain = PALETTES[theme][None]
    root = ET.fromstring(render_svg(graph, marks, union_layout([graph]), theme))
    groups = _groups(root)
    for node_id, j in captured.items():
        shape = _shapes(groups[f"node_{node_id}"])[0]
        assert (shape.get("fill"), shape.get("stroke")) == (style.fill, style.stroke)
        assert f"captured output #{j}" in _texts(groups[f"badge_{node_id}"])[0]
    for node_id in graph.nodes.keys() - captured.keys():
        assert _shapes(groups[f"node_{node_id}"])[0].get("fill") == plain.fill
    for edge in graph.edges:
        colour = style.stroke if edge.value_id in marks.values else plain.stroke
        assert _shapes(groups[f"edge_{edge.source}_{edge.target}_{edge.value_id}"])[0].get("stroke") == colour
    # The legend names the marks used, and only those.
    assert LEGEND[Mark.CAPTURED_OUTPUT] in _texts(groups[f"legend_text_{Mark.CAPTURED_OUTPUT.value}"])
    assert f"legend_{Mark.VJP_INPUT.value}" not in groups


def test_removed_nodes_are_faded(mlp_trace):
    steps = [s for s in mlp_trace if s.which == GraphName.main()]
    before, after = next((a, b) for a, b in zip(steps, steps[1:], strict=False) if a.node_ids() - b.node_ids())
    old, graph = _drawn(mlp_trace, before), _drawn(mlp_trace, after)
    gone = set(old.nodes) - set(graph.nodes)
    for node_id in gone:
        graph.add_node(old.nodes[node_id])
    graph.edges += [e for e in old.edges if e.source in gone or e.target in gone]
    graph.ghosts = gone
    marks = Marks()
    for node_id in gone:
        marks.mark_node(node_id, Mark.REMOVED)
    layout = union_layout([old, graph])
    assert not [g for g in _groups(ET.fromstring(render_svg(graph, marks, layout))) if g.startswith("node_") and int(g[5:]) in gone]
    groups = _groups(ET.fromstring(render_svg(graph, marks, layout, leftovers=True)))
    for node_id in graph.nodes:
        group = groups[f"node_{node_id}"]
        shape = _shapes(group)[0]
        faded = node_id in gone
        assert ("faded" in group.get("class", "").split()) == faded
        assert (float(shape.get("fill-opacity", "1")) < 0.5) == faded
        assert (shape.get("stroke-dasharray") is not None) == faded


# -- hostile text --------------------------------------------------------------------------------
# Short enough for the viewer's label lines (36 characters with "%" and the type).
HOSTILE = ["<script>alert(1)</script>", 'say"hi\\N', "a&amp;b", "λ→∂ü", "<img src=x onerror=f()>"]
HOSTILE_PASS = "<b>bold</b> & \"quoted\" <script>alert('pass')</script>"


def _hostile_trace() -> PassTrace:
    graph = parse_ir(
        "graph(%x.λ : Tensor,\n      %é : Tensor):\n"
        '  %s : str = prim::Constant[value="</template><script>alert(2)</script> & ü"]()\n'
        "  %y : Tensor = aten::mul(%x.λ, %é)\n"
        "  %z : Tensor = aten::add(%y, %é, %s)\n"
        "  %w : Tensor = aten::neg(%z)\n"
        "  return (%w)\n"
    )
    # The names go on values the drawing labels by name (a constant shows its value).
    values = [*graph.inputs(), *(n.outputs()[0] for n in graph.nodes() if n.kind() != "prim::Constant")]
    trace = PassTrace()
    trace.record("Input", graph, changed=False)
    for value, name in zip(values, HOSTILE, strict=False):
        value.set_debug_name(name)
    trace.record(HOSTILE_PASS, graph)
    return trace


def test_hostile_names_come_out_as_text_in_the_svg():
    trace = _hostile_trace()
    graph = _drawn(trace, trace[1])
    svg = render_svg(graph, Marks(), union_layout([graph]), title=HOSTILE_PASS)
    root = ET.fromstring(svg)
    assert not [e for e in root.iter() if e.tag.split("}")[-1] in ("script", "img", "b", "foreignObject")]
    assert "<script" not in svg and "<img" not in svg
    shown = "\n".join(t.text or "" for t in root.iter(SVG + "text"))
    tooltips = "\n".join(e.get(XLINK + "title", "") for e in root.iter())
    for name in HOSTILE:
        assert "%" + name in shown
        assert "%" + name in tooltips
    assert "</template><script>alert(2)</script> &" in tooltips  # the string constant, as printed


def test_graphviz_never_sees_an_escape_or_a_quote():
    text = graphviz_text('a"b\\N&amp;<x>\x01\nline two')
    assert '"' not in text and "&" not in text and "<" not in text
    assert text.count("\\") == 1 and "\\n" in text  # only the line break
    assert "\x01" not in text


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.starts: list[str] = []
        self.items: list[dict[str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.starts.append(tag)
        if tag == "li":
            self.items.append(dict(attrs))


def test_hostile_names_come_out_as_text_in_the_html(tmp_path):
    trace = _hostile_trace()
    frames = [frame_for_step(step, _drawn(trace, step)) for step in trace]
    page = export_html(frames, tmp_path / "steps.html").read_text(encoding="utf-8")
    tags = _Tags()
    tags.feed(page)
    assert tags.starts.count("script") == 2  # the page's own, and its data (not run)
    assert page.count('<script type="application/octet-stream" id="data">') == 1
    assert "img" not in tags.starts and "b" not in tags.starts
    assert [item["data-pass"] for item in tags.items if "step" in item.get("class", "")] == ["Input", HOSTILE_PASS]
    data = _stepper_data(page)
    for step in data["steps"]:  # each step's picture is well-formed XML on its own
        ET.fromstring(f'<svg xmlns="{SVG[1:-1]}" xmlns:xlink="{XLINK[1:-1]}">{"".join(_step_pieces(data, step))}</svg>')


def test_html_page_holds_each_distinct_part_once(mlp_trace, tmp_path):
    frames = _frames(mlp_trace, GraphName.main())
    page = export_html(frames, tmp_path / "main.html").read_text(encoding="utf-8")
    tags = _Tags()
    tags.feed(page)
    steps = [item for item in tags.items if "step" in item.get("class", "").split()]
    assert len(steps) == len(frames)
    assert [int(item["data-index"]) for item in steps] == [f.index for f in frames]
    data = _stepper_data(page)
    assert len(set(data["pieces"])) == len(data["pieces"])
    assert len(set(data["geometry"])) == len(data["geometry"])
    used = sum(len(_numbers(step["parts"])) for step in data["steps"])
    assert len(data["pieces"]) < used / 4  # steps share their nodes and edges
    assert "Content-Security-Policy" in page and "http://" not in page.split("<script", 1)[0]


def test_export_without_graphviz_says_how_to_install_it(monkeypatch, tmp_path, mlp_trace):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DotMissingError, match="apt-get install graphviz"):
        export_steps(_frames(mlp_trace, GraphName.main())[:2], tmp_path / "out")
    assert not (tmp_path / "out").exists()


# -- in a real browser ---------------------------------------------------------------------------
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="module")
def browser():
    if os.environ.get("GRADVIEW_NO_BROWSER") == "1":
        pytest.skip("GRADVIEW_NO_BROWSER=1: the browser test is switched off")
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.fail(
            f"{CHROMIUM} or {CHROMEDRIVER} is missing: run `make test`, which installs chromium and "
            "chromium-driver (or set GRADVIEW_NO_BROWSER=1 to skip this test)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    profile = tempfile.TemporaryDirectory()
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile.name}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()
    profile.cleanup()


def _press(driver, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()


def _open(driver, page: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page.resolve().as_uri())
    WebDriverWait(driver, 10).until(lambda d: d.find_element("tag name", "body").get_attribute("data-ready") == "true")


def _shown(driver) -> tuple[str, str]:
    body = driver.find_element("tag name", "body")
    return body.get_attribute("data-step"), driver.find_element("id", "step-pass").text


def test_html_steps_with_the_arrow_keys_in_a_browser(browser, mlp_trace, tmp_path):
    from selenium.webdriver.common.keys import Keys

    frames = _frames(mlp_trace, GraphName.backward(0))
    page = export_html(frames, tmp_path / "backward.html")
    _open(browser, page)
    first, second, last = frames[0], frames[1], frames[-1]
    assert _shown(browser) == (str(first.index), first.pass_name)
    _press(browser, Keys.ARROW_RIGHT)
    assert _shown(browser) == (str(second.index), second.pass_name)
    _press(browser, Keys.ARROW_LEFT)
    assert _shown(browser) == (str(first.index), first.pass_name)
    _press(browser, Keys.ARROW_LEFT)  # no step before the first
    assert _shown(browser) == (str(first.index), first.pass_name)
    _press(browser, Keys.END)
    assert _shown(browser) == (str(last.index), last.pass_name)
    _press(browser, Keys.ARROW_DOWN)  # no step after the last
    assert _shown(browser) == (str(last.index), last.pass_name)
    _press(browser, Keys.ARROW_UP)
    assert _shown(browser)[0] == str(frames[-2].index)
    _press(browser, Keys.HOME)
    assert _shown(browser) == (str(first.index), first.pass_name)
    state = browser.find_element("id", "step-state").text
    assert state == ("changed" if first.changed else "unchanged")
    assert browser.find_element("id", "step-which").text == f"[{first.which}]"
    # The picture shown is the step's: its node ids are the step's.
    _press(browser, Keys.END)
    drawn = browser.execute_script(
        "return Array.from(document.querySelectorAll('#stage g.node[id^=node_]')).map(g => g.id)"
    )
    assert sorted(drawn) == sorted(f"node_{i}" for i in last.graph.nodes)


def test_hostile_names_stay_text_in_a_browser(browser, tmp_path):
    from selenium.webdriver.common.keys import Keys

    trace = _hostile_trace()
    frames = [frame_for_step(step, _drawn(trace, step)) for step in trace]
    page = export_html(frames, tmp_path / "hostile.html", title=HOSTILE[0])
    _open(browser, page)
    _press(browser, Keys.END)
    assert browser.title == HOSTILE[0]  # shown as the title's text, and no script changed it
    assert browser.execute_script("return document.querySelectorAll('script').length") == 2
    assert browser.execute_script("return document.querySelectorAll('img, b, #stage script').length") == 0
    assert browser.find_element("id", "step-pass").text == HOSTILE_PASS
    shown = browser.execute_script("return document.getElementById('stage').textContent")
    for name in HOSTILE:
        assert "%" + name in shown

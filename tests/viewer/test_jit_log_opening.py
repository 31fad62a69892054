"""A JIT log opens on the user's graph, not on a helper graph TorchScript
compiled first; each of its steps has a description; its HTML stepper opens
on that graph with a box in view."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from gradview.loaders.jit_log import load_jit_log, parse_jit_log
from gradview.viewer.app import GradviewApp
from gradview.viewer.export import export_trace_html
from gradview.viewer.pass_docs import pass_doc
from gradview.viewer.session import Session
from gradview.viewer.view_steps import opening_step

from ..loaders.test_jit_log import HELPER_FIRST
from .driving import drive
from .test_export import browser as browser  # the headless Chromium fixture, re-exported for pytest

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "runtime" / "data"


def test_a_log_opens_on_the_first_main_graph_that_takes_inputs() -> None:
    trace = parse_jit_log(HELPER_FIRST)
    assert opening_step(trace) == 2 and trace[2].graph.params
    assert opening_step(load_jit_log(str(LOGS / "jit_log_graph_executor.log"))) == 0  # no helper there


def test_every_step_of_the_logs_has_a_description() -> None:
    names = {s.pass_name for s in parse_jit_log(HELPER_FIRST)}
    for log in LOGS.glob("*.log"):
        names |= {s.pass_name for s in load_jit_log(str(log))}
    assert {name for name in names if not pass_doc(name)} == set()
    assert pass_doc("inlining") == pass_doc("Inline")
    assert pass_doc("Optimizing diff node 3") == pass_doc("Optimizing diff node 0") != ""


def test_the_app_opens_a_log_on_the_users_graph(tmp_path: Path) -> None:
    path = tmp_path / "helper_first.log"
    path.write_text(HELPER_FIRST)
    seen: list[int] = []

    async def script(app: GradviewApp, pilot: Pilot) -> None:
        seen.append(app.index)

    drive(Session(str(path), load_jit_log(str(path))), script, (160, 45))
    assert seen == [2]


def test_the_html_stepper_opens_on_the_users_graph_with_a_box_in_view(browser, tmp_path: Path) -> None:
    from .test_export import _open, _shown

    trace = parse_jit_log(HELPER_FIRST)
    page = export_trace_html(trace, tmp_path / "log.html")
    _open(browser, page)
    assert _shown(browser) == ("2", "runProfilingInsensitiveOptimizations")
    assert _boxes_in_view(browser) > 0


def test_a_step_with_no_box_in_view_scrolls_to_one(browser, mlp_trace, tmp_path: Path) -> None:
    """Scrolled to a spot of the picture where no box is, the next step (the same
    picture: its pass changed nothing, so the scroll would stay) brings a box into view."""
    from selenium.webdriver.common.keys import Keys

    from .test_export import _open, _press, _shown

    steps = list(mlp_trace)
    same = next(
        s for s, before in zip(steps[1:], steps, strict=False) if not s.changed and s.which == before.which
    )
    page = export_trace_html(mlp_trace, tmp_path / "mlp.html")
    browser.set_window_size(1000, 500)  # a stage narrower than the picture (this module's own browser)
    _open(browser, page)
    _press(browser, "f")  # full size: the page opens with the whole picture in view
    while int(_shown(browser)[0]) < same.index - 1:
        _press(browser, Keys.ARROW_RIGHT)
    assert browser.execute_script(_FIND_EMPTY_SPOT) is not None, "no spot without a box at this size"
    assert _boxes_in_view(browser) == 0
    _press(browser, Keys.ARROW_RIGHT)
    assert _shown(browser)[0] == str(same.index)
    assert _boxes_in_view(browser) > 0


_IN_VIEW = """
var stage = document.getElementById('stage'), view = stage.getBoundingClientRect(), n = 0;
document.querySelectorAll('#stage g.node').forEach(function (g) {
  var r = g.getBoundingClientRect();
  if (r.right > view.left && r.left < view.right && r.bottom > view.top && r.top < view.bottom) { n++; }
});
"""

# Scroll the stage, on a grid, until no box is in view; the spot found, or null.
_FIND_EMPTY_SPOT = _IN_VIEW.replace("var stage", "function count() { var stage").replace(
    "});\n", "});\nreturn n; }\n", 1
) + """
var stage = document.getElementById('stage');
for (var y = 0; y <= stage.scrollHeight; y += 40) {
  for (var x = 0; x <= stage.scrollWidth; x += 40) {
    stage.scrollLeft = x; stage.scrollTop = y;
    if (count() === 0) { return [x, y]; }
  }
}
return null;
"""


def _boxes_in_view(browser) -> int:
    return browser.execute_script(_IN_VIEW + "return n;")

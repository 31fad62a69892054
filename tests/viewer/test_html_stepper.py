"""The HTML stepper for students (issue 23, point 6), in headless Chromium.

On ``examples/teaching/sin_times_x.py:f``'s joint view: the page opens with the
whole picture in the window (fit goes below 80%), ``n`` and ``p`` skip the
steps whose picture did not change, the pass docs are rendered from their
Markdown (no raw ``**``), ``#step=N`` opens step N and the address follows the
step shown, the list tags f and df steps, and the counts beside the picture
are ``gradview trace --changes``'s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.runtime.trace_changes import step_changes
from gradview.viewer.doc_markdown import markdown_blocks
from gradview.viewer.export import export_trace_html
from gradview.viewer.model import View
from gradview.viewer.session import load_target

from .test_export import _open, _press, _shown, _stepper_data
from .test_export import browser as browser  # the headless Chromium fixture, re-exported for pytest

ROOT = Path(__file__).resolve().parents[2]
SIN_TIMES_X = ROOT / "examples" / "teaching" / "sin_times_x.py"


@pytest.fixture(scope="module")
def joint(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    trace = load_target(f"{SIN_TIMES_X}:f").trace
    page = export_trace_html(trace, tmp_path_factory.mktemp("stepper") / "joint.html", View.JOINT, theme="light")
    return page, trace


def test_the_counts_are_trace_changes_and_steps_are_tagged(joint) -> None:
    page, trace = joint
    data = _stepper_data(page)
    changes = {change.index: change for change in step_changes(trace)}
    assert {step["tag"] for step in data["steps"]} >= {"f", "df"}
    for step in data["steps"]:
        change = changes[step["index"]]
        assert step["counts"][:2] == [change.added, change.removed], step["pass"]
        assert len(step["removed"]) == min(change.removed, 40)
    html = page.read_text(encoding="utf-8")
    assert '<span class="tag">f</span>' in html and '<span class="tag">df</span>' in html


def test_docs_are_markdown_blocks() -> None:
    blocks = markdown_blocks("**Bold.** A `code` span and *emphasis*.\n\n* one\n* two `x`\n\n    literal\n    code")
    assert blocks == [
        ["p", [["b", "Bold."], ["t", " A "], ["c", "code"], ["t", " span and "], ["i", "emphasis"], ["t", "."]]],
        ["ul", [[["t", "one"]], [["t", "two "], ["c", "x"]]]],
        ["pre", "literal\ncode"],
    ]


def test_the_page_opens_fitted_with_the_whole_picture_in_view(browser, joint) -> None:
    page, _ = joint
    browser.set_window_size(1280, 720)
    _open(browser, page)
    stage, picture = browser.execute_script(
        "var s = document.getElementById('stage').getBoundingClientRect(),"
        " p = document.querySelector('#stage svg').getBoundingClientRect();"
        " return [[s.left, s.top, s.right, s.bottom], [p.left, p.top, p.right, p.bottom]];"
    )
    assert stage[0] <= picture[0] and stage[1] <= picture[1]
    assert picture[2] <= stage[2] + 0.5 and picture[3] <= stage[3] + 0.5
    # The joint view is wide: whole, it is drawn below 80%.
    assert float(browser.find_element("tag name", "body").get_attribute("data-zoom")) < 0.8


def test_n_and_p_skip_unchanged_steps(browser, joint) -> None:
    page, _ = joint
    data = _stepper_data(page)
    changed = [step["index"] for step in data["steps"] if step["changed"]]
    assert len(changed) < len(data["steps"]) / 2  # most steps change nothing: worth skipping
    _open(browser, page)
    first = int(_shown(browser)[0])
    _press(browser, "n")
    after = next(i for i in changed if i > first)
    assert int(_shown(browser)[0]) == after
    _press(browser, "n")
    assert int(_shown(browser)[0]) == next(i for i in changed if i > after)
    _press(browser, "p")
    assert int(_shown(browser)[0]) == after


def test_docs_are_rendered_not_raw_markdown(browser, joint) -> None:
    page, trace = joint
    zero = next(s.index for s in trace.select("specializeAutogradZero") if s.which.is_backward_executor)
    browser.get(page.resolve().as_uri() + f"#step={zero}")
    _open_ready(browser)
    doc = browser.find_element("id", "doc-text")
    assert "**" not in doc.text and "`" not in doc.text
    assert "AutogradZero." in [e.text for e in doc.find_elements("tag name", "strong")]
    assert doc.find_elements("tag name", "code") and doc.find_elements("tag name", "li")


def test_a_step_link_opens_that_step_and_the_address_follows(browser, joint) -> None:
    page, _ = joint
    data = _stepper_data(page)
    target = data["steps"][len(data["steps"]) // 2]["index"]
    browser.get(page.resolve().as_uri() + f"#step={target}")
    _open_ready(browser)
    assert _shown(browser)[0] == str(target)
    _press(browser, "\ue014")  # the right arrow
    shown = _shown(browser)[0]
    assert shown != str(target)
    assert browser.execute_script("return location.hash") == f"#step={shown}"


def _open_ready(driver) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 10).until(lambda d: d.find_element("tag name", "body").get_attribute("data-ready") == "true")


def test_the_header_says_what_differs_from_pytorch(tmp_path: Path) -> None:
    trace = load_target(f"{ROOT / 'examples' / 'teaching' / 'x_times_w.py'}:f", min_group_size=1).trace
    page = export_trace_html(trace, tmp_path / "x.html", View.JOINT).read_text(encoding="utf-8")
    assert '<span id="note">min group size 1 (not PyTorch&#x27;s 2)</span>' in page
    plain = export_trace_html(load_target(f"{SIN_TIMES_X}:f").trace, tmp_path / "s.html", View.JOINT)
    assert 'id="note"' not in plain.read_text(encoding="utf-8")

"""The views, one record each (viewer/view_registry.py): the app's keys, the view
bar's names and the cycle order come from the records, and a view member is named
in a handful of modules, so adding a view stays a change in one module plus its drawing."""

from __future__ import annotations

import re
from pathlib import Path

from gradview.viewer.app import GradviewApp
from gradview.viewer.graph_panel import VIEW_NAMES
from gradview.viewer.model import View
from gradview.viewer.view_registry import VIEWS, view_showing, view_spec

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ir", "autodiff", "runtime", "loaders", "viewer", "cli", "kernels", "ops")
REGISTRY = Path("viewer/view_registry.py")
# Outside the registry, the modules that still name a view member, and why: the
# inspector reads the joint view's marks and shows the whole view by default,
# the edge values read the joint view's steps, the layout service builds the
# whole views' keys, a slide shows the whole view by default. The list may
# shrink; it must not grow (a new view would touch them all again).
MAY_NAME_A_VIEW = {
    Path("viewer/inspector.py"): 3,
    Path("viewer/edge_values.py"): 1,
    Path("viewer/layout_service.py"): 1,
    Path("viewer/slides.py"): 1,
}


def _named_views() -> dict[Path, int]:
    """Module -> how many times it names ``View.<MEMBER>``, outside the registry."""
    pattern = re.compile(r"\bView\.(" + "|".join(member.name for member in View) + r")\b")
    found: dict[Path, int] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            count = len(pattern.findall(path.read_text(encoding="utf-8")))
            if count and relative != REGISTRY:
                found[relative] = count
    return found


def test_view_members_are_named_in_a_handful_of_modules_outside_the_registry() -> None:
    named = _named_views()
    grown = {path: count for path, count in named.items() if count > MAY_NAME_A_VIEW.get(path, 0)}
    assert not grown, f"name views through viewer/view_registry.py (view_spec, VIEWS, DEFAULT_VIEW): {grown}"


def test_every_view_has_one_record_with_its_own_key() -> None:
    assert [spec.view for spec in VIEWS] == list(View)
    keys = [spec.key for spec in VIEWS]
    assert len(set(keys)) == len(keys)
    assert all(view_spec(spec.view) is spec for spec in VIEWS)


def test_the_app_binds_each_views_key_and_the_view_bar_names_it() -> None:
    bound = {binding.key: binding.action for binding in GradviewApp.BINDINGS}  # type: ignore[union-attr]
    for spec in VIEWS:
        assert bound[spec.key] == f"view('{spec.view.value}')"
        assert VIEW_NAMES[spec.view] == spec.title


def test_a_view_is_found_by_the_halves_it_draws() -> None:
    for spec in VIEWS:
        assert view_showing(forward=spec.forward, backward=spec.backward) is spec.view
        assert spec.joint == (spec.forward and spec.backward)

"""The large-graph keys of the app: collapse (x, X), focus (f, <, >) and fan-out stubs (o).

:class:`LargeGraph` owns every view's :class:`~gradview.viewer.transforms.ViewTransform`
and the picture on screen; the app gives it the trace, the layout controller,
what is on screen (:class:`~gradview.viewer.screen_state.OnScreen`) and its
hooks, asks :meth:`LargeGraph.picture_of` what to draw, and sends it the keys.
A transformed layout is computed like the plain ones, in the layout service's
worker processes; until it arrives the plain picture stays on screen and the
view bar says "laying out…", so no key ever waits for it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import replace
from typing import Any

from rich.table import Table
from textual.widgets import Static

from gradview.runtime import PassTrace

from . import views
from .controller import Controller, layout_key
from .detail import Detail, next_detail
from .graph_analysis import GROUP_PREFIXES, collapsible_groups
from .layout_service import union_members
from .model import DrawGraph
from .module_tree import expanded, is_module_key, key_path, module_key
from .screen_state import AppHooks, OnScreen
from .transforms import MAX_HOPS, Picture, Transforms, ViewTransform, describe, transform_key

__all__ = ["LargeGraph"]


class LargeGraph:
    """Collapse, focus, stubs and the level of detail of the views on screen."""

    def __init__(
        self, trace: PassTrace, controller: Controller, shown: OnScreen, hooks: AppHooks, detail: Detail | None = None
    ) -> None:
        """Every view's transform, at ``detail`` (see :meth:`Transforms.for_trace`);
        without a level asked for, a first picture that does not fit opens one level up."""
        self.trace, self.controller, self.shown, self.hooks = trace, controller, shown, hooks
        self.transforms = Transforms.for_trace(trace, detail)
        self._detail_chosen = detail is not None
        self.waiting_key: Hashable | None = None  # the transformed layout the screen waits for
        self.picture: Picture | None = None  # the picture the transform gives (laid out or not)
        self.note = ""  # the view bar's words for the transform on screen

    def first_picture_fits(self, laid_out: bool) -> bool:
        """Called after each picture is shown: the first one laid out, unless the
        user chose the level, goes one level up (ir -> ops -> model) while it does
        not fit the canvas with its labels whole; True when it changed the level."""
        if self._detail_chosen or not laid_out:
            return False
        canvas = self.hooks.main().canvas
        detail = self.transforms.detail
        up = {Detail.IR: Detail.OPS, Detail.OPS: Detail.MODEL if self.transforms.modules else None}.get(detail)
        if up is None or canvas.fits_readably():
            self._detail_chosen = True  # the first picture is settled: the level is the user's from now on
            return False
        self.transforms.detail = up
        self.hooks.notify(f"detail: {up.value}: the {detail.value} picture does not fit whole (l switches)", timeout=4)
        return True

    def start_layouts(self) -> None:
        """Lay out every view at the level on screen: the plain union layouts at
        the IR level; above it, each view's picture as its transform folds it
        (the plain union of a real model is what takes dot over its limit)."""
        if self.transforms.detail is Detail.IR and not self.transforms.default_collapsed:
            self.controller.start()
            return
        self.controller.start(plain=False)
        trace, transforms = self.trace, self.transforms
        jobs = []
        for base in self.controller.view_keys():
            state = transforms.state(base)
            if state.restructures:
                jobs.append((
                    transform_key(base, state),
                    lambda base=base, state=state: transforms.layout_graph(
                        base, state, lambda: union_members(trace, base)  # type: ignore[arg-type]
                    ),
                ))
        self.controller.request_custom_later(jobs)  # behind the view on screen, asked for when it was drawn

    # -- what refresh_view draws ---------------------------------------------------------------
    def picture_of(self, drawing: DrawGraph, base: Hashable) -> Picture:
        """The picture of ``drawing`` (the step on screen, view ``base``) under the
        view's transform; the plain one (stubs kept) while its layout is computed."""
        state = self.transforms.state(base)
        picture = self.transforms.picture(drawing, base, state)
        self.picture = picture
        self.waiting_key = None
        shown = self.shown
        if shown.selected is not None and picture.shown_as(shown.selected) != shown.selected:
            shown.selected = picture.shown_as(shown.selected)  # a folded node: the box that shows it stands for it
        note = describe(picture, state, drawing)
        note = f"detail: {state.detail.value} (l)" + (f" · {note}" if note else "")
        if picture.key != base and picture.key not in self.controller.layouts:
            error = self.controller.layout_errors.get(picture.key)
            if error is None:
                self.waiting_key = picture.key
                self._request_transformed(base, state, picture.key)
                note += " · laying out…"
            else:
                note += f" · {error}"
            if state.detail is Detail.IR or base in self.controller.layouts:
                # The plain picture while the transformed one is laid out; above the
                # IR level the canvas waits instead (a real model's plain layout is the slow one).
                picture = self.transforms.picture(drawing, base, ViewTransform(stubs=state.stubs))
        self.note = note
        return picture

    def _request_transformed(self, base: Hashable, state: ViewTransform, key: Hashable) -> None:
        trace, transforms = self.trace, self.transforms
        self.controller.request_custom(
            key, lambda: transforms.layout_graph(base, state, lambda: union_members(trace, base))  # type: ignore[arg-type]
        )

    def inspect(self) -> None:
        """A selected collapsed box (or a node folded into one): the inspector names its group and node count."""
        picture = self.picture
        if picture is None or picture.collapsed is None:
            return
        shown, main = self.shown, self.hooks.main()
        if shown.selected in picture.collapsed.box_of:  # selected by id (the palette): its box stands for it
            shown.selected = picture.collapsed.box_of[shown.selected]
            main.canvas.selected = shown.selected
            main.canvas.refresh()
        if shown.selected not in picture.collapsed.members:
            return
        node = picture.graph.nodes.get(shown.selected)  # type: ignore[arg-type]
        if node is None:
            return
        title, _, count = node.label.partition("\n")
        table = Table(show_header=False, box=None, padding=(0, 1), expand=True)
        table.add_column(style="bold", no_wrap=True)
        table.add_column(overflow="fold")
        table.add_row("group", title)
        table.add_row("nodes", f"{count.strip('[]')} (collapsed: x expands it, X expands all)")
        main.details.query_one("#inspector", Static).update(table)

    # -- keys -------------------------------------------------------------------------------------
    def _view_drawing(self) -> tuple[Hashable, DrawGraph] | None:
        shown = self.shown
        reason = views.view_unavailable_reason(self.trace, shown.index, shown.view, shown.dg)
        if reason:
            self.hooks.notify(reason, severity="warning", timeout=4)
            return None
        base = layout_key(self.trace, shown.index, shown.view, shown.dg)
        return base, self.controller.draw(shown.index, shown.view, shown.dg)

    def _change(self, base: Hashable, state: ViewTransform, selected: Any = ...) -> None:
        self.transforms.set_state(base, state)
        if selected is not ...:
            self.shown.selected = selected
        self.hooks.redraw()

    def collapse_group(self) -> None:
        """x: fold the innermost group holding the selection into one box, or unfold a selected box."""
        found = self._view_drawing()
        if found is None:
            return
        base, drawing = found
        state = self.transforms.state(base)
        picture = self.picture
        if picture is not None and picture.collapsed is not None and self.shown.selected in picture.collapsed.groups:
            self.expand_box(base, drawing, state, picture)
            return
        if not self._fold_around(base, state, picture.graph if picture is not None else drawing):
            self.hooks.notify("select a node inside a module, a DifferentiableGraph, GradOf or If/Loop block "
                              "(or a folded box), then x", severity="warning", timeout=5)

    def fold_parent(self) -> None:
        """backspace: fold the module or group around the selection (a folded box
        included) into one box: one level up, the way back from enter."""
        found = self._view_drawing()
        if found is None:
            return
        base, drawing = found
        picture = self.picture
        if not self._fold_around(base, self.transforms.state(base), picture.graph if picture is not None else drawing):
            self.hooks.notify("the selection is in no module or group (backspace folds the one around it)",
                              severity="warning", timeout=4)

    def _fold_around(self, base: Hashable, state: ViewTransform, shown: DrawGraph) -> bool:
        """Fold the innermost module or group frame holding the selection in ``shown``
        (the picture on screen); False when there is none."""
        node = shown.nodes.get(self.shown.selected) if self.shown.selected is not None else None
        key = node.cluster if node is not None else None
        while key is not None and key in shown.clusters:
            cluster = shown.clusters[key]
            if (cluster.title.startswith(GROUP_PREFIXES) or is_module_key(key)) and key not in state.collapsed:
                inside = module_key(key_path(key) + ".") if is_module_key(key) else None
                kept = frozenset(k for k in state.collapsed if not (inside and k.startswith(inside)))
                new = replace(state, collapsed=kept | {key})
                self.transforms.set_state(base, new)
                self._change(base, new, self.transforms.box_id(key))
                return True
            key = cluster.parent
        return False

    def expand_box(self, base: Hashable, drawing: DrawGraph, state: ViewTransform, picture: Picture) -> None:
        """Unfold the selected box in place; a module's submodules come out folded, one level at a time."""
        assert picture.collapsed is not None and self.shown.selected is not None
        group = picture.collapsed.groups[self.shown.selected]
        members = picture.collapsed.members[self.shown.selected]
        first = next((i for i in members if i in drawing.nodes), None)
        focus = first if state.focus == self.shown.selected else state.focus  # a focus on the box: on its first node
        new = replace(state, collapsed=expanded(state.collapsed, group, self.transforms.modules), focus=focus)
        self.transforms.set_state(base, new)
        self._change(base, new, first)
        title = key_path(group) if is_module_key(group) else drawing.clusters[group].title if group in drawing.clusters else ""
        self.hooks.notify(f"expanded {title}" if title else "expanded", timeout=2)

    def next_detail(self) -> None:
        """l: the next level of detail (model -> ops -> ir), for every view."""
        self.transforms.detail = next_detail(self.transforms.detail)
        self.hooks.notify(f"detail: {self.transforms.detail.value}", timeout=2)
        self.hooks.redraw()

    def expand_clicked(self) -> bool:
        """A click on a folded module's box unfolds it (True when it did)."""
        picture = self.picture
        if picture is None or picture.collapsed is None or self.shown.selected not in picture.collapsed.groups:
            return False
        if not is_module_key(picture.collapsed.groups[self.shown.selected]):  # type: ignore[index]
            return False
        found = self._view_drawing()
        if found is None:
            return False
        base, drawing = found
        self.expand_box(base, drawing, self.transforms.state(base), picture)
        return True

    def collapse_all(self) -> None:
        """X: fold every group of the view, or unfold them all when any is folded."""
        found = self._view_drawing()
        if found is None:
            return
        base, drawing = found
        state = self.transforms.state(base)
        if state.collapsed:
            boxes = self.picture.collapsed.members if self.picture and self.picture.collapsed else {}
            selected = self.shown.selected
            selected = boxes[selected][0] if selected in boxes else selected
            focus = boxes[state.focus][0] if state.focus in boxes else state.focus
            self._change(base, replace(state, collapsed=frozenset(), focus=focus), selected)
            self.hooks.notify("every group expanded", timeout=2)
            return
        groups = frozenset(collapsible_groups(drawing))
        if not groups:
            self.hooks.notify("no DifferentiableGraph, GradOf or If/Loop block in this view", severity="warning", timeout=4)
            return
        new = replace(state, collapsed=groups)
        self.transforms.set_state(base, new)
        folded = self.transforms.apply(drawing, new).collapsed
        selected = self.shown.selected
        if folded and selected is not None:
            selected = folded.box_of.get(selected, selected)
        self._change(base, new, selected)

    def focus_mode(self) -> None:
        """f: show only the neighbourhood of the selection, laid out alone; f again: the whole view."""
        found = self._view_drawing()
        if found is None:
            return
        base, _drawing = found
        state = self.transforms.state(base)
        if state.focus is not None:
            self._change(base, replace(state, focus=None))
            return
        shown = self.picture.graph.nodes if self.picture is not None else {}
        if self.shown.selected is None or self.shown.selected not in shown:
            self.hooks.notify("select a node first (click it, or n / N), then f", severity="warning", timeout=4)
            return
        self._change(base, replace(state, focus=self.shown.selected))

    def focus_hops(self, delta: int) -> None:
        """< / >: fewer or more hops around the focus (1 to 6)."""
        found = self._view_drawing()
        if found is None:
            return
        base, _drawing = found
        state = self.transforms.state(base)
        hops = max(1, min(MAX_HOPS, state.hops + delta))
        if hops != state.hops:
            self._change(base, replace(state, hops=hops))
        if state.focus is None:
            self.hooks.notify(f"focus: {hops} hops (f focuses on the selection)", timeout=2)

    def toggle_stubs(self) -> None:
        """o: values read by many nodes as stub labels at their readers, or as edges."""
        self.transforms.stubs = not self.transforms.stubs
        self.hooks.notify("fan-out stubs on" if self.transforms.stubs else "fan-out stubs off: every edge drawn", timeout=2)
        self.hooks.redraw()

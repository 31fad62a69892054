"""The command palette's gradview commands: jump to a pass, find a node, export.

The provider reads what the app shows (its trace and :class:`~gradview.viewer.screen_state.OnScreen`:
the step and the drawing on screen) and answers with messages to the app (or its actions), never
touching a widget."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .graph_analysis import search
from .messages import FindNode, JumpToStep, SearchAsked

if TYPE_CHECKING:
    from .app import GradviewApp

__all__ = ["GradviewCommands"]

FIND_PREFIX = "find node"


class GradviewCommands(Provider):
    """``jump to <pass>``, ``find node %<name>`` (in the current step), ``find node: <query>``
    (the canvas's search: highlights every match, flies to the first), export and checks."""

    def _app(self) -> GradviewApp:
        return self.app  # type: ignore[return-value]

    def _commands(self) -> list[tuple[str, Any, str]]:
        app = self._app()
        # First, so the palette's first page lists it however many nodes follow.
        commands: list[tuple[str, Any, str]] = [
            (
                "find node: …",
                partial(app.post_message, SearchAsked()),
                "search the graph on screen (like / in the canvas)",
            )
        ]
        seen: set[str] = set()
        for step in app.trace:
            label = f"jump to pass {step.pass_name}"
            if not step.which.is_main or step.which.compilation is not None:
                label += f" [{step.which}]"
            if label in seen:
                continue
            seen.add(label)
            commands.append((label, partial(app.post_message, JumpToStep(step.index)), f"step {step.index}"))
        if len(app.trace):
            for node in app.trace[app.shown.index].nodes():
                names = ", ".join("%" + out.name for out in node.outputs) or node.kind
                commands.append(
                    (
                        f"find node {names} ({node.kind})",
                        partial(app.post_message, FindNode(node.id)),
                        "select and center it",
                    )
                )
        commands += [
            ("export this view as SVG", app.action_export_view, "writes into <target>-export/ beside the target, never over a file"),
            (
                "export every step as one HTML file",
                app.action_export_html,
                "a self-contained stepper",
            ),
            ("run this step on the example inputs", app.action_run_step, "values on the nodes"),
            (
                "find the first step whose outputs or gradients differ",
                app.action_find_divergence,
                "which pass broke my numbers",
            ),
            (
                "gradient check of the step on screen",
                app.action_gradient_check,
                "against finite differences",
            ),
            ("toggle hiding unchanged steps", app.action_toggle_unchanged, ""),
            ("switch dark / light theme", app.action_toggle_theme, ""),
        ]
        return commands

    async def discover(self) -> Hits:
        for label, callback, help_text in self._commands()[:40]:
            yield DiscoveryHit(label, callback, help=help_text)

    def _find(self, query: str) -> tuple[str, int, bool] | None:
        """``find node: tanh`` (or plain ``tanh``): the query, its number of matches
        on screen, and whether it was asked for by name."""
        text = query.strip()
        asked = text.lower().startswith(FIND_PREFIX)
        if asked:
            text = text[len(FIND_PREFIX) :].lstrip(" :").strip()
        if not text:
            return None
        return text, len(search(self._app().shown.drawing, text)), asked

    async def search(self, query: str) -> AsyncIterator[Hit]:  # type: ignore[override]
        found = self._find(query)
        if found is not None and (found[1] or found[2]):
            text, count, asked = found
            help_text = (
                f"{count} match{'es' if count != 1 else ''} on screen: enter / shift+enter for the next / previous"
                if count
                else "no match on screen"
            )
            yield Hit(
                1.0 if asked else 0.5,
                f"find node: {text}",
                partial(self._app().post_message, SearchAsked(text)),
                help=help_text,
            )
        matcher = self.matcher(query)
        for label, callback, help_text in self._commands():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), callback, help=help_text)

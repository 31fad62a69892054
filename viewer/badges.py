"""The words beside or inside a box that its colour cannot say: a value's
places in the Gradient's lists and its AutogradZero state.

Two readers, two lengths. The screen export (and the TUI's inspector) is
looked at closely: its badge names every role with its index in the
Gradient's list and the state (``temporary #3, vjp input #1, Nonzero``). A
slide is read from the back of a room: its badge names only what the fill
does not already say (a temporary that is also a vjp input says
``vjp in``), numbers a role only where the reader must match f's value to
df's and no edge joins them (the vjp inputs and outputs of a joint slide,
when there are several), and names one state, Zero (the lesson of
specializeAutogradZero, also on a box no line leaves); Nonzero and Unknown
are left to the outline's line style.
"""

from __future__ import annotations

from .model import DrawGraph, Mark, Marks
from .palette import MARK_PRIORITY, STATE_BADGES, drawn_mark

__all__ = ["ROLE_NAMES", "ROLE_WORDS", "node_roles", "screen_badges", "slide_badges"]

ROLE_NAMES: dict[Mark, str] = {  # the screen's
    Mark.CAPTURED_INPUT: "captured input",
    Mark.CAPTURED_OUTPUT: "captured output",
    Mark.TEMPORARY: "temporary",
    Mark.VJP_INPUT: "vjp input",
    Mark.VJP_OUTPUT: "vjp output",
}
ROLE_WORDS: dict[Mark, str] = {  # a slide's
    Mark.CAPTURED_INPUT: "captured in",
    Mark.CAPTURED_OUTPUT: "captured out",
    Mark.TEMPORARY: "temporary",
    Mark.VJP_INPUT: "vjp in",
    Mark.VJP_OUTPUT: "vjp out",
}
# Roles a slide numbers: f and df hold one value each for every index, joined by no edge.
_MATCHED_BY_NUMBER = (Mark.VJP_INPUT, Mark.VJP_OUTPUT)


def node_roles(graph: DrawGraph, marks: Marks) -> dict[int, list[tuple[Mark, int]]]:
    """Node id -> its Gradient roles with their indices, in legend order: the
    box's own and those of the values it makes. A temporary is a captured
    output with the same index, so its ``captured out`` is left out."""
    found: dict[int, dict[tuple[Mark, int], None]] = {}

    def add(node_id: int, key: int) -> None:
        for mark in marks.nodes.get(key, ()) if key == node_id else marks.values.get(key, ()):
            index = marks.indices.get((key, mark))
            if mark in ROLE_NAMES and index is not None:
                found.setdefault(node_id, {})[(mark, index)] = None

    for node_id in graph.nodes:
        add(node_id, node_id)
    for edge in graph.edges:
        if edge.source in graph.nodes:
            add(edge.source, edge.value_id)
    roles = {}
    for node_id, items in found.items():
        temporaries = {index for mark, index in items if mark is Mark.TEMPORARY}
        kept = [(m, i) for m, i in items if not (m is Mark.CAPTURED_OUTPUT and i in temporaries)]
        roles[node_id] = sorted(kept, key=lambda item: (MARK_PRIORITY.index(item[0]), item[1]))
    return roles


def screen_badges(graph: DrawGraph, marks: Marks) -> dict[int, str]:
    """Node id -> every role with its index, then the AutogradZero state of what
    the box makes: ``temporary #3, vjp input #1, Nonzero``."""
    badges = {node_id: [f"{ROLE_NAMES[m]} #{i}" for m, i in items] for node_id, items in node_roles(graph, marks).items()}
    for node_id in graph.nodes:
        states = [word for mark, word in STATE_BADGES.items() if mark in marks.nodes.get(node_id, ())]
        if states:
            badges.setdefault(node_id, []).extend(states)
    return {node_id: ", ".join(words) for node_id, words in badges.items() if words}


def slide_badges(graph: DrawGraph, marks: Marks, joint: bool) -> dict[int, list[str]]:
    """Node id -> the lines of its slide badge (see the module's docstring);
    boxes whose fill says it all have none."""
    roles = node_roles(graph, marks)
    numbered = set()
    if joint:
        for mark in _MATCHED_BY_NUMBER:
            if len({i for items in roles.values() for m, i in items if m is mark}) > 1:
                numbered.add(mark)
    badges = {}
    for node_id, items in roles.items():
        fill = drawn_mark(marks.nodes.get(node_id))
        lines = [ROLE_WORDS[m] + (f" #{i}" if m in numbered else "") for m, i in items if m is not fill or m in numbered]
        badges[node_id] = lines
    for node_id in graph.nodes:
        if Mark.ZERO in marks.nodes.get(node_id, ()):
            badges.setdefault(node_id, []).append(STATE_BADGES[Mark.ZERO])
    return {node_id: lines for node_id, lines in badges.items() if lines}

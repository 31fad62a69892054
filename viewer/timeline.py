"""The pass timeline: every step of the trace in order, grouped, with +nodes/-nodes.

:func:`summarize_steps` is pure (the app computes it in a worker);
:class:`Timeline` is the Textual widget: an ``OptionList`` whose options are
steps and whose group headers are disabled separators. Hiding unchanged
steps and filtering by pass name rebuild the options; the highlighted step
survives both when it stays visible.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from gradview.runtime import Note, PassTrace, Step, normalize_pass_name, step_changes

from .messages import StepChosen

__all__ = ["StepSummary", "summarize_steps", "group_label", "Timeline"]


@dataclass(frozen=True)
class StepSummary:
    index: int
    pass_name: str
    which_text: str
    group: str
    changed: bool
    added: int  # nodes new in this step (against the previous step of the same graph)
    removed: int
    failed: str | None = None  # set when the step's graph is known to be broken


def group_label(step: Step) -> str:
    """The timeline section a step belongs to."""
    which = step.which
    k = which.index
    compile_id = step.annotations.get(Note.COMPILE_ID)
    if compile_id is not None:  # torch.compile's graphs: joint, partition, post-grad of one graph
        return f"compiled graph {compile_id}"
    suffix = "" if which.compilation is None else f" (compilation {which.compilation})"
    if (which.is_forward or which.is_backward) and Note.F_REAL_OUTPUTS in step.annotations:
        return f"DifferentiableGraph {k}: differentiate{suffix}"
    if which.is_forward:
        return f"DifferentiableGraph {k}: forward optimization{suffix}"
    if which.is_backward_executor:
        return f"DifferentiableGraph {k}: backward graph's executor{suffix}"
    if which.is_backward:
        return f"DifferentiableGraph {k}: backward graph{suffix}"
    return "compile phases" + suffix


def _which_tag(step: Step) -> str:
    """What the timeline prints after a pass name; the group header says the rest."""
    return "f" if step.which.is_forward else "df" if step.which.is_backward else ""


def summarize_steps(trace: PassTrace) -> list[StepSummary]:
    """One summary per step, its changes as ``gradview trace --changes`` prints them
    (:func:`gradview.runtime.trace_changes.step_changes`)."""
    return [
        StepSummary(step.index, step.pass_name, _which_tag(step), group_label(step), c.changed, c.added, c.removed)
        for step, c in zip(trace, step_changes(trace), strict=True)
    ]


class Timeline(OptionList):
    """Steps grouped by phase; the option id is the step index."""

    StepChosen = StepChosen  # posted when a step is highlighted (viewer/messages.py)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.summaries: list[StepSummary] = []
        self.hide_unchanged = False
        self.filter_text = ""
        self.failed: dict[int, str] = {}

    def load(self, summaries: list[StepSummary]) -> None:
        self.summaries = summaries
        self.rebuild()

    def visible(self) -> list[StepSummary]:
        wanted = normalize_pass_name(self.filter_text)
        return [
            s for s in self.summaries
            if (not self.hide_unchanged or s.changed or s.index == 0)
            and (not wanted or wanted in normalize_pass_name(s.pass_name))
        ]

    def rebuild(self, keep: int | None = None) -> None:
        keep = self.current_step() if keep is None else keep
        self.clear_options()
        options: list[Option] = []
        group = None
        for summary in self.visible():
            if summary.group != group:
                group = summary.group
                options.append(Option(Text(f"── {group}", style="bold"), disabled=True))
            options.append(Option(self._prompt(summary), id=str(summary.index)))
        self.add_options(options)
        if keep is not None:
            self.highlight_step(keep)

    def _prompt(self, s: StepSummary) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")  # one line per step, however narrow the panel
        failed = self.failed.get(s.index)
        text.append(f"{s.index:>3} ", style="dim")
        text.append(s.pass_name, style="bold red" if failed else ("" if s.changed else "dim"))
        if s.which_text:
            text.append(f" {s.which_text}", style="dim italic")
        if failed:
            text.append(" ✗ failed", style="red")
        elif s.added or s.removed:
            text.append(f" +{s.added}", style="green")
            text.append(f" -{s.removed}", style="red")
        elif not s.changed:
            text.append(" ·", style="dim")
        return text

    def mark_failed(self, index: int, message: str) -> None:
        if self.failed.get(index) != message:
            self.failed[index] = message
            self.rebuild()

    def current_step(self) -> int | None:
        if self.highlighted is None:
            return None
        option = self.get_option_at_index(self.highlighted)
        return int(option.id) if option.id is not None else None

    def highlight_step(self, index: int) -> bool:
        """Highlight ``index``, or the nearest visible step before it; True if it is visible."""
        best = None
        for position in range(self.option_count):
            option = self.get_option_at_index(position)
            if option.id is None:
                continue
            if int(option.id) <= index:
                best = position
        if best is None:
            for position in range(self.option_count):
                if self.get_option_at_index(position).id is not None:
                    best = position
                    break
        if best is not None:
            self.highlighted = best
            return self.get_option_at_index(best).id == str(index)
        return False

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.StepChosen(int(event.option.id)))

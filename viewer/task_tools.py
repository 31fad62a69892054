"""The app's long tasks, ``b``, ``G`` and ``E``: progress on screen, escape cancels.

:class:`LongTasks` owns the running tasks; the app gives it its hooks, starts
tasks and passes it their messages. Each task runs in a thread worker; its work takes a ``report(text)`` callback that it calls
between units of work (a step for ``b``, an input for ``G``, a picture for
``E``). ``report`` shows the text at the start of the view bar (and, for the
checks, on the Check tab) and, once the task is cancelled, raises
:class:`~gradview.runtime.checks.CheckCancelled`, so the work stops at
its next unit. Escape cancels every running task, and a task's key cancels
it while it runs.

A cancelled check posts nothing: the Check tab says at once that it was
cancelled and where. A cancelled export says itself what it left, when its
thread has stopped (nothing written: the file is written whole at the end,
see :mod:`.export`), so that message is never ahead of the truth.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

from textual.css.query import NoMatches
from textual.message import Message
from textual.worker import Worker, get_current_worker

from gradview.runtime.checks import CheckCancelled, CheckResult

from .messages import TaskEnded, TaskProgress
from .screen_state import AppHooks

__all__ = ["LongTasks", "Report"]

Report = Callable[[str], None]
# The check each key runs (its CheckResult.check); E is an export.
_CHECKS = {"b": "divergence", "G": "gradient"}


@dataclass
class _Running:
    worker: Worker[None]
    at: str = ""  # the last progress text


class LongTasks:
    """The running tasks, by key: their workers and their last progress text."""

    def __init__(self, hooks: AppHooks) -> None:
        self.hooks = hooks
        self._running: dict[str, _Running] = {}

    def start(self, key: str, work: Callable[[Report], Message | None], first: str) -> None:
        """Run ``work(report)`` in a thread and post the message it returns (unless
        a check was cancelled); ``first`` is shown at once. A check replaces the
        other check (b and G share the Check tab)."""
        if key in _CHECKS:
            for other in _CHECKS:
                if other != key:
                    self._stop(other, say=False)
            self.hooks.main().details.check_started(first)
        # Not exclusive: a task stops only at its own report, and says so itself.
        worker = self.hooks.run_worker(lambda: self._work(key, work), thread=True, exclusive=False, group=f"task-{key}")
        self._running[key] = _Running(worker, first)
        self._show_bar()

    def _work(self, key: str, work: Callable[[Report], Message | None]) -> None:
        worker = get_current_worker()

        def report(text: str) -> None:
            if worker.is_cancelled:
                raise CheckCancelled(text)
            # A message, not call_from_thread: the work never waits for the screen (nor
            # hangs on an app that is closing).
            self.hooks.post(TaskProgress(key, worker, text))

        try:
            message = work(report)
            if message is not None and not (worker.is_cancelled and key in _CHECKS):
                self.hooks.post(message)
        finally:  # the bar never keeps the progress of a task that is gone
            self.hooks.post(TaskEnded(key, worker))

    def progress(self, message: TaskProgress) -> None:
        key, worker, text = message.key, message.worker, message.text
        task = self._running.get(key)
        if task is None or task.worker is not worker or worker.is_cancelled:
            return  # a stale report from a task already stopped
        task.at = text
        self._show_bar()
        if key in _CHECKS and self._screen_up():
            with suppress(NoMatches):  # the app is closing
                self.hooks.main().details.check_progress(text)

    def ended(self, message: TaskEnded) -> None:
        key, worker = message.key, message.worker
        task = self._running.get(key)
        if task is not None and task.worker is worker:
            del self._running[key]
        self._show_bar()

    def _show_bar(self) -> None:
        """The view bar's task text: the latest task's progress, or that it is being cancelled."""
        text = ""
        for key, task in self._running.items():
            text = f"{key}: cancelling…" if task.worker.is_cancelled else task.at
        if self._screen_up():
            with suppress(NoMatches):  # the app is closing
                self.hooks.main().graph.show_task(text)

    def _screen_up(self) -> bool:
        """A task's message can arrive while the app closes, with nothing left to draw on."""
        try:
            return self.hooks.main().is_attached
        except IndexError:  # no screen left
            return False

    def cancel(self, key: str) -> bool:
        """Stop task ``key`` if it runs; whether one ran."""
        return self._stop(key, say=True)

    def cancel_all(self) -> bool:
        """Escape: stop every running task (each stops before its next unit of work); whether one ran."""
        stopped = [self._stop(key, say=True) for key in list(self._running)]
        return any(stopped)

    def _stop(self, key: str, say: bool) -> bool:
        task = self._running.get(key)
        if task is None or task.worker.is_finished or task.worker.is_cancelled:
            return False
        task.worker.cancel()
        where = task.at.removeprefix(f"{key}: ").rstrip("…")
        if key in _CHECKS:
            del self._running[key]
            if say:
                message = f"{key}: cancelled ({where})" if where else f"{key}: cancelled"
                self.hooks.main().details.show_check(CheckResult(_CHECKS[key], "cancelled", message))  # type: ignore[arg-type]
        self._show_bar()
        return True

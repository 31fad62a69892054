"""``gradview trace FILE``: print a pass-by-pass dump, like ``PYTORCH_JIT_LOG_LEVEL`` does.

FILE is what ``gradview view`` opens, loaded by the same code
(:mod:`gradview.loaders.targets`), so both show the same steps: a saved trace
(``.json``), a ``PYTORCH_JIT_LOG_LEVEL`` log, a graph (``.ir``) or
``model.py:fn`` (a function compiled with :func:`gradview.ir.script`, or a
``build()`` taking no arguments whose PyTorch model is converted with
:func:`gradview.ir.from_torch`). A graph or function with example inputs
(``--inputs``, the file's ``example_inputs()``, or complete input types) goes
through the GraphExecutor as one training step; without them (or with
``--inputs none``) the generic pass pipelines run on it. Each step prints as a
header line

    == <index> <pass name> [<graph>] changed|unchanged (<ms> ms)

followed by the graph's text, or with ``--diff`` the unified diff from the
previous step of the same graph. ``--changes`` prints one line per step
instead, ``<index> <pass> [<graph>] changed|unchanged +<added> -<removed>``
(the nodes added and removed against the previous step of the same graph, as
the viewer's timeline counts them). ``--pass NAME`` keeps the steps of one
pass (any spelling: ``EliminateDeadCode``, ``eliminate_dead_code``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gradview.runtime import pipeline_step_names
from gradview.runtime.pass_trace import PassTrace, Step, normalize_pass_name
from gradview.runtime.trace_changes import StepChange, format_change, step_changes

from .options import (
    add_autodiff_option,
    add_compile_option,
    add_inline_threshold_option,
    add_inputs_option,
    add_pass_option,
)

__all__ = ["register", "run", "load_any", "format_step_header"]


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "trace",
        help="print a pass-by-pass dump of a graph, function, trace or JIT log",
        description="Print each step of FILE, as `gradview view` steps through it: a saved trace (.json), "
        "a PYTORCH_JIT_LOG_LEVEL log, an IR file (.ir) or model.py:fn (run by the GraphExecutor as one "
        "training step when example inputs are known, else the generic pass pipelines).",
    )
    parser.add_argument(
        "file", metavar="FILE",
        help="a .json trace, a JIT log, a TORCH_TRACE log (file or directory), a .ir graph, model.py:fn, "
        "or model.py:build (a PyTorch model)",
    )
    add_pass_option(parser, pipeline_step_names())
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--diff", action="store_true", help="print diffs between consecutive steps of the same graph")
    shown.add_argument(
        "--changes", action="store_true",
        help="print one line per step: index, pass, [graph], changed|unchanged, +added -removed nodes",
    )
    add_inputs_option(parser)
    add_autodiff_option(parser)
    add_inline_threshold_option(parser)
    add_compile_option(parser)
    parser.add_argument(
        "--detail", choices=("model", "ir"), default="ir",
        help="model: first the model's module tree (each module's class, op count at the first step, parameter "
        "bytes and the shape it hands on, as the viewer's module boxes say), then the steps; ir: the steps only",
    )
    parser.set_defaults(run=run)


class _InputError(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def load_any(
    path: str, inputs: str | None = None, autodiff: str | None = None, inline_threshold: int | None = None,
    compile: bool = False,  # the command line's --compile
    min_group_size: int | None = None,
) -> PassTrace:
    """The trace FILE stands for, as ``gradview view`` loads it; raises _InputError with a one-line message."""
    from gradview.loaders.targets import TargetError, load_target  # keeps --help light
    from gradview.runtime.no_graph_reason import (  # keeps --help light
        no_differentiable_graph_reason,
        shows_differentiable_graph,
    )

    try:
        session = load_target(
            path, inputs, autodiff=autodiff, inline_threshold=inline_threshold, compile=compile,
            min_group_size=min_group_size,
        )
    except TargetError as exc:
        message = str(exc).splitlines()[0] if str(exc) else path
        raise _InputError(message, 2 if ": cannot read: " in message else 1) from None
    for note in session.notes:
        print(f"gradview: note: {note}", file=sys.stderr)
    # Why a graph gradview ran has no DifferentiableGraph (a log or a saved trace
    # is what it is; a graph without inputs has the loader's note instead).
    ran = session.graph is not None and session.inputs is not None
    if ran and not shows_differentiable_graph(session.trace):
        print(f"gradview: note: {no_differentiable_graph_reason(session.trace)}", file=sys.stderr)
    return session.trace


def module_tree_text(trace: PassTrace) -> str:
    """The model's modules, one line each, indented by depth: ``layer1  Sequential ·
    14 ops · 580.0 KiB · → Float(1, 64, 16, 16)`` (the viewer's module boxes), or
    one line saying the trace names no modules."""
    from gradview.viewer.detail import Detail  # keeps --help light
    from gradview.viewer.transforms import Transforms

    transforms = Transforms.for_trace(trace, Detail.MODEL)
    if not transforms.module_boxes:
        return "== modules: none (the graph does not come from a model whose nodes name their modules)\n"
    lines = [f"== modules of the model ({len(transforms.module_boxes)})"]
    for path in transforms.modules:
        box = transforms.module_boxes.get(path)
        if box is None:
            continue  # a module that runs no op of this graph
        summary = " · ".join(box.label.splitlines()[1:])
        lines.append(f"{'  ' * path.count('.')}{path}  {summary}")
    return "\n".join(lines) + "\n"


def format_step_header(step: Step, change: StepChange | None = None) -> str:
    """``== <index> <pass> [<graph>] changed|unchanged (<ms> ms)``; ``change`` (from
    :func:`step_changes`) decides changed|unchanged, as ``--changes`` prints it."""
    changed = change.changed if change is not None else step.changed
    state = "changed" if changed else "unchanged"
    return f"== {step.index} {step.pass_name} [{step.which}] {state} ({step.seconds * 1e3:.3f} ms)"


def run(args: argparse.Namespace) -> int:
    try:
        trace = load_any(args.file, args.inputs, args.autodiff, args.inline_threshold, args.compile, args.min_group_size)
    except _InputError as exc:
        print(f"gradview: error: {exc}", file=sys.stderr)
        return exc.code
    wanted = normalize_pass_name(args.pass_name) if args.pass_name else None
    changes = step_changes(trace)
    out = sys.stdout
    if args.detail == "model":
        out.write(module_tree_text(trace))
    shown = 0
    for step, change in zip(trace, changes, strict=True):
        if wanted is not None and normalize_pass_name(step.pass_name) != wanted:
            continue
        shown += 1
        if args.changes:
            out.write(format_change(change) + "\n")
            continue
        out.write(format_step_header(step, change) + "\n")
        if args.diff:
            previous = trace.previous(step)
            if previous is None:
                out.write(step.text())
            else:
                out.write(step.diff(previous) or "(no change)\n")
        else:
            out.write(step.text())
    if wanted is not None and shown == 0:
        names = sorted({s.pass_name for s in trace})
        print(
            f"gradview: error: {args.file}: no step of pass {args.pass_name!r}; passes: {', '.join(names)}",
            file=sys.stderr,
        )
        return 1
    return 0

"""``gradview trace FILE``: print a pass-by-pass dump, like ``PYTORCH_JIT_LOG_LEVEL`` does.

FILE is a saved trace (``.json``), a ``PYTORCH_JIT_LOG_LEVEL`` log (``.log``,
``.txt``), a graph (``.ir``: the generic pipelines run on it, recording each
pass), or ``model.py:fn`` (the function is compiled with :func:`gradview.ir.script`,
or, for a ``build()`` taking no arguments, the PyTorch model it returns is
converted with :func:`gradview.ir.from_torch`; the graph goes through the same
pipelines). Each step prints as a header line

    == <index> <pass name> [<which>] changed|unchanged (<ms> ms)

followed by the graph's text, or with ``--diff`` the unified diff from the
previous step of the same graph. ``--pass NAME`` keeps the steps of one pass
(any spelling: ``EliminateDeadCode``, ``eliminate_dead_code``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gradview.ir import Graph, IRParseError, IRVerifyError, lint, parse_ir
from gradview.runtime.jit_log import load_jit_log
from gradview.runtime.pass_trace import (
    PassTrace,
    Step,
    TraceFormatError,
    normalize_pass_name,
    which_label,
)

from .check import read_text

__all__ = ["register", "run", "trace_ir", "trace_graph", "trace_python", "load_any", "format_step_header"]


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "trace",
        help="print a pass-by-pass dump of a trace, JIT log or IR file",
        description="Print each step of FILE: a saved trace (.json), a PYTORCH_JIT_LOG_LEVEL "
        "log (.log/.txt), or an IR file (.ir: the generic pass pipelines run on it).",
    )
    parser.add_argument("file", metavar="FILE", help="a .json trace, a .log/.txt JIT log, a .ir graph, model.py:fn, or model.py:build (a PyTorch model)")
    parser.add_argument("--pass", dest="pass_name", metavar="NAME", help="only the steps of this pass")
    parser.add_argument(
        "--diff", action="store_true", help="print diffs between consecutive steps of the same graph"
    )
    parser.set_defaults(run=run)


class _InputError(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def trace_ir(text: str) -> PassTrace:
    """Parse ``text`` and run the required, optimization and non-diff pipelines on it, recording each pass."""
    return trace_graph(parse_ir(text))


def trace_graph(graph: Graph) -> PassTrace:
    """Run the required, optimization and non-diff pipelines on ``graph``, recording each pass."""
    from gradview.ir.passes.pipelines import (
        run_nondiff_optimization,
        run_optimization,
        run_required_passes,
    )

    lint(graph)
    trace = PassTrace()
    trace.record("Input", graph, changed=False)
    record = trace.pipeline_recorder(graph)
    run_required_passes(graph, record=record)
    run_optimization(graph, record=record)
    run_nondiff_optimization(graph, record=record)
    return trace


def trace_python(spec: str) -> PassTrace:
    """``model.py:fn``: load the graph as the viewer does (a function compiled with
    :func:`gradview.ir.script`, or a ``build()`` converted from PyTorch) and trace the pipelines on it."""
    from gradview.viewer.session import TargetError, load_python

    try:
        graph = load_python(spec).graph
    except TargetError as exc:
        code = 2 if str(exc).endswith("cannot read: no such file") else 1
        raise _InputError(str(exc), code) from None
    try:
        return trace_graph(graph)
    except IRVerifyError as exc:
        raise _InputError(f"{spec}: invalid graph: {exc}") from None


def load_any(path: str) -> PassTrace:
    """The trace FILE stands for; raises _InputError with a one-line message."""
    lower = path.lower()
    try:
        if ".py:" in lower and lower.rpartition(":")[0].endswith(".py"):
            return trace_python(path)
        if lower.endswith(".json"):
            return PassTrace.load(path)
        if lower.endswith(".ir"):
            try:
                return trace_ir(read_text(path))
            except IRParseError as exc:
                raise _InputError(f"{path}:{exc.summary}") from None
            except IRVerifyError as exc:
                raise _InputError(f"{path}: invalid graph: {exc}") from None
        with open(path, "rb") as handle:
            start = handle.read(64).lstrip()
        if start.startswith(b"{"):
            return PassTrace.load(path)
        if start.startswith(b"graph("):
            raise _InputError(f"{path}: looks like an IR file; name it .ir to trace its passes")
        return load_jit_log(path)
    except OSError as exc:
        raise _InputError(f"{path}: cannot read: {exc.strerror or exc}", 2) from None
    except TraceFormatError as exc:
        raise _InputError(str(exc).splitlines()[0]) from None


def format_step_header(step: Step) -> str:
    state = "changed" if step.changed else "unchanged"
    return f"== {step.index} {step.pass_name} [{which_label(step.which)}] {state} ({step.seconds * 1e3:.3f} ms)"


def run(args: argparse.Namespace) -> int:
    try:
        trace = load_any(args.file)
    except _InputError as exc:
        print(f"gradview: error: {exc}", file=sys.stderr)
        return exc.code
    wanted = normalize_pass_name(args.pass_name) if args.pass_name else None
    out = sys.stdout
    shown = 0
    for step in trace:
        if wanted is not None and normalize_pass_name(step.pass_name) != wanted:
            continue
        shown += 1
        out.write(format_step_header(step) + "\n")
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
        print(f"gradview: error: {args.file}: no step of pass {args.pass_name!r}; passes: {', '.join(names)}", file=sys.stderr)
        return 1
    return 0

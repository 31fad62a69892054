"""``gradview view TARGET``: open the viewer on a graph, a function, a trace or a JIT log."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .options import (
    add_autodiff_option,
    add_compile_option,
    add_detail_option,
    add_inline_threshold_option,
    add_inputs_option,
)

__all__ = ["register", "run"]


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "view",
        help="open the viewer: step through every pass of a graph's compilation",
        description="Open the viewer on TARGET: a .ir graph, model.py:fn (a Python function), "
        "a saved trace (.json), a PYTORCH_JIT_LOG_LEVEL log, or model.py:build (a function taking no "
        "arguments that returns a PyTorch model and its example inputs), or a TORCH_TRACE log of "
        "torch.compile (its joint, forward and backward graphs). Graphs and functions go through "
        "the GraphExecutor as one training step on example inputs; --compile runs model.py:build "
        "through torch.compile instead.",
    )
    parser.add_argument(
        "target", metavar="TARGET", help="model.ir, model.py:fn, trace.json, a JIT log or a TORCH_TRACE log (file or directory)"
    )
    add_inputs_option(parser)
    parser.add_argument("--theme", choices=("dark", "light"), default="dark")
    parser.add_argument("--save-trace", metavar="FILE", help="also save the trace as JSON (opens on any machine)")
    parser.add_argument(
        "--force", action="store_true", help="replace an existing --save-trace FILE (never the TARGET itself)"
    )
    add_autodiff_option(parser)
    add_inline_threshold_option(parser)
    add_compile_option(parser)
    add_detail_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from gradview.loaders.targets import TargetError, load_target  # loads the runtime only here

    from .output_paths import OutputError, check_output_file, input_paths

    if args.save_trace:
        try:  # before the slow part, and never over the target itself
            check_output_file(args.save_trace, input_paths(args.target), args.force, "--save-trace")
        except OutputError as exc:
            print(f"gradview: error: {exc}", file=sys.stderr)
            return 1
    try:
        session = load_target(
            args.target, args.inputs, autodiff=args.autodiff, inline_threshold=args.inline_threshold,
            compile=args.compile, min_group_size=args.min_group_size,
        )
    except TargetError as exc:
        print(f"gradview: error: {exc}", file=sys.stderr)
        return 1
    if args.save_trace:
        try:
            session.trace.save(args.save_trace)
        except OSError as exc:
            print(f"gradview: error: {args.save_trace}: cannot write: {exc.strerror or exc}", file=sys.stderr)
            return 1
    from gradview.viewer.app import GradviewApp
    from gradview.viewer.detail import Detail

    GradviewApp(session, theme=args.theme, detail=Detail(args.detail) if args.detail else None).run()
    return 0

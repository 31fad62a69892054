"""``gradview``: the command line.

Each subcommand lives in its own module under ``gradview.cli`` and registers
its arguments here. Errors the user can fix (a bad file, malformed IR) print
one clear line naming the place and exit non-zero; they never print a
traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import check, export, saved, trace, view

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradview",
        description="An interactive visual debugger for TorchScript-style autodiff graphs.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    check.register(commands)
    trace.register(commands)
    view.register(commands)
    export.register(commands)
    saved.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        print("gradview: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0

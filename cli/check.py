"""``gradview check FILE.ir``: parse and verify a graph file, print a one-line summary."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gradview.ir import (
    Graph,
    IRParseError,
    IRVerifyError,
    check_argument_counts,
    check_block_depth,
    is_known_op,
    lint,
    parse_ir,
)
from gradview.runtime.runnable import cannot_run

__all__ = ["register", "run", "summarize"]


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        help="parse and verify a TorchScript IR file",
        description="Parse FILE (TorchScript's textual IR, '-' for stdin), verify it, "
        "and print a one-line summary or the first error with its line:col.",
    )
    parser.add_argument("file", metavar="FILE", help="a .ir file, or - to read standard input")
    parser.add_argument("--print", dest="print_graph", action="store_true", help="print the parsed graph")
    parser.add_argument(
        "--strict", action="store_true",
        help="fail when the graph uses operators gradview does not know or cannot run"
    )
    parser.set_defaults(run=run)


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        return handle.read()


def summarize(graph: Graph) -> tuple[str, list[str], list[str]]:
    """A one-line description of ``graph``, the operators the IR does not know, and the
    ops it knows that gradview cannot run (each with the runtime's reason)."""
    nodes = blocks = subgraphs = 0
    pending = [graph]
    while pending:
        current = pending.pop()
        for node in current.all_nodes():
            nodes += 1
            blocks += len(node._blocks)
            for name in node.attribute_names():
                if node.attribute_kind(name) == "g":
                    subgraphs += 1
                    pending.append(node.g(name))
    unknown: dict[str, None] = {}
    blocked: dict[str, None] = {}
    for item in cannot_run(graph):
        if is_known_op(item.op.split(".", 1)[0]):
            blocked[f"{item.op} ({item.reason})"] = None
        else:
            unknown[item.op] = None
    parts = [
        _count(len(graph.inputs()), "input"),
        _count(nodes, "node"),
        _count(blocks, "block"),
        _count(subgraphs, "subgraph"),
        _count(len(graph.outputs()), "output"),
    ]
    return ", ".join(parts), list(unknown), list(blocked)


def _listed(names: list[str], one: str, many: str) -> str:
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    return f"; {len(names)} {one if len(names) == 1 else many}: {shown}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def run(args: argparse.Namespace) -> int:
    path = args.file
    shown = "<stdin>" if path == "-" else path
    try:
        text = read_text(path)
    except OSError as exc:
        print(f"gradview: error: cannot read {shown}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        graph = parse_ir(text)
        lint(graph)
        check_argument_counts(graph)  # as the loaders do: check and trace agree on what is valid
        check_block_depth(graph)
    except IRParseError as exc:
        print(f"{shown}:{exc.summary}", file=sys.stderr)
        print("\n".join(str(exc).splitlines()[1:]), file=sys.stderr)
        return 1
    except IRVerifyError as exc:
        print(f"{shown}: invalid graph: {exc}", file=sys.stderr)
        return 1
    summary, unknown, cannot_run = summarize(graph)
    if args.print_graph:
        sys.stdout.write(str(graph))
    note = ""
    if unknown:
        note += _listed(unknown, "unknown operator", "unknown operators")
    if cannot_run:
        note += _listed(cannot_run, "op gradview cannot run", "ops gradview cannot run")
    status = "error" if ((unknown or cannot_run) and args.strict) else "ok"
    print(f"{shown}: {status}: {summary}{note}")
    return 1 if status == "error" else 0

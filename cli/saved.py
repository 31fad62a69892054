"""``gradview saved TARGET``: what each graph saves for backward, biggest first.

TARGET is anything ``gradview view`` opens. For a TorchScript graph or
function the executor runs one training step (so the sizes are those of the
arrays it actually kept); for a TORCH_TRACE log of torch.compile the sizes are
the graphs' annotations. Per graph, one row per saved tensor: name, shape,
dtype, bytes, the forward op that made it (``input`` for a graph input saved
as it is) and the backward ops that read it, then the total. A value is named
as users know it (:mod:`gradview.runtime.value_names`): a parameter by its
qualified name with the graph's name beside it (``layer4.1.conv2.weight
(primals_98)``), an intermediate with the module of the op that made it
(``100 in layer2.1.bn1``). ``--json`` prints ``{"graphs": [{"name", "saved":
[{"name", "user_name", "module", "shape", "dtype", "bytes", "producer",
"consumers"}], "total_bytes"}]}`` (``name`` the graph's own).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .options import (
    add_autodiff_option,
    add_compile_option,
    add_inline_threshold_option,
    add_inputs_option,
)

__all__ = ["register", "run", "format_saved"]


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "saved",
        help="list the values each graph saves for backward, biggest first",
        description="For each differentiated graph of TARGET (a TorchScript DifferentiableGraph, or a graph "
        "torch.compile compiled, from a TORCH_TRACE log), list the tensors its forward saves for its "
        "backward: name, shape, dtype, bytes, the op that made each and the backward ops that read it.",
    )
    parser.add_argument("target", metavar="TARGET", help="a TORCH_TRACE log or directory, model.ir, model.py:fn, trace.json")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_inputs_option(parser)
    add_autodiff_option(parser)
    add_inline_threshold_option(parser)
    add_compile_option(parser)
    parser.set_defaults(run=run)


def _bytes(count: int) -> str:
    return f"{count:,}"


def _line(cells: tuple[str, ...], widths: list[int]) -> str:
    parts = [cell.rjust(widths[i]) if i == 3 else cell.ljust(widths[i]) for i, cell in enumerate(cells)]  # bytes right
    return ("  " + "  ".join(parts)).rstrip()


def format_saved(graphs: list[Any]) -> str:
    """The table ``gradview saved`` prints (``graphs``: :class:`GraphSaved` list)."""
    if not graphs:
        return "no DifferentiableGraph or compiled graph of this target keeps values for backward\n"
    out = []
    headers = ("name", "shape", "dtype", "bytes", "producer", "consumers")
    for graph in graphs:
        count = len(graph.saved)
        out.append(f"{graph.name}: {count} saved tensor{'s' if count != 1 else ''}, {_bytes(graph.total_bytes)} bytes")
        if graph.symbols:
            values = ", ".join(f"{name}={value}" for name, value in graph.symbols)
            out.append(f"  (dynamic shapes: sizes as in the run that compiled it, {values})")
        rows = [
            (v.display, "[" + ", ".join(map(str, v.shape)) + "]", v.dtype, _bytes(v.bytes), v.producer, ", ".join(v.consumers) or "-")
            for v in graph.saved
        ]
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

        out.append(_line(headers, widths))
        out.extend(_line(row, widths) for row in rows)
        out.append(_line(("total", "", "", _bytes(graph.total_bytes), "", ""), widths))
        if graph.not_tensors:
            n = graph.not_tensors
            out.append(f"  (and {n} saved value{'s' if n != 1 else ''} that {'are' if n != 1 else 'is'} not a tensor: sizes or numbers, no tensor memory)")
        out.append("")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    from gradview.loaders.targets import TargetError, load_target
    from gradview.runtime.no_graph_reason import no_differentiable_graph_reason
    from gradview.runtime.saved_values import (  # keeps --help light
        SavedValuesError,
        pasted_back,
        saved_values,
    )

    try:
        session = load_target(
            args.target, args.inputs, autodiff=args.autodiff, inline_threshold=args.inline_threshold, compile=args.compile,
            min_group_size=args.min_group_size,
        )
        if session.run_error is not None:  # saved values are measured by running: refuse in one line
            raise TargetError(f"{args.target}: {session.run_error}")
        graphs = saved_values(session.trace)
    except TargetError as exc:
        print(f"gradview: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    except SavedValuesError as exc:
        print(f"gradview: error: {args.target}: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    for note in session.notes:
        print(f"gradview: note: {note}", file=sys.stderr)
    for k, why in pasted_back(session.trace).items():
        print(
            f"gradview: note: DifferentiableGraph {k} is not listed: {why} "
            "(--inline-threshold 0 keeps it)",
            file=sys.stderr,
        )
    ran = not (session.graph is not None and session.inputs is None)
    if not graphs and ran and not pasted_back(session.trace):  # say why, as the viewer does
        print(f"gradview: note: {no_differentiable_graph_reason(session.trace)}", file=sys.stderr)
    if not graphs and not ran:
        print(
            f"gradview: error: {args.target}: nothing was differentiated, since the graph did not run: "
            "give example inputs (--inputs 8x4,...) so the executor runs one training step",
            file=sys.stderr,
        )
        return 1
    if args.json:
        json.dump({"graphs": [graph.as_json() for graph in graphs]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_saved(graphs))
    return 0

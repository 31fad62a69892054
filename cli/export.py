"""``gradview export TARGET --svg DIR``: pictures of a trace's steps, to share without a terminal.

TARGET is anything ``gradview view`` opens (a ``.ir`` graph, ``model.py:fn``,
a saved trace, a JIT log). Each chosen step is drawn in one view at the
positions of that view's union layout, so a node keeps its place from file
to file; ``--svg DIR`` writes ``DIR/{index:03d}-{pass}-{graph}.svg`` per step and
``--html FILE`` one self-contained page that steps through them with the
arrow keys. The steps: the last one by default, ``--step NAME`` those of one
pass (any spelling: ``EliminateDeadCode``, ``eliminate_dead_code``) or
``--step N`` step N, ``--all`` every step where the view has something to
show. A file is named after its step, pass and graph
(``080-EliminateDeadCode-backward-0.svg``: ``--view backward --dg 0``; the whole
view names the step's own graph, ``080-EliminateDeadCode-main.svg``), and
consecutive steps of one pass that draw the same picture make one file. Nothing is
overwritten silently (:mod:`gradview.cli.output_paths`): an output that is the
input, an existing ``--html``/``--model-explorer`` file or a non-empty ``--svg``
folder is refused unless ``--force``, which first removes the earlier export's
pictures from the folder. Each picture
covers what its step shows; ``--leftovers`` also draws the removed nodes, faded.
``--model-explorer FILE.json`` writes Google Model Explorer's graph JSON
instead of pictures (no Graphviz needed): every step, or those of ``--step``,
in every view (:mod:`gradview.viewer.export_model_explorer`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .options import (
    add_autodiff_option,
    add_compile_option,
    add_detail_option,
    add_inline_threshold_option,
)
from .output_paths import clear_old_export

__all__ = ["register", "run", "choose_steps", "ExportError"]


class ExportError(Exception):
    """What the user asked for cannot be exported; the message is one line."""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "export",
        help="write SVGs (and an HTML page) of a trace's steps",
        description="Draw steps of TARGET (a .ir graph, model.py:fn, a saved trace or a JIT log) "
        "as SVG files and/or one HTML page, every step at the same positions. model.py:build "
        "(a function taking no arguments) returns a PyTorch model and its example inputs. Needs Graphviz.",
    )
    parser.add_argument(
        "target", metavar="TARGET", help="model.ir, model.py:fn, trace.json, a JIT log or a TORCH_TRACE log"
    )
    parser.add_argument("--svg", metavar="DIR", help="write one SVG per step into DIR")
    parser.add_argument("--html", metavar="FILE", help="write one HTML page that steps through the steps")
    parser.add_argument(
        "--model-explorer", metavar="FILE.json",
        help="write Google Model Explorer's graph JSON (every step, or those of --step, in every view; "
        "modules as layers) and its node data files beside it; open with `model-explorer FILE.json`",
    )
    steps = parser.add_mutually_exclusive_group()
    steps.add_argument(
        "--step", metavar="NAME|N", help="the steps of pass NAME (any spelling), or step N (as `trace` numbers them)"
    )
    steps.add_argument("--all", action="store_true", help="every step (default: the last step)")
    parser.add_argument("--view", choices=("whole", "forward", "backward", "joint"), default="whole")
    parser.add_argument(
        "--dg", type=int, default=0, metavar="K",
        help="the DifferentiableGraph the forward, backward and joint views show (default 0)",
    )
    parser.add_argument("--theme", choices=("dark", "light"), default="dark")
    parser.add_argument(
        "--style", choices=("screen", "slide"), default="screen",
        help="slide: each step laid out alone on a light 16:9 page, labels without types, a one-line "
        "legend of the roles drawn, text 14 px or more at 1600x900 where it fits (default: screen, "
        "every step at its place in one layout)",
    )
    parser.add_argument(
        "--format", choices=("svg", "png", "pdf"), default="svg",
        help="the pictures' format (a slide's PNG is 1600x900); without --svg DIR they go into "
        "<target>-export/ beside the target",
    )
    parser.add_argument(
        "--leftovers", action="store_true",
        help="also draw, faded, the nodes each step removed (default: only what the step shows)",
    )
    parser.add_argument(
        "--force", action="store_true",
        help="replace an existing --html or --model-explorer file, and export into a non-empty --svg folder "
        "after removing the pictures an earlier export wrote there (NNN-*.svg); never an input",
    )
    parser.add_argument(
        "--inputs", metavar="SPEC",
        help="example inputs, one per graph input: a shape like 8x4 (optionally :f32, :i64...) or a number",
    )
    add_autodiff_option(parser)
    add_inline_threshold_option(parser)
    add_compile_option(parser)
    add_detail_option(parser)
    parser.set_defaults(run=run)


def choose_steps(trace: Any, view: Any, dg: int, pass_name: str | None, every: bool) -> list[int]:
    """Indices of the steps to export; raises :class:`ExportError` when there are none."""
    from gradview.runtime.pass_trace import normalize_pass_name
    from gradview.viewer.views import view_unavailable_reason

    if len(trace) == 0:
        raise ExportError("the trace holds no step to draw")
    if pass_name is not None and pass_name.strip().isdigit():
        index = int(pass_name)
        if index >= len(trace):
            raise ExportError(f"no step {index}: the trace has steps 0 to {len(trace) - 1}")
        indices = [index]
    elif pass_name is not None:
        wanted = normalize_pass_name(pass_name)
        indices = [s.index for s in trace if normalize_pass_name(s.pass_name) == wanted]
        if not indices:
            names = ", ".join(sorted({s.pass_name for s in trace}))
            raise ExportError(f"no step of pass {pass_name!r}; passes: {names}")
    elif every:
        indices = list(range(len(trace)))
    else:
        indices = [len(trace) - 1]
    shown = [i for i in indices if view_unavailable_reason(trace, i, view, dg) is None]
    if not shown:
        raise ExportError(f"the {view.value} view has nothing to show: {view_unavailable_reason(trace, indices[-1], view, dg)}")
    return shown


def run(args: argparse.Namespace) -> int:
    try:
        for line in _export(args):
            print(line)
    except ExportError as exc:
        print(f"gradview: error: {exc}", file=sys.stderr)
        return 1
    return 0


def _export(args: argparse.Namespace) -> list[str]:
    """Do the export; returns what to report, raises ExportError with one line."""
    from gradview.viewer.detail import Detail
    from gradview.viewer.export import export_trace_html, export_trace_svgs
    from gradview.viewer.layout import DotMissingError, LayoutError, graphviz_program
    from gradview.viewer.model import View
    from gradview.viewer.session import TargetError, load_target

    pictures = args.style != "screen" or args.format != "svg"
    if not args.svg and not args.html and not args.model_explorer:
        if not pictures:
            raise ExportError("nothing to write: give --svg DIR, --html FILE and/or --model-explorer FILE.json")
        args.svg = str(_picture_folder(args.target))
    inputs = _check_outputs(args)  # before the slow part: fail fast
    try:
        for program in ("dot", "neato") if args.svg or args.html else ():  # before the slow part: fail fast
            graphviz_program(program)
        session = load_target(
            args.target, args.inputs, autodiff=args.autodiff, inline_threshold=args.inline_threshold,
            compile=args.compile, min_group_size=args.min_group_size,
        )
    except (TargetError, DotMissingError) as exc:
        raise ExportError(str(exc)) from None
    for note in session.notes:
        print(f"gradview: note: {note}", file=sys.stderr)
    report = _export_model_explorer(args, session.trace) if args.model_explorer else []
    if not args.svg and not args.html:
        return report
    view = View(args.view)
    detail = Detail(args.detail) if args.detail else None
    try:
        indices = choose_steps(session.trace, view, args.dg, args.step, args.all)
    except ExportError as exc:
        raise ExportError(f"{args.target}: {exc}") from None
    try:
        if args.svg and pictures:
            report += _export_pictures(args, session.trace, view, indices, detail)
        elif args.svg:
            removed = clear_old_export(args.svg, inputs) if args.force else []
            paths = export_trace_svgs(
                session.trace, args.svg, view, args.dg, indices, args.theme, args.leftovers, detail
            )
            report.append(_svg_report(paths, len(indices), removed, args.svg))
        if args.html:
            export_trace_html(
                session.trace, args.html, view, args.dg, indices, args.theme, f"gradview: {args.target}",
                args.leftovers, detail,
            )
            report.append(f"wrote {args.html} ({len(indices)} step{'s' if len(indices) != 1 else ''})")
    except (DotMissingError, LayoutError) as exc:
        raise ExportError(str(exc)) from None
    except OSError as exc:
        raise ExportError(f"{exc.filename or args.svg or args.html}: cannot write: {exc.strerror or exc}") from None
    return report


def _picture_folder(target: str) -> Any:
    """``<target>-export/`` beside the target, or ``-2``, ``-3``... when that one is not empty."""
    from gradview.viewer.export_paths import default_export_dir, unused_path

    folder = default_export_dir(target)
    return unused_path(folder) if folder.exists() and any(folder.iterdir()) else folder


def _export_pictures(args: argparse.Namespace, trace: Any, view: Any, indices: list[int], detail: Any) -> list[str]:
    """``--style slide`` or ``--format png|pdf``: the pictures, and what to report (with the text size)."""
    from gradview.viewer.slides import MIN_TEXT_PX, export_trace_pictures

    written = export_trace_pictures(
        trace, args.svg, view, args.dg, indices, args.format, detail, args.style, args.theme, args.leftovers
    )
    kind = f"{args.format.upper()} {'slide' if args.style == 'slide' else 'file'}"
    lines = [f"wrote {len(written)} {kind}{'s' if len(written) != 1 else ''} to {args.svg}"]
    small = [(path, size) for path, size in written if size < MIN_TEXT_PX]
    if args.style == "slide" and small:
        path, size = min(small, key=lambda item: item[1])
        print(
            f"gradview: note: {path.name}: text is {size:.1f} px on a 1600x900 slide (under {MIN_TEXT_PX:g}): "
            "try --detail ops, or the forward or backward view alone",
            file=sys.stderr,
        )
    return lines


def _check_outputs(args: argparse.Namespace) -> list[Any]:
    """Refuse outputs that are the input or exist (unless --force); the input paths."""
    from .output_paths import OutputError, check_output_file, check_output_folder, input_paths

    inputs = input_paths(args.target)
    try:
        if args.svg:
            check_output_folder(args.svg, inputs, args.force, "--svg")
        if args.html:
            check_output_file(args.html, inputs, args.force, "--html")
        if args.model_explorer:
            check_output_file(args.model_explorer, inputs, args.force, "--model-explorer")
    except OutputError as exc:
        raise ExportError(str(exc)) from None
    return inputs


def _svg_report(paths: list[Any], steps: int, removed: list[Any], folder: str) -> str:
    line = f"wrote {len(paths)} SVG file{'s' if len(paths) != 1 else ''} to {folder}"
    notes = []
    if steps > len(paths):
        same = steps - len(paths)
        notes.append(f"{same} step{'s' if same != 1 else ''} drew the same picture as the step before, of the same pass")
    if removed:
        notes.append(f"removed {len(removed)} picture{'s' if len(removed) != 1 else ''} of an earlier export first")
    return line + (f" ({'; '.join(notes)})" if notes else "")


def _export_model_explorer(args: argparse.Namespace, trace: Any) -> list[str]:
    """Write the Model Explorer files: every step, or those of ``--step``, in every view."""
    import shlex

    from gradview.viewer.export_model_explorer import ModelExplorerError, write_model_explorer
    from gradview.viewer.view_registry import DEFAULT_VIEW

    try:
        indices = choose_steps(trace, DEFAULT_VIEW, 0, args.step, True)
        written = write_model_explorer(
            trace, args.model_explorer, indices, label=args.target, keep_unchanged=args.step is not None
        )
    except ExportError as exc:
        raise ExportError(f"{args.target}: {exc}") from None
    except ModelExplorerError as exc:
        raise ExportError(str(exc)) from None
    except OSError as exc:
        raise ExportError(f"{exc.filename or args.model_explorer}: cannot write: {exc.strerror or exc}") from None
    notes = list(written.notes)
    if args.detail is not None:
        notes.append(
            f"--detail {args.detail} applies to --svg and --html: the Model Explorer file holds every node "
            "of the IR, with the modules as layers to open one by one"
        )
    for note in notes:
        print(f"gradview: note: {note}", file=sys.stderr)
    command = f"model-explorer {shlex.quote(str(written.graph))}"
    if written.node_data:
        command += " --node_data_paths=" + shlex.quote(",".join(str(path) for path in written.node_data))
    count = len(written.node_data)
    data = f" and {count} node data file{'s' if count != 1 else ''}" if count else ""
    graphs = f"{written.graphs} graph{'s' if written.graphs != 1 else ''}"
    return [f"wrote {written.graph} ({graphs}){data}; open it with: {command}"]

"""Where a command may write: never over its own input, never over a file without ``--force``.

``gradview view --save-trace``, ``gradview export --svg/--html/--model-explorer``
check their outputs here before any slow work: an output that is the
command's input is refused (``export t.ir --html t.ir`` would replace the graph
with a page), an existing file or a non-empty export folder is refused unless
``--force``. With ``--force`` an export folder first loses the SVGs an earlier
export wrote there (named ``NNN-<pass>-<graph>.svg``), so no stale picture
stays beside the new ones; the user's other files stay.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["OutputError", "input_paths", "check_output_file", "check_output_folder", "clear_old_export", "EXPORT_SVG"]

# The names gradview gives exported pictures (viewer.export.svg_file_name): index, pass, graph.
EXPORT_SVG = re.compile(r"^\d{3,}-[A-Za-z0-9._-]+\.svg$")
_SHOWN = 3


class OutputError(Exception):
    """An output the command must not write; the message is one line with the fix."""


def input_paths(target: str) -> list[Path]:
    """The files and folders a target reads: ``model.py`` for ``model.py:fn``, else the path itself."""
    lowered = target.lower()
    if ".py:" in lowered and lowered.rpartition(":")[0].endswith(".py"):
        return [Path(target.rpartition(":")[0])]
    return [Path(target)]


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return a.resolve() == b.resolve()


def check_output_file(path: str, inputs: list[Path], force: bool, option: str) -> None:
    """Refuse to write ``path`` (given with ``option``) over an input, a folder, or, without ``force``, a file."""
    out = Path(path)
    for source in inputs:
        inside = source.is_dir() and out.exists() and source.resolve() in out.resolve().parents
        if _same(out, source) or out.resolve() == source.resolve() or inside:
            raise OutputError(f"{option} {path} is the input of this command; writing it would replace the input: give another name")
    if out.is_dir():
        raise OutputError(f"{option} {path} is a folder; give a file name")
    if out.exists() and not force:
        raise OutputError(f"{option} {path} exists; give --force to replace it, or another name")


def check_output_folder(path: str, inputs: list[Path], force: bool, option: str) -> None:
    """Refuse to export into ``path`` when it is (or holds) an input's place, is a file, or,
    without ``force``, holds anything."""
    out = Path(path)
    for source in inputs:
        if _same(out, source) or out.resolve() == source.resolve():
            raise OutputError(f"{option} {path} is the input of this command; give another folder")
    if out.exists() and not out.is_dir():
        raise OutputError(f"{option} {path} is a file, not a folder; give a folder to write the SVGs into")
    if not out.is_dir() or force:
        return
    held = sorted(entry.name for entry in out.iterdir())
    if held:
        shown = ", ".join(held[:_SHOWN]) + (", ..." if len(held) > _SHOWN else "")
        raise OutputError(
            f"{option} {path} is not empty ({len(held)} entr{'y' if len(held) == 1 else 'ies'}: {shown}); "
            "give --force to replace an earlier export there (its NNN-*.svg pictures are removed first), "
            "or another folder"
        )


def clear_old_export(path: str, inputs: list[Path]) -> list[Path]:
    """``--force``: remove the pictures an earlier export wrote into ``path`` (never an input); the paths removed."""
    out = Path(path)
    if not out.is_dir():
        return []
    removed = []
    for entry in sorted(out.iterdir()):
        if entry.is_file() and EXPORT_SVG.match(entry.name) and not any(_same(entry, source) for source in inputs):
            entry.unlink()
            removed.append(entry)
    return removed

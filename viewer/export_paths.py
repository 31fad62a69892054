"""Where the viewer's ``e`` and ``E`` write: beside the target, never over a file.

The folder is named after the target and sits in the target's directory
(``examples/mlp.ir`` exports into ``examples/mlp-export/``,
``model.py:build`` into ``model-build-export/`` beside ``model.py``), not in
whatever directory the app was started from. A name already taken gets a
number (``steps-whole-2.html``): a second export never replaces the first, and
the notice names the file written.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["default_export_dir", "unused_path"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def default_export_dir(target: str) -> Path:
    """``<target's directory>/<target's name>-export``."""
    lowered = target.lower()
    if ".py:" in lowered and lowered.rpartition(":")[0].endswith(".py"):
        path_text, _, function = target.rpartition(":")
        path = Path(path_text)
        name = f"{path.stem}-{function}"
    else:
        path = Path(target.rstrip("/\\") or ".")
        name = path.stem if path.suffix else path.name
    safe = _UNSAFE.sub("_", name).strip("._") or "gradview"
    return path.parent / f"{safe}-export"


def unused_path(path: Path) -> Path:
    """``path``, or ``<stem>-2<suffix>``, ``-3``... the first name nothing has."""
    if not path.exists():
        return path
    number = 2
    while True:
        candidate = path.with_name(f"{path.stem}-{number}{path.suffix}")
        if not candidate.exists():
            return candidate
        number += 1

"""The checks are the runtime's: importing them loads no Textual and no viewer module."""

from __future__ import annotations

import subprocess
import sys


def test_the_checks_load_without_textual_or_the_viewer() -> None:
    code = (
        "import sys, gradview.runtime.checks\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual' or m.startswith('gradview.viewer')))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"

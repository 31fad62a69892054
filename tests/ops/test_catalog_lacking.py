"""``python -m gradview.ops.catalog --lacking`` prints every refusal with its reason."""

from __future__ import annotations

import subprocess
import sys

from gradview.ops import REFUSED


def test_lacking_lists_every_refused_op_with_its_reason_and_the_dtypes_refused() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "gradview.ops.catalog", "--lacking"], capture_output=True, text=True, check=True
    ).stdout
    lines = out.splitlines()
    assert lines[0] == f"# {len(REFUSED)} ops PyTorch has that gradview refuses to run, with the reason"
    for name, reason in REFUSED.items():
        (line,) = [line for line in lines if line.split() and line.split()[0] == name]
        assert line.endswith(reason)
    assert any(line.startswith("dtypes ") and "BFloat16" in line for line in lines)
    assert REFUSED["aten::fft_rfft"] == "its result is complex, and gradview's tensors are real"

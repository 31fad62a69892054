"""``--compile``: run a PyTorch model through torch.compile and read what it logged.

``model.py:build`` returns ``(model, example_inputs)`` (see
:mod:`gradview.loaders.targets`). With ``--compile`` the model is not
converted to TorchScript; instead a child Python process imports the file,
calls ``build()``, compiles the model with ``torch.compile(model,
backend="aot_eager")`` and runs one training step (forward, then backward of
the sum of the floating-point outputs) with ``TORCH_TRACE`` pointing at a
temporary directory. PyTorch's structured trace then holds AOTAutograd's
joint, forward and backward graphs, which open like any TORCH_TRACE log.

A child process because PyTorch reads ``TORCH_TRACE`` when it is imported,
and so that a model that crashes or hangs cannot take the viewer with it.
Needs PyTorch (the ``oracle`` extra); reading the log afterwards does not.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["CompileError", "compile_and_trace", "CHILD_TIMEOUT_SECONDS"]

CHILD_TIMEOUT_SECONDS = 600
_MARK = "gradview-compile-error: "


class CompileError(Exception):
    """The model could not be compiled and run; the message is one line."""


def compile_and_trace(spec: str, into: str | Path) -> Path:
    """Run ``model.py:name`` under torch.compile with TORCH_TRACE=``into``; returns ``into``."""
    path, _, name = spec.rpartition(":")
    if not Path(path).is_file():
        raise CompileError(f"{path}: cannot read: no such file")
    env = {**os.environ, "TORCH_TRACE": str(into)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "gradview.loaders.compile_child", str(Path(path).resolve()), name],
            env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_SECONDS, check=False,
        )
    except subprocess.TimeoutExpired:
        raise CompileError(f"{spec}: torch.compile did not finish in {CHILD_TIMEOUT_SECONDS} s") from None
    if done.returncode != 0:
        marked = [line[len(_MARK):] for line in done.stderr.splitlines() if line.startswith(_MARK)]
        last = marked[-1] if marked else (done.stderr.strip().splitlines() or ["it exited with status " + str(done.returncode)])[-1]
        raise CompileError(f"{spec}: {last}")
    return Path(into)


def temporary_trace_dir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="gradview-torch-trace-")

"""The viewer's name for the one target loader, :mod:`gradview.loaders.targets`.

``gradview view``, ``gradview trace`` and ``gradview export`` open a target
through the same code, so they show the same trace; this module keeps the
names the viewer (and older callers) import.
"""

from __future__ import annotations

from gradview.loaders.targets import (
    NO_INPUTS,
    PythonTarget,
    Session,
    TargetError,
    example_inputs_for,
    load_python,
    load_target,
    parse_input_spec,
    trace_executor,
    trace_pipelines,
)

__all__ = [
    "NO_INPUTS", "PythonTarget", "Session", "TargetError", "example_inputs_for", "load_python", "load_target",
    "parse_input_spec", "trace_executor", "trace_pipelines",
]

"""The child process of ``--compile`` (:mod:`gradview.loaders.compile_model`).

``python -m gradview.loaders.compile_child FILE NAME``, with ``TORCH_TRACE``
set: imports FILE, calls ``NAME()`` for ``(model, example_inputs[, how])``,
compiles the model with ``torch.compile(backend="aot_eager")`` (whose
compilers also log each node's module: :mod:`gradview.loaders.compiled_modules`)
and runs one training step. A failure prints one line starting ``gradview-compile-error: ``
on stderr and exits with status 1.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from gradview.loaders.compiled_modules import logging_backend

_MARK = "gradview-compile-error: "


def _fail(message: str) -> None:
    print(_MARK + message.splitlines()[0] if message else _MARK + "failed", file=sys.stderr)
    raise SystemExit(1)


def _outputs(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [item for part in value for item in _outputs(part)]
    if isinstance(value, dict):
        return [item for part in value.values() for item in _outputs(part)]
    return [value]


def main(path: str, name: str) -> None:
    try:
        import torch  # only the child needs PyTorch
    except ImportError:
        _fail("--compile needs PyTorch: pip install 'gradview[torch]'")
    loader = importlib.util.spec_from_file_location("_gradview_compiled_model", path)
    if loader is None or loader.loader is None:
        _fail(f"{path}: cannot import as a Python module")
    module = importlib.util.module_from_spec(loader)
    try:
        loader.loader.exec_module(module)
    except Exception as exc:  # the user's module failed: one line
        _fail(f"import failed: {type(exc).__name__}: {exc}")
    builder = getattr(module, name, None)
    if not callable(builder):
        _fail(f"no function named {name!r}")
    try:
        built = builder()
    except Exception as exc:
        _fail(f"{name}() failed: {type(exc).__name__}: {exc}")
    if not isinstance(built, tuple) or len(built) not in (2, 3):
        _fail(f"{name}() must return (model, example_inputs) or (model, example_inputs, how)")
    model, examples = built[0], built[1]
    inputs = list(examples) if isinstance(examples, list | tuple) else [examples]
    try:
        # aot_eager, whose compilers also log each node's module (PyTorch's graphs print none).
        compiled = torch.compile(model, backend=logging_backend(torch, type(model).__name__))
        outputs = [o for o in _outputs(compiled(*inputs)) if isinstance(o, torch.Tensor) and o.requires_grad]
        if not outputs:
            _fail("no output requires grad: nothing to differentiate (do the parameters or inputs require grad?)")
        sum(o.float().sum() for o in outputs).backward()
    except SystemExit:
        raise
    except Exception as exc:  # torch.compile or the model failed: one line
        _fail(f"torch.compile failed: {type(exc).__name__}: {exc}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        _fail("usage: python -m gradview.loaders.compile_child FILE NAME")
    main(sys.argv[1], sys.argv[2])

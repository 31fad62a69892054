"""TORCH_TRACE logs of the real models in ``examples/``, made with PyTorch when asked (issue 21).

The ResNet-18 (``examples/resnet18.py``) and the 12-layer TransformerEncoder
(``examples/transformer_encoder.py``) are compiled in train mode with
``torch.compile(backend="aot_eager")`` and run one training step under
``TORCH_TRACE``, exactly as ``gradview view model.py:build_train --compile``
does (:func:`gradview.loaders.compile_model.compile_and_trace`). The logs are
1.3 MB (ResNet-18: joint graph 756 nodes, forward 398, backward 359) and 1.8 MB
(encoder: 3,713, 1,752, 2,008), so none is committed: each is made once per
process, in 5 to 10 s, into a temporary directory removed at exit.

    from tests.real_model_logs import torch_trace_log
    log = torch_trace_log("resnet18")  # the log file, alone in its directory
    session = load_target(str(log.parent))  # the directory, as TORCH_TRACE=DIR leaves it

Callers skip where PyTorch is missing (``pytest.importorskip("torch")``).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from gradview.loaders.compile_model import compile_and_trace

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# name -> the builder compiled for its training step
BUILDERS: dict[str, str] = {
    "resnet18": f"{EXAMPLES / 'resnet18.py'}:build_train",
    "transformer_encoder": f"{EXAMPLES / 'transformer_encoder.py'}:build_train",
}


def make_torch_trace(builder: str, into: Path) -> Path:
    """Compile ``builder`` (``model.py:fn``) and run one training step with
    TORCH_TRACE=``into``; returns the one log file PyTorch wrote there."""
    compile_and_trace(builder, into)
    logs = sorted(Path(into).glob("*.log"))
    if len(logs) != 1:
        raise RuntimeError(f"{builder}: expected one TORCH_TRACE log in {into}, found {len(logs)}")
    return logs[0]


@functools.cache
def torch_trace_log(name: str) -> Path:
    """The TORCH_TRACE log of real model ``name`` (a key of :data:`BUILDERS`), made once per process."""
    directory = Path(tempfile.mkdtemp(prefix=f"gradview-{name}-torch-trace-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return make_torch_trace(BUILDERS[name], directory)

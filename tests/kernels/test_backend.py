"""Backends: the NumPy path never imports CuPy; an unavailable backend is a clear error."""

import subprocess
import sys

import numpy as np
import pytest

from gradview.ir import parse_ir
from gradview.kernels.backend import BackendUnavailable, get_backend
from gradview.runtime import run_graph


def test_numpy_path_does_not_import_cupy() -> None:
    script = (
        "import sys, numpy as np\n"
        "from gradview.ir import parse_ir\n"
        "from gradview.runtime import run_graph\n"
        "g = parse_ir('graph(%x : Tensor):\\n  %y : Tensor = aten::tanh(%x)\\n  return (%y)\\n')\n"
        "run_graph(g, [np.ones(3)])\n"
        "print('cupy' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_unknown_backend_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        get_backend("tpu")


def test_cupy_backend_round_trips_arrays(backend: str) -> None:
    graph = parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::tanh(%x)\n  return (%y)\n")
    result = run_graph(graph, [np.linspace(-1, 1, 5)], backend=backend)[0]
    assert isinstance(result, np.ndarray)  # results come back to the host
    np.testing.assert_allclose(result, np.tanh(np.linspace(-1, 1, 5)))


def test_missing_cupy_says_how_to_get_it() -> None:
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(BackendUnavailable, match=r"gradview\[gpu\]"):
            get_backend("cupy")
    else:
        pytest.skip("CuPy is installed here; the missing-CuPy message cannot be seen")

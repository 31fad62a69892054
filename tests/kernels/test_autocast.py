"""The autocast casts (kernels/script_queries.py) against PyTorch.

``_autocast_to_reduced_precision`` and ``_autocast_to_full_precision`` are
the identity when autocast is disabled for the tensor's device (the flags
are arguments), and cast float32 <-> float16 when it is enabled; tensors of
other dtypes pass through. gradview's NumPy backend runs graphs as CPU
tensors, so ``cpu_enabled`` is the flag that matters there, exactly as for
PyTorch's CPU tensors that the oracle uses; the CuPy backend runs them as
CUDA tensors, where ``cuda_enabled`` decides (the CPU oracle is then only
asked when both flags agree).
"""

from __future__ import annotations

import numpy as np
import pytest

from gradview.kernels import script_queries as module
from gradview.ops import KERNELS
from gradview.runtime import GraphRuntimeError, run_graph

from . import oracle
from .oracle import check_op, op_graph

HALF, FLOAT, DOUBLE, BFLOAT16 = 5, 6, 7, 15  # TorchScript ScalarType numbers
RNG = np.random.default_rng(0)
INPUTS = [
    RNG.standard_normal((3, 4)).astype(np.float32),
    RNG.standard_normal(()).astype(np.float32),
    RNG.standard_normal((5,)).astype(np.float16),
    RNG.standard_normal((2, 3)),
    RNG.integers(-5, 5, (4,)),
    RNG.random((3,)) < 0.5,
]
FLAGS = [(False, False), (True, False), (False, True), (True, True)]


def _ids(arrays: list[np.ndarray]) -> list[str]:
    return [f"{a.dtype}{list(a.shape)}" for a in arrays]


def _enabled(cuda_enabled: bool, cpu_enabled: bool) -> bool:
    """The flag for the device the test's backend stands for."""
    return cpu_enabled if oracle.BACKEND == "numpy" else cuda_enabled


def _run(qualified: str, args: list, **tolerances: float) -> np.ndarray:
    """check_op where the CPU oracle applies, else just gradview's result."""
    if oracle.BACKEND == "numpy" or args[1] == args[2]:
        (ours,) = check_op(qualified, args, **tolerances)
    else:
        (ours,) = run_graph(*op_graph(qualified, args), backend=oracle.BACKEND)
    return ours


@pytest.mark.parametrize("flags", FLAGS, ids=str)
@pytest.mark.parametrize("x", INPUTS, ids=_ids(INPUTS))
def test_to_reduced_precision(x: np.ndarray, flags: tuple[bool, bool]) -> None:
    enabled = _enabled(*flags)
    ours = _run("aten::_autocast_to_reduced_precision", [x, *flags, HALF, HALF], rtol=1e-3, atol=1e-3)
    assert ours.dtype == (np.float16 if enabled and x.dtype == np.float32 else x.dtype)
    np.testing.assert_allclose(ours.astype(np.float64), x.astype(np.float64), rtol=1e-3, atol=1e-3)
    ours = _run("aten::_autocast_to_reduced_precision", [x, *flags, DOUBLE, DOUBLE])
    assert ours.dtype == (np.float64 if enabled and x.dtype == np.float32 else x.dtype)


@pytest.mark.parametrize("flags", FLAGS, ids=str)
@pytest.mark.parametrize("x", INPUTS, ids=_ids(INPUTS))
def test_to_full_precision(x: np.ndarray, flags: tuple[bool, bool]) -> None:
    ours = _run("aten::_autocast_to_full_precision", [x, *flags])
    assert ours.dtype == (np.float32 if _enabled(*flags) and x.dtype == np.float16 else x.dtype)
    np.testing.assert_array_equal(ours, x)


def test_disabled_autocast_returns_the_input_itself() -> None:
    x = INPUTS[0]
    reduce = KERNELS["aten::_autocast_to_reduced_precision"]
    full = KERNELS["aten::_autocast_to_full_precision"]
    assert reduce(np, x, False, False, HALF, BFLOAT16) is x
    half = x.astype(np.float16)
    assert full(np, half, False, False) is half


def test_bfloat16_is_refused_when_it_would_be_used() -> None:
    x = INPUTS[0]
    # Disabled: bfloat16 is never needed, so the identity runs.
    assert KERNELS["aten::_autocast_to_reduced_precision"](np, x, False, False, HALF, BFLOAT16) is x
    graph, inputs = op_graph("aten::_autocast_to_reduced_precision", [x, True, True, BFLOAT16, BFLOAT16])
    with pytest.raises(GraphRuntimeError, match="bfloat16"):
        run_graph(graph, inputs, backend=oracle.BACKEND)


def test_every_kernel_of_the_module_is_checked() -> None:
    registered = {
        key for key, fn in KERNELS.items()
        if fn.__module__ == module.__name__ and fn.__name__.startswith("autocast_")
    }
    assert registered == {"aten::_autocast_to_reduced_precision", "aten::_autocast_to_full_precision"}

"""Run every kernel test on each backend: NumPy always, CuPy where a GPU is there.

Without CuPy or a GPU the CuPy runs are skipped with the reason; on the
device machine they run the same oracle comparisons on the GPU.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gradview.kernels.backend import BackendUnavailable, get_backend

from . import oracle


@pytest.fixture(params=["numpy", "cupy"], autouse=True)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    name = request.param
    if name == "cupy":
        try:
            get_backend("cupy")
        except BackendUnavailable as exc:
            pytest.skip(f"CuPy backend unavailable here: {exc}")
    previous = oracle.BACKEND
    oracle.BACKEND = name
    try:
        yield name
    finally:
        oracle.BACKEND = previous

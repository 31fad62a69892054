"""The bundled MLP's session and trace, built once per test run, without the viewer."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradview.loaders.targets import Session, load_target
from gradview.runtime.pass_trace import PassTrace

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "mlp.ir"


@pytest.fixture(scope="session")
def mlp_session() -> Session:
    """The bundled MLP (broadcasting biases) through one GraphExecutor training step."""
    return load_target(str(EXAMPLE))


@pytest.fixture(scope="session")
def mlp_trace(mlp_session: Session) -> PassTrace:
    return mlp_session.trace

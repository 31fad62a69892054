"""Shared fixtures: the bundled example's session and trace, built once per test run
(the runtime checks' fixtures, tests/runtime/checks/conftest.py)."""

from __future__ import annotations

from ..runtime.checks.conftest import EXAMPLE, ROOT, mlp_session, mlp_trace

__all__ = ["EXAMPLE", "ROOT", "mlp_session", "mlp_trace"]

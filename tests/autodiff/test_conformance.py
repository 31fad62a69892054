"""Acceptance 1: differentiate agrees with torch._C._jit_differentiate and
torch.autograd on every case of the shared conformance corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..ir.corpus import CASES_DIR, read_graph_text
from .oracle import check_gradient, random_inputs

CASES = sorted(CASES_DIR.glob("*.ir"))


def scalars_of(path: Path) -> dict[str, object]:
    found = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# %"):
            break
        name, _, value = line[3:].partition(" = ")
        found[name.strip()] = json.loads(value)
    return found


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_conformance_case(path: Path) -> None:
    text = read_graph_text(path)
    for seed in (0, 1):
        check_gradient(text, random_inputs(text, seed, scalars_of(path)), seed=seed)

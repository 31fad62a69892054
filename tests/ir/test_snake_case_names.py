"""The IR has one spelling for each name: snake_case, never torch's camelCase twins.

torch._C spells ``debugName``/``replaceAllUsesWith``; gradview spells
``debug_name``/``replace_all_uses_with`` and nothing else, so a reader (and a
grep) finds one name for one thing.
"""

from __future__ import annotations

import re

import pytest

from gradview import ir

CAMEL = re.compile(r"^[a-z][a-z0-9]*[A-Z]")


@pytest.mark.parametrize("cls", [ir.Graph, ir.Block, ir.Node, ir.Value, ir.Use], ids=lambda c: c.__name__)
def test_ir_classes_have_no_camel_case_names(cls: type) -> None:
    camel = sorted(name for name in dir(cls) if CAMEL.match(name))
    assert camel == [], f"{cls.__name__} spells {camel} in camelCase"


def test_ir_package_exports_no_camel_case_names() -> None:
    camel = sorted(name for name in dir(ir) if CAMEL.match(name))
    assert camel == []

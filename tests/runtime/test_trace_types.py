"""GraphName is a value of its own, and graph roles are spelled in one module.

A graph name equals only another GraphName (never its printed text or the
old ``("forward", k)`` tuples), so a role compared as a string literal cannot
silently stop matching; the roles' text lives in ``runtime/trace_types.py``.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from gradview.runtime import GraphName, GraphRole

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ir", "kernels", "ops", "autodiff", "runtime", "loaders", "viewer", "cli")
ROLES_MODULE = ROOT / "runtime" / "trace_types.py"
ROLE_TEXTS = {role.value for role in GraphRole}

# Modules where a role's word means something else, with what it means there.
OTHER_MEANINGS: dict[str, dict[str, str]] = {
    "kernels/fft.py": {"forward": "torch.fft's norm=", "backward": "torch.fft's norm="},
    "kernels/torch_linalg.py": {"backward": "a function's name"},
    "ir/frontend/from_torch.py": {"forward": "nn.Module's forward method"},
    "loaders/fx_graph_text.py": {"forward": "the forward method of FX code"},
    "loaders/compiled_modules.py": {"forward": "the name of AOTAutograd's compiler", "backward": "the same"},
    "runtime/autograd/__init__.py": {"backward": "the function autograd.backward in __all__"},
    "cli/main.py": {"main": "the function main in __all__"},
    "cli/export.py": {"forward": "a view name (View.FORWARD)", "backward": "a view name (View.BACKWARD)"},
    "viewer/model.py": {"forward": "the view names (View)", "backward": "the view names (View)"},
    "viewer/main_screen.py": {"main": "a widget id"},
}


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def role_literals() -> list[str]:
    """``path:line: source`` of each string literal spelling a graph role outside trace_types.py."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROLES_MODULE:
                continue
            name = path.relative_to(ROOT).as_posix()
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
            docstrings, lines = _docstrings(tree), source.splitlines()
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and node.value in ROLE_TEXTS
                    and id(node) not in docstrings
                    and node.value not in OTHER_MEANINGS.get(name, {})
                ):
                    found.append(f"{name}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return found


@pytest.mark.parametrize("name", [GraphName.main(), GraphName.forward(0), GraphName.backward_executor(1, 2)])
def test_a_graph_name_equals_no_string_or_tuple(name: GraphName) -> None:
    legacy = [str(name), name.role.value, (name.role.value, name.index), (name.role.value, name.index, name.compilation)]
    for other in legacy:
        assert name != other and other != name
        assert other not in {name} and name not in {other}
    with pytest.raises(TypeError):
        name[0]  # type: ignore[index]  # no indexing like the old tuples
    with pytest.raises(TypeError):
        iter(name)  # type: ignore[call-overload]


def test_a_graph_name_is_a_frozen_hashable_value() -> None:
    name = GraphName.forward(0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        name.index = 1  # type: ignore[misc]
    assert name == GraphName.forward(0) and hash(name) == hash(GraphName.forward(0))
    assert {name: "f"}[GraphName.parse("forward 0")] == "f"
    assert len({GraphName.main(), GraphName.main(1), GraphName.forward(0), GraphName.backward(0)}) == 3


def test_no_graph_role_is_a_string_literal_outside_the_module_that_defines_the_roles() -> None:
    offenders = role_literals()
    assert not offenders, "compare GraphName / GraphRole instead of role text:\n" + "\n".join(offenders)


def test_the_exceptions_still_use_their_words() -> None:
    """An entry of OTHER_MEANINGS whose module no longer spells the word is dropped, not kept as a hole."""
    for name, words in OTHER_MEANINGS.items():
        constants = {
            node.value for node in ast.walk(ast.parse((ROOT / name).read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant)
        }
        assert set(words) <= constants, (name, set(words) - constants)

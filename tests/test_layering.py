"""Data flows one way: each layer imports only the layers below it.

IR core and kernels at the bottom (neither imports the other), the op library
(each op's kernel binding, shape rule and gradient) above both, passes above it, autodiff above passes, the runtime above autodiff, the CLI and viewer
on top. The check reads every module's imports (``import`` statements,
module level and inside functions) with ``ast``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# For each layer: the folders of its modules, and the gradview packages it may not import.
FORBIDDEN = {
    "ir-core": (["ir"], ["gradview.ir.passes", "gradview.kernels", "gradview.ops", "gradview.autodiff", "gradview.runtime",
                         "gradview.loaders", "gradview.viewer", "gradview.cli"]),
    "kernels": (["kernels"], ["gradview.ir", "gradview.ops", "gradview.autodiff", "gradview.runtime", "gradview.loaders",
                              "gradview.viewer", "gradview.cli"]),
    "ops": (["ops"], ["gradview.ir.passes", "gradview.autodiff", "gradview.runtime", "gradview.loaders",
                      "gradview.viewer", "gradview.cli"]),
    "passes": (["ir/passes"], ["gradview.autodiff", "gradview.runtime", "gradview.loaders", "gradview.viewer", "gradview.cli"]),
    "autodiff": (["autodiff"], ["gradview.runtime", "gradview.loaders", "gradview.viewer", "gradview.cli"]),
    "runtime": (["runtime"], ["gradview.loaders", "gradview.viewer", "gradview.cli"]),
    "loaders": (["loaders"], ["gradview.viewer", "gradview.cli"]),
}


def imported_modules(path: Path, package: str) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def package_of(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return "gradview." + ".".join(parts[:-1] if path.name != "__init__.py" else parts)


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_only_lower_layers(layer: str) -> None:
    folders, forbidden = FORBIDDEN[layer]
    offenders = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if layer == "ir-core" and "passes" in path.relative_to(ROOT / "ir").parts:
                continue
            for module in imported_modules(path, package_of(path)):
                if any(module == f or module.startswith(f + ".") for f in forbidden):
                    offenders.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not offenders, "\n".join(offenders)

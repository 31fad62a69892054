"""Data flows one way: each layer imports only the layers its arrows point to.

IR core and kernels at the bottom (neither imports the other), the op library
(each op's kernel binding, shape rule and gradient) above both, passes above it,
autodiff above passes, the runtime above autodiff, the loaders (what PyTorch
prints and what the user names, read into pass traces) above the runtime, the
viewer and the CLI on top. The viewer goes through the runtime's public API
(``gradview.runtime``'s ``__all__`` and ``gradview.runtime.checks``), and no
module loads a project module by name (``importlib``), so every dependency is an
``import`` statement this file sees. Imports are read with ``ast``: module level
and inside functions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Each layer: its folders, and the layers it may import (its arrows), itself aside.
LAYERS: dict[str, tuple[list[str], set[str]]] = {
    "ir-core": (["ir"], set()),
    "kernels": (["kernels"], set()),
    "ops": (["ops"], {"ir-core", "kernels"}),
    "passes": (["ir/passes"], {"ir-core", "kernels", "ops"}),
    "autodiff": (["autodiff"], {"ir-core", "kernels", "ops", "passes"}),
    "runtime": (["runtime"], {"ir-core", "kernels", "ops", "passes", "autodiff"}),
    "loaders": (["loaders"], {"ir-core", "kernels", "ops", "passes", "autodiff", "runtime"}),
    "viewer": (["viewer"], {"ir-core", "runtime", "loaders"}),
    "cli": (["cli"], {"ir-core", "kernels", "ops", "passes", "autodiff", "runtime", "loaders", "viewer"}),
}
# The gradview package of each layer (the longest prefix decides: passes live inside the IR).
PACKAGES = {
    "gradview.ir": "ir-core", "gradview.ir.passes": "passes", "gradview.kernels": "kernels", "gradview.ops": "ops",
    "gradview.autodiff": "autodiff", "gradview.runtime": "runtime", "gradview.loaders": "loaders",
    "gradview.viewer": "viewer", "gradview.cli": "cli",
}
RUNTIME_CHECKS = "gradview.runtime.checks"  # a public package of the runtime, as gradview.runtime itself


def imported_modules(path: Path, package: str) -> set[str]:
    return {module for module, _ in imports(path, package)}


def imports(path: Path, package: str) -> Iterator[tuple[str, int]]:
    """Each module (and ``module.name`` of a from-import) ``path`` imports, with its line."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module, node.lineno
            for alias in node.names:
                yield f"{module}.{alias.name}", node.lineno


def package_of(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return "gradview." + ".".join(parts[:-1] if path.name != "__init__.py" else parts)


def layer_of(module: str) -> str | None:
    """The layer of gradview module ``module``; None outside the project."""
    found = [p for p in PACKAGES if module == p or module.startswith(p + ".")]
    return PACKAGES[max(found, key=len)] if found else None


def modules_of(layer: str) -> Iterator[Path]:
    for folder in LAYERS[layer][0]:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if layer_of(package_of(path) + "." + path.stem) == layer:  # ir/passes is not ir-core's
                yield path


def project_modules() -> Iterator[Path]:
    for layer in LAYERS:
        yield from modules_of(layer)


def test_every_project_folder_is_a_layer() -> None:
    folders = {path.parent.relative_to(ROOT).parts[0] for path in project_modules()}
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists() and p.name != "tests"}
    assert packages <= folders, f"folders that no layer names: {sorted(packages - folders)}"


@pytest.mark.parametrize("layer", list(LAYERS))
def test_layer_imports_only_the_layers_below_it(layer: str) -> None:
    allowed = LAYERS[layer][1] | {layer}
    offenders = []
    for path in modules_of(layer):
        for module, line in imports(path, package_of(path)):
            target = layer_of(module)
            if target is not None and target not in allowed:
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {module} ({target})")
    assert not offenders, "\n".join(sorted(set(offenders)))


def public_runtime_names() -> dict[str, set[str]]:
    """The runtime's public API: the names ``gradview.runtime`` and ``gradview.runtime.checks`` export."""
    import gradview.runtime
    import gradview.runtime.checks

    return {"gradview.runtime": set(gradview.runtime.__all__), RUNTIME_CHECKS: set(gradview.runtime.checks.__all__)}


def test_the_viewer_imports_only_the_runtimes_public_api() -> None:
    """``from gradview.runtime import X`` (X exported) or ``from gradview.runtime.checks import Y``;
    never a runtime module by its path (``gradview.runtime.pass_trace``)."""
    public = public_runtime_names()
    offenders = []
    for path in modules_of("viewer"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Import):
                offenders += [f"{where} imports {a.name}" for a in node.names if _private_runtime(a.name)]
            elif isinstance(node, ast.ImportFrom) and not node.level and layer_of(node.module or "") == "runtime":
                if node.module not in public:
                    offenders.append(f"{where} imports from {node.module}")
                    continue
                offenders += [
                    f"{where} imports {node.module}.{a.name}, which it does not export"
                    for a in node.names if a.name not in public[node.module]
                ]
    assert not offenders, "\n".join(offenders)


def _private_runtime(module: str) -> bool:
    return layer_of(module) == "runtime" and module not in ("gradview.runtime", RUNTIME_CHECKS)


# Calls that load a module by its name: ``importlib.import_module("gradview.x")``,
# ``__import__(...)``, ``importlib.util.find_spec(...)``.
_LOADS_BY_NAME = {"import_module", "__import__", "find_spec"}


def test_no_project_module_is_loaded_by_name() -> None:
    """Every dependency between project modules is an import statement: a module name in a
    string (or computed) hides it from the layering above and from readers."""
    offenders = []
    for path in project_modules():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, ast.Call) or _called_name(node.func) not in _LOADS_BY_NAME or not node.args:
                continue
            name = node.args[0]
            plain = isinstance(name, ast.Constant) and isinstance(name.value, str)
            if not plain or name.value.startswith(("gradview", ".")):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} loads {ast.unparse(name)} by name")
    assert not offenders, "\n".join(offenders)


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None

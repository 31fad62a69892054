"""Module paths: which ``nn.Module`` of a model a node belongs to.

PyTorch's tracer ends every node of a module's ``inlined_graph`` with the
module's scope, one ``__module.``-prefixed qualified name per level::

    %x : Tensor = aten::relu(%y), scope: __module.layer1/__module.layer1.0/__module.layer1.0.relu

That text is kept as it is on ``Node.scope`` (and on the trace's node
records), whatever produced the graph: TorchScript's tracer, ``from_torch``,
or a TORCH_TRACE graph whose nodes name their module. Everything that groups
nodes by module (the viewer's module boxes, exports, ``gradview saved``) reads
it through :func:`module_path`, which gives the dotted path PyTorch's
``named_modules()`` uses (``layer1.0.relu``; ``""`` for the model itself).
"""

from __future__ import annotations

__all__ = ["MODULE_PREFIX", "module_path", "scope_text", "parent_path", "ancestors", "owner_of_parameter"]

MODULE_PREFIX = "__module."


def module_path(scope: str | None) -> str:
    """The dotted module path of a node's ``scope`` (``""``: the model itself, or no scope).

    The last level of the scope holds the whole qualified name, so the path
    is read from it alone: ``__module.layer1/__module.layer1.0`` -> ``layer1.0``.
    Levels not written by a module (a function's scope) are dropped."""
    if not scope:
        return ""
    for level in reversed(scope.split("/")):
        if level.startswith(MODULE_PREFIX):
            return level[len(MODULE_PREFIX):]
    return ""


def scope_text(path: str) -> str | None:
    """The scope PyTorch prints for module ``path`` (None for the model itself):
    ``layer1.0`` -> ``__module.layer1/__module.layer1.0``."""
    if not path:
        return None
    parts = path.split(".")
    return "/".join(MODULE_PREFIX + ".".join(parts[: i + 1]) for i in range(len(parts)))


def parent_path(path: str) -> str | None:
    """The module that holds ``path`` (``layer1.0.conv1`` -> ``layer1.0``; ``""`` for a top-level
    module; None for the model itself)."""
    if not path:
        return None
    return path.rpartition(".")[0]


def ancestors(path: str) -> list[str]:
    """The modules from the outermost below the model down to ``path`` itself:
    ``layer1.0.conv1`` -> ``["layer1", "layer1.0", "layer1.0.conv1"]``."""
    if not path:
        return []
    parts = path.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def owner_of_parameter(qualified_name: str, modules: set[str] | frozenset[str]) -> str | None:
    """The module that owns a parameter or buffer named ``qualified_name``
    (``layer1.0.conv1.weight`` -> ``layer1.0.conv1``) when that module is one of
    ``modules``; ``""`` for the model's own parameters; None when the name is
    not a parameter of a known module. A copy TorchScript renamed
    (``layer1.0.conv1.weight.1``) has the owner of the name it copies."""
    owner, dot, last = qualified_name.rpartition(".")
    if not dot:
        return "" if modules else None
    if owner in modules:
        return owner
    if last.isdigit():  # a renamed copy: TorchScript's ``%head.weight.1``
        return owner_of_parameter(owner, modules)
    return None

"""JSON read from files the user names, with a limit on nesting.

Python's ``json`` recurses once per level and so does every walk over what it
returns: a saved trace or a TORCH_TRACE envelope nested 1,000 lists deep would
end in a RecursionError far from the file. What gradview writes and PyTorch
logs is a few levels deep; :data:`MAX_DEPTH` leaves ample room and is checked
here, where the text is read, so a deeper file gets one line naming it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_DEPTH", "JSONTooDeepError", "loads_bounded", "check_depth"]

MAX_DEPTH = 100


class JSONTooDeepError(ValueError):
    """JSON nested more than :data:`MAX_DEPTH` levels deep."""


def check_depth(data: Any, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`JSONTooDeepError` when lists and objects in ``data`` nest deeper
    than ``limit`` (walked without recursion)."""
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            raise JSONTooDeepError(f"nested more than {limit} levels deep")
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def loads_bounded(text: str, limit: int = MAX_DEPTH) -> Any:
    """``json.loads`` that raises :class:`JSONTooDeepError` (a ValueError) instead of
    recursing without end; ``json.JSONDecodeError`` as ``json.loads`` does."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise JSONTooDeepError(f"nested more than {limit} levels deep") from None
    check_depth(data, limit)
    return data

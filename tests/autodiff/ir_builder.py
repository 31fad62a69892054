"""Small graphs for the linalg, reduction and nn formula tests, written as IR text.

``graph({"x": T(2, 3)}, ["%y : ... = aten::sum(%x, %n)"], ["y"])`` gives::

    graph(%x : Double(2, 3, requires_grad=1, device=cpu)):
      %y : ... = aten::sum(%x, %n)
      return (%y)

``const(name, value)`` writes a ``prim::Constant`` line of the right type.
"""

from __future__ import annotations

from typing import Any

__all__ = ["T", "const", "graph"]


def T(*sizes: int, grad: bool = True, dtype: str = "Double") -> str:  # reads like a type
    """A complete tensor type: ``T(2, 3)`` is ``Double(2, 3, requires_grad=1, device=cpu)``."""
    dims = "".join(f"{s}, " for s in sizes)
    return f"{dtype}({dims}requires_grad={int(grad)}, device=cpu)"


def const(name: str, value: Any) -> str:
    """``%name : type = prim::Constant[value=...]()`` for None, bool, int, float or int list."""
    if value is None:
        return f"%{name} : NoneType = prim::Constant()"
    if isinstance(value, bool):
        return f"%{name} : bool = prim::Constant[value={int(value)}]()"
    if isinstance(value, int):
        return f"%{name} : int = prim::Constant[value={value}]()"
    if isinstance(value, float):
        text = "inf" if value == float("inf") else "-inf" if value == -float("inf") else repr(value)
        return f"%{name} : float = prim::Constant[value={text}]()"
    return f"%{name} : int[] = prim::Constant[value=[{', '.join(map(str, value))}]]()"


def graph(inputs: dict[str, str], body: list[str], outputs: list[str]) -> str:
    """``graph(%a : type, ...):`` then the body lines, then ``return (...)``."""
    params = ",\n      ".join(f"%{name} : {type_}" for name, type_ in inputs.items())
    lines = [f"graph({params}):", *(f"  {line}" for line in body)]
    lines.append(f"  return ({', '.join('%' + o for o in outputs)})")
    return "\n".join(lines) + "\n"

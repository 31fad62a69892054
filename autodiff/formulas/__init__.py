"""The gradient formula library: one forward/backward pair per differentiable overload.

Importing this package imports every family module, which registers its formulas.
"""

from .registry import FORMULAS, Emitter, Formula, formula, formula_for

from . import pointwise  # noqa: E402,F401,I001 - imported for its registrations

__all__ = ["FORMULAS", "Emitter", "Formula", "formula", "formula_for"]

"""The gradient formulas still waiting to move into their op family in ``gradview.ops``.

Importing this package imports those family modules, which register their formulas
in ``gradview.ops.registry``.
"""

from gradview.ops.registry import (  # noqa: I001 - the registry first, then the families that fill it
    FORMULAS,
    NO_GRADIENT,
    Emitter,
    Formula,
    formula,
    formula_for,
    no_gradient,
    no_gradient_reason,
)

from . import without_gradient  # noqa: E402,F401,I001 - imported for its registrations
from . import catalog_gaps  # noqa: E402,F401,I001 - the op catalogue's gaps (issue 10)

__all__ = [
    "FORMULAS", "NO_GRADIENT", "Emitter", "Formula", "formula", "formula_for", "no_gradient", "no_gradient_reason",
]

"""Gradient formulas for the ops the op catalogue found without one.

Every formula that was here has moved into its op family in ``gradview.ops``.
"""

from __future__ import annotations

__all__: list[str] = []  # every formula moved into its op family in gradview.ops

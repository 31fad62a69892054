"""Symbolic sizes (as compiled graphs give them under dynamic shapes) at their symbols' values."""

from __future__ import annotations

from gradview.runtime.tensor_sizes import evaluate_size


def test_symbolic_sizes_evaluate_at_the_symbols_values() -> None:
    symbols = {"s77": 5, "s27": 8}
    assert evaluate_size("s77*s27", symbols) == 40
    assert evaluate_size("FloorDiv(s27, 3) + 1", symbols) == 3
    assert evaluate_size("Max(s77, 2*s27) - Mod(s27, 3)", symbols) == 14
    assert evaluate_size(7, symbols) == 7
    assert evaluate_size("s9", symbols) is None  # a symbol the log gave no value for
    assert evaluate_size("__import__('os')", symbols) is None  # only arithmetic is evaluated
    assert evaluate_size("s77.real", symbols) is None

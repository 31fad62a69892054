"""Value summaries: a tensor's statistics over its finite entries, NaN and inf counted apart."""

from __future__ import annotations

import numpy as np

from gradview.runtime.checks import summarize_value


def test_summary_of_a_tensor_counts_nan_and_inf_apart() -> None:
    summary = summarize_value(np.array([1.0, np.nan, -np.inf, 3.0, np.inf]))
    assert (summary.min, summary.max, summary.mean) == (1.0, 3.0, 2.0)
    assert (summary.nan, summary.inf) == (1, 2)
    assert summary.dtype == "float64" and summary.shape == (5,)


def test_summary_of_all_nan_empty_bool_and_python_values() -> None:
    assert summarize_value(np.full(3, np.nan)).min is None
    assert summarize_value(np.zeros((0, 4))).shape == (0, 4)
    flags = summarize_value(np.array([True, False, True, True]))
    assert (flags.min, flags.max, flags.mean) == (0.0, 1.0, 0.75)
    assert summarize_value(None).kind == "undefined"
    assert summarize_value(3).text == "3"
    assert summarize_value([8, 16]).kind == "list"
    pair = summarize_value((np.ones(2), np.zeros(3)))
    assert pair.kind == "tuple" and [item.shape for item in pair.items] == [(2,), (3,)]

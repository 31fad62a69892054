"""What the header and the Run tab say when a graph draws random values: gradview's
draws (dropout masks, bernoulli, normal, rand...) come from its own seeded
generator (kernels/dropout.py), the same on every run of a step, never
PyTorch's numbers. Which graphs draw: :func:`gradview.runtime.graph_draws_random_values`."""

from __future__ import annotations

from gradview.runtime import PassTrace, graph_draws_random_values

__all__ = ["RANDOM_NOTE", "random_values_label"]

RANDOM_NOTE = "random values are gradview's own (seeded, the same every run), not PyTorch's"


def random_values_label(trace: PassTrace) -> str:
    """The header's word on random values: said when a graph of the trace draws them."""
    seen: set[object] = set()
    for step in trace:
        if step.which in seen:
            continue
        seen.add(step.which)  # a graph's random ops are in its first step already
        if graph_draws_random_values(step.graph):
            return " · random values: gradview's own, not PyTorch's"
    return ""

"""The result of symbolic differentiation: a forward graph, a backward graph,
and the bookkeeping that connects them.

A worked example. Differentiating

    graph(%x : Tensor, %y : Tensor):
      %z : Tensor = aten::mul(%x, %y)
      %w : Tensor = aten::tanh(%z)
      return (%w)

gives a forward graph ``f`` that computes the outputs and also returns what
the backward pass will need::

    graph(%x, %y):
      %z = aten::mul(%x, %y)
      %w = aten::tanh(%z)
      return (%w)                 # f_real_outputs = 1

and a backward graph ``df`` that maps output gradients to input gradients::

    graph(%dw, %x, %y, %w):       # vjps first, then captures
      %dz = aten::tanh_backward-ish arithmetic of (%dw, %w)
      %dx = aten::mul(%dz, %y)
      %dy = aten::mul(%dz, %x)
      return ((%dx, %dy))

The lists say how the two are wired at run time:

* ``f_real_outputs``: how many of f's outputs are the original outputs; the
  rest are temporaries captured for df.
* ``df_input_vjps``: which outputs of f have a gradient input in df, in
  df's order (real outputs that require grad, then captured temporaries that
  themselves receive gradient).
* ``df_input_captured_inputs``: indices of f's *inputs* that df takes as
  captured values (here %x and %y).
* ``df_input_captured_outputs``: indices of f's *outputs* that df takes
  (here %w, output 0).
* ``df_output_vjps``: which of f's inputs df returns a gradient for, in
  order (here inputs 0 and 1).

df's inputs are: one gradient per entry of ``df_input_vjps``, then the
captured inputs, then the captured outputs. df returns one tuple with a
gradient per entry of ``df_output_vjps``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gradview.ir import Graph

__all__ = ["Gradient"]


@dataclass
class Gradient:
    f: Graph
    df: Graph | None = None
    f_real_outputs: int = 0
    df_input_vjps: list[int] = field(default_factory=list)
    df_input_captured_inputs: list[int] = field(default_factory=list)
    df_input_captured_outputs: list[int] = field(default_factory=list)
    df_output_vjps: list[int] = field(default_factory=list)

    @property
    def captured_count(self) -> int:
        """How many values df takes from the forward pass besides gradients."""
        return len(self.df_input_captured_inputs) + len(self.df_input_captured_outputs)

    def __repr__(self) -> str:
        return (
            f"Gradient(f_real_outputs={self.f_real_outputs}, df_input_vjps={self.df_input_vjps}, "
            f"df_input_captured_inputs={self.df_input_captured_inputs}, "
            f"df_input_captured_outputs={self.df_input_captured_outputs}, "
            f"df_output_vjps={self.df_output_vjps})"
        )

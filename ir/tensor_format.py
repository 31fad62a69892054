"""Small tensor constants printed as TorchScript prints them (ATen's ``at::print``).

A graph prints a tensor constant of 2 to 10 elements with ``at::print`` and
its newlines turned into spaces::

    prim::Constant[value=-0.4271  0.2333 -0.2832 [ CPUFloatType{3} ]]()

``at::print`` picks one format for the whole tensor (or per matrix of a 3-d
or larger tensor): integers in C's ``%g`` when every value is whole,
otherwise four decimals (``%.4f``), with a common power-of-ten scale printed
first (``1e-05 *``, ``1000000 *``) when the values are very large or very small, or
scientific notation (``%.4e``) when they span more than four orders of
magnitude. Matrices wider than 80 characters are split into column blocks
(``Columns 1 to 6``); tensors of 3 or more dimensions print one matrix per
index of the leading dimensions, headed ``(i,j,.,.) =``, the first index
varying fastest. This module reproduces it byte for byte.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["format_printed_tensor", "type_string"]

_LINE_SIZE = 80


def type_string(scalar_type: str, device: str) -> str:
    """``CPUFloatType``: the tensor's ``toString()``."""
    return ("CPU" if device == "cpu" else "CUDA") + scalar_type + "Type"


def _print_format(values: Sequence[float]) -> tuple[float, int, str]:
    """(scale, width, C format) as ATen's ``__printFormat`` picks them."""
    int_mode = all(z == math.ceil(z) for z in values if math.isfinite(z))
    finite = [z for z in values if math.isfinite(z)]
    if not finite:
        exp_min = exp_max = 1.0
    else:
        exp_min = min(abs(z) for z in finite)
        exp_max = max(abs(z) for z in finite)
        exp_min = math.floor(math.log10(exp_min)) + 1 if exp_min != 0 else 1
        exp_max = math.floor(math.log10(exp_max)) + 1 if exp_max != 0 else 1
    if int_mode:
        if exp_max > 9:
            return 1.0, 11, "%.4e"
        return 1.0, int(exp_max) + 1, "%g"
    if exp_max - exp_min > 4:
        width = 12 if abs(exp_max) > 99 or abs(exp_min) > 99 else 11
        return 1.0, width, "%.4e"
    if exp_max > 5 or exp_max < 0:
        return 10.0 ** (exp_max - 1), 7, "%.4f"
    return 1.0, 7 if exp_max == 0 else int(exp_max) + 6, "%.4f"


def _cell(value: float, width: int, fmt: str) -> str:
    if math.isnan(value):
        text = "nan"
    elif math.isinf(value):
        text = "inf" if value > 0 else "-inf"
    else:
        text = fmt % value
    return text.rjust(width)


def _scale_line(scale: float) -> str:
    # fmt's "{}": the shortest text that reads back, without a trailing ".0".
    text = repr(scale)
    return (text[:-2] if text.endswith(".0") else text) + " *\n"


def _matrix(values: Sequence[float], rows: int, cols: int, indent: int, out: list[str]) -> None:
    """ATen's ``__printMatrix`` (row-major ``values``)."""
    scale, width, fmt = _print_format(values)
    pad = " " * indent
    per_line = (_LINE_SIZE - indent) // (width + 1)
    first = 0
    while first < cols:
        last = first + per_line - 1 if first + per_line <= cols else cols - 1
        if per_line < cols:
            if first != 0:
                out.append("\n")
            out.append(f"Columns {first + 1} to {last + 1}")
            out.append(pad)
        if scale != 1:
            out.append(_scale_line(scale))
            out.append(pad)
        for row in range(rows):
            for col in range(first, last + 1):
                out.append(_cell(values[row * cols + col] / scale, width, fmt))
                if col == last:
                    out.append("\n")
                    if row != rows - 1:
                        out.append(pad + (" " if scale != 1 else ""))
                else:
                    out.append(" ")
        first = last + 1


def format_printed_tensor(
    values: Sequence[float | int | bool], sizes: Sequence[int], scalar_type: str, device: str = "cpu"
) -> str:
    """``at::print`` of a tensor (row-major ``values``), newlines turned into spaces."""
    data = [float(v) for v in values]
    out: list[str] = []
    ndim = len(sizes)
    if data and ndim == 1:
        scale, width, fmt = _print_format(data)
        if scale != 1:
            out.append(_scale_line(scale))
        for v in data:
            out.append(_cell(v / scale, width, fmt) + "\n")
    elif data and ndim == 2:
        _matrix(data, sizes[0], sizes[1], 0, out)
    elif data and ndim > 2:
        rows, cols = sizes[-2], sizes[-1]
        lead = list(sizes[:-2])
        # Strides of the leading dimensions in the row-major data.
        steps = [rows * cols * math.prod(lead[k + 1:]) for k in range(len(lead))]
        counter = [0] * len(lead)
        counter[0] = -1
        start = True
        while True:
            k = 0
            finished = False
            while True:  # an odometer whose first digit turns fastest, as in ATen
                counter[k] += 1
                if counter[k] >= lead[k]:
                    if k == len(lead) - 1:
                        finished = True
                        break
                    counter[k] = 0
                    k += 1
                else:
                    break
            if finished:
                break
            if not start:
                out.append("\n")
            start = False
            out.append("(" + "".join(f"{c + 1}," for c in counter) + ".,.) = \n")
            offset = sum(c * s for c, s in zip(counter, steps, strict=True))
            _matrix(data[offset:offset + rows * cols], rows, cols, 1, out)
    dims = ",".join(str(d) for d in sizes)
    out.append(f"[ {type_string(scalar_type, device)}{{{dims}}} ]")
    return "".join(out).replace("\n", " ")

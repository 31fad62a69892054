"""Shape rules for 2-d pooling (the matrix products' rules are in gradview.ops.linalg,
the normalizations' in gradview.ops.normalization)."""

from __future__ import annotations

from gradview.ops.registry import shape_rule
from gradview.ops.shape_toolkit import NodeArgs, RuleResult, Sizes, fresh

__all__: list[str] = []


def _pooled_size(size: int | None, kernel: int, stride: int, pad: int, dilation: int,
                 ceil_mode: bool) -> int | None:
    if size is None:
        return None
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


@shape_rule("aten::max_pool2d", "aten::max_pool2d_with_indices", "aten::avg_pool2d")
def _max_pool2d(args: NodeArgs) -> RuleResult:
    x = args.tensor(0)
    if x is None:
        return None
    kind = args.node.kind()
    kernel, stride, padding = args.int_list(1), args.int_list(2), args.int_list(3)
    # avg_pool2d(self, kernel, stride, padding, ceil_mode, ...) has no dilation.
    dilation = [1] if kind == "aten::avg_pool2d" else args.int_list(4)
    ceil_mode = args.value(4 if kind == "aten::avg_pool2d" else 5, None)
    sizes: Sizes | None = None
    lists = (kernel, stride, padding, dilation)
    if x.sizes is not None and len(x.sizes) in (3, 4):
        sizes = x.sizes[:-2] + (None, None)
        if all(v is not None and None not in v for v in lists) and isinstance(ceil_mode, bool):
            k, s, p, d = ([v[0], v[-1]] for v in lists)  # type: ignore[index]
            if not stride:
                s = k
            sizes = x.sizes[:-2] + tuple(
                _pooled_size(x.sizes[-2 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(2)
            )
    out = fresh(x.scalar_type, sizes, x.device)
    if kind == "aten::max_pool2d_with_indices":
        return [out, fresh("Long", sizes, x.device)]
    return [out]

"""Functions for the Python frontend tests (a real file: the frontend reads source)."""
# ruff: noqa: SIM108 - the if/else statements are what these tests compile

from __future__ import annotations

import torch


def mlp(x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    h = torch.tanh(torch.matmul(x, w1) + b1)
    return torch.sigmoid(h @ w2)


def simple(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.relu(x * y - x / 2) + torch.exp(-y)


def branch(x: torch.Tensor, flag: bool) -> torch.Tensor:
    if flag:
        y = x * 2
    else:
        y = x - 1
    return y.tanh()


def elif_chain(x: torch.Tensor, k: int) -> torch.Tensor:
    if k < 0:
        return -x
    elif k == 0:
        return x * 0.5
    else:
        return x ** 2


def for_accumulate(x: torch.Tensor, n: int) -> torch.Tensor:
    acc = torch.zeros_like(x)
    for i in range(n):
        acc = acc + x * i
    return acc


def while_loop(x: torch.Tensor) -> tuple[torch.Tensor, int]:
    i = 0
    y = x
    while i < 4 and y.sum() < 1000.0:
        y = y * 2 + 1
        i += 1
    return y, i


def tuples(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, float]:
    a, b = x + y, x - y
    pair = (a, b)
    first, second = pair
    return second, first.t(), 1.5


def int_sizes(x: torch.Tensor) -> tuple[int, torch.Tensor]:
    n = x.size(0)
    m = x.size(1)
    total = n * m + (n // 2) - m % 3
    flat = x.view(-1)
    return total, flat.reshape(m, n)


def nested_if_in_loop(x: torch.Tensor, n: int) -> torch.Tensor:
    y = x
    for i in range(1, n):
        if i % 2 == 0 and not i > 5:
            y = y + i
        elif i == 3 or i == 7:
            y = y * 0.5
    return torch.cat([y, x], 0).mean(dim=0, keepdim=True)


def reductions(x: torch.Tensor) -> torch.Tensor:
    s = torch.sum(x) + torch.mean(x) + x.sum() + x.mean()
    return torch.log(torch.exp(x) + 1.0) * s


# --- errors ------------------------------------------------------------------------


def appended(x: torch.Tensor, n: int) -> torch.Tensor:
    parts: list[torch.Tensor] = []
    for i in range(n):
        parts.append(x * i)
    parts.append(x)
    return torch.cat(parts, 0)


def bad_syntax(x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return x


def bad_undefined(x: torch.Tensor) -> torch.Tensor:
    return x + undefined_thing  # noqa: F821


def bad_branch_types(x: torch.Tensor, flag: bool):
    if flag:
        y = x
    else:
        y = 1
    return y


def bad_one_branch(x: torch.Tensor, flag: bool):
    if flag:
        z = x
    return z


def _scaled(a: torch.Tensor, k: float = 3.0) -> torch.Tensor:
    return a * k


def _layer(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.tanh(_scaled(x.mm(w), 0.5))


def calls(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = _layer(x, w)
    return _scaled(h, k=2.0) + _layer(h, w) - _scaled(w)


def _ping(x: torch.Tensor) -> torch.Tensor:
    return _pong(x)


def _pong(x: torch.Tensor) -> torch.Tensor:
    return _ping(x)


def recursive(x: torch.Tensor) -> torch.Tensor:
    return _ping(x)


def for_break(x: torch.Tensor, n: int) -> torch.Tensor:
    for i in range(n):
        if i > 3:
            break
        x = x * 2
    return x


def for_continue(x: torch.Tensor, n: int) -> torch.Tensor:
    for i in range(1, n):
        if i % 2 == 0:
            continue
        x = x + i
    return x


def while_true_break(x: torch.Tensor) -> torch.Tensor:
    while True:
        x = x * 2
        if bool(x.sum() > 100):
            break
    return x


def nested_exits(x: torch.Tensor, n: int) -> torch.Tensor:
    total = 0
    for i in range(n):
        if i == 1:
            continue
        j = 0
        while j < n:
            j += 1
            if j > i:
                break
            elif j == 2:
                continue
            total += j
            x = x + j
        if total > 20:
            break
        x = x * 1.5
    return x * total

"""set_grad_enabled / no_grad / enable_grad as plain calls, context managers and
decorators, against torch's (the grad mode and requires_grad of results)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gradview.runtime import Tensor, autograd

LIBS = {"ours": autograd, "torch": torch}


def leaf(lib: str):
    values = np.array([1.0, 2.0, 3.0])
    return torch.tensor(values, requires_grad=True) if lib == "torch" else Tensor(
        values.copy(), requires_grad=True
    )


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    yield
    torch.set_grad_enabled(True)
    autograd.set_grad_enabled(True)


def trace(lib: str, script) -> list[bool]:
    """Run ``script(module, x, log)``; ``log(t)`` records is_grad_enabled and t's requires_grad."""
    module = LIBS[lib]
    seen: list[bool] = []

    def log(t=None) -> None:
        seen.append(module.is_grad_enabled())
        if t is not None:
            seen.append(t.requires_grad)

    script(module, leaf(lib), log)
    log()
    return seen


def same(script) -> list[bool]:
    ours, theirs = trace("ours", script), trace("torch", script)
    assert ours == theirs
    return ours


def test_set_grad_enabled_as_a_plain_call_switches_the_mode() -> None:
    def script(m, x, log):
        result = m.set_grad_enabled(False)
        log(x * 2)
        m.set_grad_enabled(True)
        log(x * 2)
        del result

    assert same(script) == [False, False, True, True, True]


def test_set_grad_enabled_plain_call_inside_a_block_is_undone_on_exit() -> None:
    def script(m, x, log):
        with m.no_grad():
            m.set_grad_enabled(True)
            log(x * 2)
        log(x * 2)
        with m.set_grad_enabled(False):
            log(x * 2)
        log(x * 2)

    assert same(script) == [True, True, True, True, False, False, True, True, True]


def test_set_grad_enabled_as_a_decorator_holds_only_during_calls() -> None:
    def script(m, x, log):
        @m.set_grad_enabled(False)
        def double(t):
            log(t * 2)
            return t * 2

        log()  # decorating left the mode as it was
        out = double(x)
        log(out)
        with m.no_grad():

            @m.set_grad_enabled(True)
            def triple(t):
                return t * 3

            log(triple(x))

    assert same(script) == [True, False, False, True, False, False, True, True]


@pytest.mark.parametrize("parens", [True, False])
def test_no_grad_and_enable_grad_decorate_with_or_without_parentheses(parens) -> None:
    def script(m, x, log):
        off = m.no_grad() if parens else m.no_grad
        on = m.enable_grad() if parens else m.enable_grad

        @off
        def double(t):
            return t * 2

        @on
        def triple(t):
            return t * 3

        log(double(x))
        with m.no_grad():
            log(triple(x))
            log(x * 3)

    assert same(script) == [True, False, False, True, False, False, True]


def test_decorated_generator_sees_the_mode_only_while_it_runs() -> None:
    def script(m, x, log):
        @m.no_grad()
        def gen(t):
            for _ in range(2):
                yield t * 2

        for y in gen(x):
            log(y)
        outer = gen(x)
        first = next(outer)
        log(first)
        log(x * 2)

    assert same(script) == [True, False, True, False, True, False, True, True, True]


@pytest.mark.parametrize("mode", [1, None, "no"])
def test_set_grad_enabled_takes_only_bools(mode) -> None:
    messages = []
    for module in (autograd, torch):
        with pytest.raises(TypeError) as error:
            module.set_grad_enabled(mode)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert autograd.is_grad_enabled()


def test_decorating_a_class_warns_like_torch_and_still_runs_it() -> None:
    cls = type("C", (), {})
    made = []
    for module in (autograd, torch):
        with pytest.warns(FutureWarning, match="^Decorating classes is deprecated") as record:
            made.append(module.enable_grad()(cls)())
        assert record[0].filename == __file__
    assert all(type(m) is cls for m in made)

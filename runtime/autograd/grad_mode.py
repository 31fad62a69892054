"""Whether eager tensor operations record autograd graphs (``no_grad`` and friends).

The three switches behave as PyTorch's: each is a context manager and a
decorator; ``no_grad`` and ``enable_grad`` decorate with or without
parentheses; ``set_grad_enabled(mode)`` also works as a plain call, switching
the mode at once (``set_grad_enabled(False)`` on its own line turns recording
off until it is turned on again). The mode is per thread.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["enable_grad", "is_grad_enabled", "no_grad", "set_grad_enabled"]

F = TypeVar("F", bound=Callable[..., Any])

class _GradMode(threading.local):
    # The class attribute is every thread's starting mode: reading it needs no
    # getattr default (which costs a caught AttributeError in a fresh thread,
    # 0.6 us, and autograd asks many times per step).
    enabled = True


_state = _GradMode()


def is_grad_enabled() -> bool:
    """True when eager operations on tensors that require grad record a backward graph."""
    return _state.enabled


def _set(mode: bool) -> None:
    if not isinstance(mode, bool):
        raise TypeError(
            "set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    _state.enabled = mode


def _decorate(factory: Callable[[], Any], func: F) -> F:
    """Run ``func`` (a function or a generator function) inside a fresh ``factory()`` context."""
    if inspect.isclass(func):
        warnings.warn(
            "Decorating classes is deprecated and will be disabled in future versions. You "
            "should only decorate functions or methods. To preserve the current behavior of "
            "class decoration, you can directly decorate the `__init__` method and nothing else.",
            FutureWarning,
            stacklevel=3,
        )
        cls = func
        func = lambda *args, **kwargs: cls(*args, **kwargs)  # type: ignore[assignment]  # noqa: E731
    if inspect.isgeneratorfunction(func):

        @functools.wraps(func)
        def generator(*args: Any, **kwargs: Any) -> Any:
            # The mode holds only while the generator's own code runs, not between yields.
            gen = func(*args, **kwargs)
            try:
                with factory():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with factory():
                            gen.close()
                        raise
                    except BaseException as error:  # thrown in: pass it on under the mode
                        with factory():
                            response = gen.throw(error)
                    else:
                        with factory():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator  # type: ignore[return-value]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with factory():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class _NoParamSwitch:
    """A switch to a fixed mode: ``with s():``, ``@s()`` and ``@s``."""

    mode: bool

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)  # ``@no_grad`` without parentheses

    def __init__(self, orig_func: Any = None) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = is_grad_enabled()
        _state.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self.prev

    def __call__(self, func: F) -> F:
        return _decorate(type(self), func)


class no_grad(_NoParamSwitch):  # PyTorch's name
    """``with no_grad():`` (or ``@no_grad``) runs eager operations without recording a graph."""

    mode = False


class enable_grad(_NoParamSwitch):  # PyTorch's name
    """``with enable_grad():`` (or ``@enable_grad``) records graphs again inside ``no_grad``."""

    mode = True


class set_grad_enabled:  # PyTorch's name
    """Turn graph recording on (``True``) or off (``False``).

    As a plain call the mode changes at once and stays; as ``with
    set_grad_enabled(mode):`` it is restored on leaving the block; as a
    decorator the mode holds during each call only (the construction's own
    switch is undone first, as PyTorch does).
    """

    def __init__(self, mode: bool) -> None:
        self.prev = is_grad_enabled()
        self.mode = mode
        _set(mode)

    def __call__(self, func: F) -> F:
        _state.enabled = self.prev
        return _decorate(self.clone, func)

    def __enter__(self) -> None:
        _state.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self.prev

    def clone(self) -> set_grad_enabled:
        return type(self)(self.mode)

    def __repr__(self) -> str:
        return f"gradview.runtime.autograd.grad_mode.set_grad_enabled(mode={self.mode})"

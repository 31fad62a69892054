"""The shared command-line options name the library's own values."""

from __future__ import annotations

from gradview.autodiff import DEFAULT_AUTODIFF_MODE, DEFAULT_INLINE_THRESHOLD, AutodiffMode
from gradview.cli.options import AUTODIFF_CHOICES, PYTORCH_INLINE_THRESHOLD


def test_autodiff_choices_are_the_modes_with_the_default_first() -> None:
    assert set(AUTODIFF_CHOICES) == {mode.value for mode in AutodiffMode}
    assert AUTODIFF_CHOICES[0] == DEFAULT_AUTODIFF_MODE.value


def test_the_inline_threshold_default_is_pytorchs() -> None:
    assert PYTORCH_INLINE_THRESHOLD == DEFAULT_INLINE_THRESHOLD == 5


def test_detail_choices_are_the_viewers_levels() -> None:
    from gradview.cli.options import DETAIL_CHOICES
    from gradview.viewer.detail import Detail

    assert tuple(level.value for level in Detail) == DETAIL_CHOICES

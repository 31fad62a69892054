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


def test_the_pass_option_offers_the_pipeline_tables_names() -> None:
    import argparse

    from gradview.cli import trace
    from gradview.runtime import PIPELINE_TABLE, pipeline_step_names

    commands = argparse.ArgumentParser().add_subparsers()
    trace.register(commands)
    command = commands.choices["trace"]
    option = next(a for a in command._actions if a.dest == "pass_name")
    assert option.type.names == pipeline_step_names()  # type: ignore[union-attr]
    assert set(option.type.names) == {info.name for info in PIPELINE_TABLE}  # type: ignore[union-attr]
    # Any spelling of a table name is the table's name; a log's own names pass through.
    assert command.parse_args(["f.ir", "--pass", "lower-simple-tuples"]).pass_name == "LowerSimpleTuples"
    assert command.parse_args(["f.ir", "--pass", "inductor_post_grad_graph"]).pass_name == "inductor_post_grad_graph"

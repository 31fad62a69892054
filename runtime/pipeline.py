"""The pipeline table: every step a trace can name, one record each.

The records live beside the code that runs them (the generic passes and
pipelines in ``gradview.ir.passes``, ``differentiate``'s steps and the
autodiff passes in ``gradview.autodiff``, the executor's own steps in
``executor``, PyTorch's executor phases in ``torch_executor_phases``); this
module puts them in one table. The executor runs them, the viewer shows their
docs and the CLI's ``--pass`` offers their names. A name two records share
(``EliminateDeadCode``: a graph pass, and a step of differentiate on the
reverse block) is one record per phase.
"""

from __future__ import annotations

from gradview.autodiff.executor_steps import AUTODIFF_STEPS, CREATE_AUTODIFF_SUBGRAPHS
from gradview.ir.passes.pipelines import PIPELINES
from gradview.ir.passes.registry import PASSES, PassInfo, Phase

from .executor import EXECUTOR_STEPS
from .pass_trace import normalize_pass_name
from .torch_executor_phases import ALIASES, TORCH_EXECUTOR_PHASES

__all__ = [
    "PIPELINE_TABLE", "INPUT_STEP", "STEP_ALIASES", "PassInfo", "Phase", "pipeline_step_names", "steps_named",
    "CREATE_AUTODIFF_SUBGRAPHS",
]

# Not a function: what a loader records first.
INPUT_STEP = PassInfo("Input", None, Phase.LOADER, text="""The graph as it was loaded, before any pass ran.

Every later step shows the same graph after one more pass (or one more step
of differentiate), so stepping forward from here replays the whole
compilation. Nodes keep their ids while they live, which is how the viewer
knows what each step added, removed or rewired.""")

# In the order the docs list a shared name's texts: the graph pass first.
PIPELINE_TABLE: tuple[PassInfo, ...] = (
    INPUT_STEP, *PASSES.values(), *EXECUTOR_STEPS, *AUTODIFF_STEPS, *PIPELINES, *TORCH_EXECUTOR_PHASES,
)
# A JIT log's name for a step -> the name of its record.
STEP_ALIASES: dict[str, str] = dict(ALIASES)

_BY_NAME: dict[str, tuple[PassInfo, ...]] = {}
for _info in PIPELINE_TABLE:
    _key = normalize_pass_name(_info.name)
    _BY_NAME[_key] = (*_BY_NAME.get(_key, ()), _info)


def steps_named(name: str) -> tuple[PassInfo, ...]:
    """The records of the step called ``name`` (any spelling, a JIT log's too): one per phase, () if unknown."""
    return _BY_NAME.get(normalize_pass_name(STEP_ALIASES.get(name, name)), ())


def pipeline_step_names() -> tuple[str, ...]:
    """Every step name in the table, once each, in the table's order."""
    return tuple(dict.fromkeys(info.name for info in PIPELINE_TABLE))

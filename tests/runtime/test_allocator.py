"""gradview.runtime.allocator: freed memory kept for reuse once the runtime loads.

The setting is process-wide, so the checks that need a fresh process run one:
a loop that allocates and frees 128 KiB arrays (a 64x256 float64 activation)
takes page faults every step under glibc's defaults and none once
gradview.runtime is imported; GRADVIEW_KEEP_FREED_MEMORY=0 leaves glibc alone.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gradview.runtime import allocator

GLIBC = (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc") if hasattr(os, "confstr") else False

# Page faults per step of a loop that allocates 128 float64 arrays of 64x256 (16 MiB,
# the activations of a mid-sized model) and frees them: enough that glibc's own
# adaptive thresholds (raised by whatever the imports freed) do not hide the default.
FAULTS_PER_STEP = """
import resource, sys
import numpy as np
if sys.argv[1] == "import":
    import gradview.runtime  # noqa: F401
x = np.ones((64, 256))
def step():
    arrays = [x * float(i) for i in range(128)]
    return sum(float(a[0, 0]) for a in arrays)
for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
"""


def _faults_per_step(mode: str, **env: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", FAULTS_PER_STEP, mode],
        capture_output=True, text=True, check=True,
        env={k: v for k, v in os.environ.items() if k != allocator.ENVIRONMENT_VARIABLE} | env,
    )
    return float(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's (a no-op on other C libraries)")
def test_importing_the_runtime_stops_page_faults_of_a_training_loop() -> None:
    # glibc's default: most of the 4,096 pages are given back and faulted in again each step.
    assert _faults_per_step("plain") > 1000
    assert _faults_per_step("import", GRADVIEW_KEEP_FREED_MEMORY="0") > 1000
    assert _faults_per_step("import") < 10


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's (a no-op on other C libraries)")
def test_the_setting_applies_on_glibc_and_says_so() -> None:
    assert allocator.keep_freed_memory({}) is True
    assert allocator.allocator_setting().startswith("freed memory kept for reuse (M_MMAP_THRESHOLD=32 MiB")


@pytest.mark.parametrize("value", ["0", "off", "false"])
def test_the_environment_variable_switches_it_off(value: str) -> None:
    assert allocator.keep_freed_memory({"GRADVIEW_KEEP_FREED_MEMORY": value}) is False
    assert allocator.allocator_setting() == f"left as it is (GRADVIEW_KEEP_FREED_MEMORY={value})"


@pytest.mark.parametrize(
    "env", [{"MALLOC_TRIM_THRESHOLD_": "1000"}, {"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=4096"}]
)
def test_the_users_own_malloc_tuning_is_left_alone(env: dict[str, str]) -> None:
    assert allocator.keep_freed_memory(env) is False
    assert "already tuned" in allocator.allocator_setting()

"""ui_priority: background threads step aside while the UI thread's claim lasts."""

from __future__ import annotations

import threading

from gradview.viewer import ui_priority


def test_a_background_thread_waits_for_the_claim_and_the_claimer_never_does() -> None:
    ui_priority.claim(60.0)
    ui_priority.step_aside()  # the claiming thread itself returns at once (else this test hangs)
    done = threading.Event()

    def background() -> None:
        ui_priority.step_aside()
        done.set()

    thread = threading.Thread(target=background, daemon=True)
    thread.start()
    assert not done.wait(0.3), "a background thread waits while the claim lasts"
    ui_priority.claim(0.0)  # the claim is over
    assert done.wait(10), "and goes on once it has passed"
    thread.join(10)

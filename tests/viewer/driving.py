"""One way for the Pilot tests to drive the app: open it at a size, wait for
its layouts, run a script as a user would."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from textual.pilot import Pilot

from gradview.viewer.app import GradviewApp
from gradview.viewer.session import Session

Script = Callable[[GradviewApp, Pilot], Awaitable[None]]


def drive(session: Session, script: Script, size: tuple[int, int], **options: Any) -> GradviewApp:
    """Run ``script`` in the app on ``session`` (with GradviewApp's keyword
    ``options``, a ``detail`` level say) at terminal ``size``, once every wanted
    layout is in; the app, closed, for checks after."""
    app = GradviewApp(session, **options)

    async def run() -> None:
        async with app.run_test(size=size) as pilot:
            await app.wait_for_layouts()
            await pilot.pause()
            await script(app, pilot)

    asyncio.run(run())
    return app

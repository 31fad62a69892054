"""gradview's viewer: a Textual app that steps through a pass trace, and its exports.

The app (:mod:`.app`) holds what is on screen (:class:`.screen_state.OnScreen`)
and turns keys into changes of it; widgets, workers and the command palette
speak to it in messages (:mod:`.messages`); the parts that own state of their
own get their dependencies when they are made (:class:`.large_graph.LargeGraph`,
:class:`.saved_tools.SavedTools`, :class:`.task_tools.LongTasks`). Runs and
checks are the runtime's (:mod:`gradview.runtime.checks`); the viewer draws
what they return.

Where each kind of change goes:

=====================  ======================================================================
a new view             a record in :mod:`.view_registry` (name, key, footer word, view bar
                       title, which halves of a DifferentiableGraph it draws), plus its
                       drawing in :func:`.views.draw_step` if it is not the whole graph,
                       f, df or both; the help text in :mod:`.keys` (and the README)
a new key              a ``Binding`` on the app (:mod:`.app`), the main screen
                       (:mod:`.main_screen`, panels) or the canvas (:mod:`.canvas`), its
                       action on the part that owns the state it changes; its row in
                       :mod:`.keys` and the README's key table (``tests/viewer/test_keys.py``)
a new panel or tab     its widget module, composed in :mod:`.main_screen` (a tab: in
                       :mod:`.detail_panel`); it posts messages (:mod:`.messages`) and the
                       app or the screen answers them
a new export format    a function over drawings and marks (or a trace and a view) in
                       :mod:`.export` (or its own ``export_*`` module), a thread worker in
                       :mod:`.tasks` and a key for the app, ``gradview export``'s option in
                       :mod:`gradview.cli.export`
a new check            a typed function over ``PassTrace`` returning a frozen result in
                       :mod:`gradview.runtime.checks` (no Textual); :mod:`.tasks` calls it in
                       a worker, the Check tab draws the result, a key starts it (a long
                       one through :class:`.task_tools.LongTasks`, escape cancels)
=====================  ======================================================================
"""

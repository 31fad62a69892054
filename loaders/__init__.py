"""gradview.loaders: read what PyTorch prints and what the user names, into pass traces.

TorchScript text and PYTORCH_JIT_LOG_LEVEL dumps (:mod:`.jit_log`), TORCH_TRACE logs
of torch.compile (:mod:`.torch_trace_log`, their FX graphs :mod:`.fx_graph_text`,
:mod:`.fx_tensor_types` and :mod:`.fx_to_ir`, the names and modules they record
:mod:`.compiled_names` and :mod:`.compiled_modules`, all of it as one trace
:mod:`.compiled_trace`; ``--compile`` makes such a log: :mod:`.compile_model`),
and the one loader of a target, graph, Python function, ``model.py`` builder,
saved trace or log (:mod:`.targets`).

A layer above the runtime (they build :class:`~gradview.runtime.pass_trace.PassTrace`
and run graphs through the GraphExecutor) and below the viewer and the CLI; the
runtime imports nothing from here (``tests/test_layering.py``). The package
imports nothing itself, so ``gradview --help`` stays light.
"""

"""Running the benchmark and reporting it.

* ``runner``: many games concurrently, logged turn by turn, resumable;
* ``settings``: the validated run settings (``config.json``);
* ``llm``: the litellm model client (retries, usage, cost, record/replay);
* ``cache``, ``jsonl``, ``redact``: the record/replay cache, crash-safe
  JSON Lines, and keeping secrets out of files;
* ``provider``: the offline ``scripted/`` litellm provider;
* ``logs``, ``table``, ``taxonomy``, ``report``, ``plots``: logs in, the
  paper's Table 1, the failure taxonomy and PNG plots out.

Nothing here imports litellm or matplotlib until a model is called or a
plot is drawn.
"""

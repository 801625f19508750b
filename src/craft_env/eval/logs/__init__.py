"""What runs leave behind, read and written: our run directories (``games``), crash-safe JSON Lines (``jsonl``),
per-run results (``results``) and the paper's result logs (``paperlogs``).

May import ``craft_env.core``, ``datasets``, ``text``, ``envs`` and ``models``.
"""

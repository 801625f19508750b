"""What runs leave behind, read and written: our run directories (``games``), the paper's result logs
(``paperlogs``), and the output paths a command checks before it writes (``outputs``).

May import ``craft_env.core``, ``datasets``, ``text``, ``envs`` and ``models``.
"""

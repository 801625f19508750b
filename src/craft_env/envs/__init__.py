"""PettingZoo environments (AEC and Parallel) and the batched vector env: thin shells over ``craft_env.core``."""

"""The rules of CRAFT on numpy arrays, numba-jitted: nothing else.

No PettingZoo, Gymnasium or litellm here. Modules:

* ``encoding``: block codes, cell values, the action table;
* ``rules``: legal masks, applying a move, the reason a move is illegal;
* ``board``: ``Structure``, an immutable board, and the paper's JSON;
* ``moves``: ``Move``, one builder move, and its action id;
* ``generator``: seeded targets, the same on every platform;
* ``views``: seats and the directors' wall views;
* ``oracle``: keep levels, distance, optimal moves, plan (public as ``craft_env.oracle``);
* ``metrics``: the paper's metrics and our strict one (public as ``craft_env.metrics``);
* ``starts``: partial starting boards cut from a target;
* ``intents``: the directors' discrete vocabulary and its mask;
* ``scripted``: the scripted director's choice (the offline team);
* ``random``: episode randomness that numba and Python draw alike;
* ``protocol``: the ``craft`` and ``paper`` turn protocols, one switch per difference;
* ``observation``: the flat numeric observations of every env;
* ``game``: the one game kernel: reset, turn, director and builder steps for one episode row;
* ``records``: the game's records packed for calls from Python (one numba structref each);
* ``batch``: the vector env's drivers, looping the game kernel over a batch of episodes;
* ``caches``: numba's caches of these kernels, dropped when a source is newer (run on import);
* ``jit``: saying when a kernel is about to compile, calling a compiled entry without numba's typing, and
  loading cached kernels without numba's registry (the command line's start-up).
"""

from craft_env.core.caches import drop_stale_caches

drop_stale_caches()

from craft_env.core.board import IllegalMoveError, Structure  # noqa: E402 - after the cache check
from craft_env.core.moves import Move  # noqa: E402

__all__ = ["IllegalMoveError", "Move", "Structure"]

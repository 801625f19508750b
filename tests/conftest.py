"""Shared test setup: a deterministic Hypothesis profile and board strategies.

Profiles (choose with ``HYPOTHESIS_PROFILE``):

* ``ci`` (default): derandomized, modest example counts, no deadline, so
  every run explores the same examples and the suite stays fast;
* ``dev``: random and ten times the examples, for hunting bugs locally.

Stale numba caches need nothing here: importing ``craft_env.core`` drops
them before any kernel runs (``craft_env.core.caches``).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))

from reference_model import RefBoard, random_walk  # noqa: E402

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=60,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    deadline=None,
    max_examples=600,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

PAPER_FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "craft_paper_structures_20.json"


@pytest.fixture
def paper_fixture_path() -> Path:
    """The paper's 20 evaluation structures (``../shared/fixtures``); skips when absent."""
    if not PAPER_FIXTURE.is_file():
        pytest.skip(f"paper fixture not found at {PAPER_FIXTURE}")
    return PAPER_FIXTURE


def draw_ints(rnd: random.Random):
    """An endless stream of integers from a Hypothesis-controlled ``Random``."""
    while True:
        yield rnd.randrange(1 << 30)


sizes = st.tuples(st.integers(2, 6), st.integers(1, 5))


@st.composite
def reachable_boards(draw, n: int, height: int, max_steps: int | None = None) -> RefBoard:
    """A model board reached from empty by random legal moves (some runs removal-heavy)."""
    cap = max_steps if max_steps is not None else n * n * height + 4
    steps = draw(st.integers(0, cap))
    rnd = draw(st.randoms(use_true_random=False))
    return random_walk(RefBoard.empty(n, height), draw_ints(rnd), steps, remove_bias=draw(st.booleans()))


@st.composite
def board_pairs(draw, n_range=(2, 6), height_range=(1, 5)) -> tuple[RefBoard, RefBoard]:
    """``(current, target)`` model boards of one size, in the shapes the oracle meets.

    The target is a reachable board or a generated structure; the current
    board is independent of it, the target disturbed by a few random moves
    (shared bottoms, covered dominoes), or a random board.
    """
    from craft_env import generate_structure

    n = draw(st.integers(*n_range))
    height = draw(st.integers(*height_range))
    if draw(st.booleans()):
        target = draw(reachable_boards(n, height))
    else:
        target = RefBoard.from_structure(generate_structure(draw(st.integers(0, 2**32)), n, height))
    rnd = draw(st.randoms(use_true_random=False))
    mode = draw(st.sampled_from(["disturbed", "independent", "disturbed", "empty", "disturbed", "equal"]))
    if mode == "independent":
        current = draw(reachable_boards(n, height))
    elif mode == "disturbed":
        steps = draw(st.integers(1, 2 * n * height))
        current = random_walk(target, draw_ints(rnd), steps, remove_bias=draw(st.booleans()))
    elif mode == "empty":
        current = RefBoard.empty(n, height)
    else:
        current = target
    return current, target


def random_pair(seed: int, n: int | None = None, height: int | None = None) -> tuple[RefBoard, RefBoard]:
    """A seeded mid-game ``(current, target)`` pair, without Hypothesis's pull towards tiny cases.

    The target is a generated structure or a random reachable board; the
    current board is a random partial build, the target disturbed, or an
    unrelated random board.
    """
    from craft_env import generate_structure

    rnd = random.Random(seed)
    n = n or rnd.randint(2, 6)
    height = height or rnd.randint(1, 5)
    cap = n * n * height
    if rnd.random() < 0.5:
        target = RefBoard.from_structure(generate_structure(rnd.randrange(1 << 32), n, height))
    else:
        target = random_walk(RefBoard.empty(n, height), draw_ints(rnd), rnd.randint(0, cap))
    kind = rnd.randrange(3)
    if kind == 0:
        current = random_walk(target, draw_ints(rnd), rnd.randint(1, cap), remove_bias=True)
    elif kind == 1:
        current = random_walk(RefBoard.empty(n, height), draw_ints(rnd), rnd.randint(0, cap))
    else:
        current = random_walk(target, draw_ints(rnd), rnd.randint(1, 6), remove_bias=rnd.random() < 0.7)
    return current, target

"""The seeded generator (docs/rules.md#structures), structure files and the bundled evaluation set."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections import Counter

import random

import numpy as np
import pytest
from reference_model import RefBoard
from reference_model import generate as ref_generate

from craft_env import Structure, generate_structure, load_eval_set, load_structures, oracle, save_structures
from craft_env.core.board import complexity_tier, validate_array
from craft_env.datasets import EVAL_TIER_COUNTS, build_eval_set, dumps_structures, eval_set_path

WALL = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)]
HIDDEN = [(1, 1), (2, 1)]
SEEDS = range(10_000)


def buildable(structure: Structure) -> None:
    empty = Structure.empty(structure.n, structure.height)
    steps = oracle.plan(empty, structure)
    assert len(steps) == structure.num_blocks == oracle.distance(empty, structure)
    assert oracle.distance(structure, empty) == structure.num_blocks


@pytest.fixture(scope="module")
def default_structures() -> list[Structure]:
    return [generate_structure(seed) for seed in SEEDS]


def test_ten_thousand_seeds_are_valid_and_buildable(default_structures):
    for structure in default_structures:
        validate_array(structure.array, 3)
        assert not structure.array.flags.writeable
        buildable(structure)


def test_paper_distribution_facts(default_structures):
    heights = np.stack([s.heights() for s in default_structures])
    for cell in WALL:
        assert (heights[:, cell[0], cell[1]] == 3).all(), cell
    for cell in HIDDEN:
        counts = Counter(heights[:, cell[0], cell[1]].tolist())
        assert set(counts) == {0, 1, 2}, cell
        assert all(3000 < counts[h] < 3670 for h in range(3)), (cell, counts)  # uniform, +-7 sigma
    entries = [s.num_entries for s in default_structures]
    assert min(entries) == 21 and max(entries) == 25
    for structure in default_structures:
        e = structure.num_entries
        tier = "simple" if e <= 22 else "medium" if e <= 24 else "complex"
        assert structure.complexity == structure.tier == tier
    colours = Counter(code[0] for s in default_structures for stack in s.stacks().values() for code in stack)
    total = sum(colours.values())
    assert set(colours) == set("gbryo")
    assert all(abs(count / total - 0.2) < 0.01 for count in colours.values()), colours
    sizes = Counter(code[1] for s in default_structures for stack in s.stacks().values() for code in stack)
    assert 0.3 < sizes["l"] / total < 0.8, sizes


def features(board: RefBoard) -> dict[str, int]:
    """The quantities the tiling recipe decides, for one structure."""
    blocks = board.blocks()
    dominoes = [cells for _, cells, _ in blocks if len(cells) == 2]
    return {
        "entries": board.num_entries(),
        "large": len(dominoes),
        "vertical": sum(1 for cells in dominoes if len({c[1] for c in cells}) == 1),
        "green": sum(1 for _, _, code in blocks if code[0] == "g"),
    }


@pytest.mark.parametrize("n, height, count", [(3, 3, 4000), (5, 4, 1500), (2, 2, 3000)])
def test_generator_matches_the_reference_recipe_in_distribution(n, height, count):
    """The seeded kernel and the model's plain-Python recipe agree on means (two-sample z < 6)."""
    engine = [features(RefBoard.from_structure(generate_structure(seed, n, height))) for seed in range(count)]
    rng = random.Random(1)
    model = [features(ref_generate(rng, n, height)) for _ in range(count)]
    for key in engine[0]:
        a = np.array([f[key] for f in engine], float)
        b = np.array([f[key] for f in model], float)
        spread = np.sqrt(a.var() / count + b.var() / count)
        assert abs(a.mean() - b.mean()) < 6 * spread + 1e-9, (key, a.mean(), b.mean(), spread)


def test_complexity_tier_thresholds():
    assert [complexity_tier(e) for e in range(21, 26)] == ["simple", "simple", "medium", "medium", "complex"]


def test_same_seed_same_structure():
    assert generate_structure(42) == generate_structure(42)
    assert generate_structure(42).array.tobytes() == generate_structure(42).array.tobytes()
    assert len({generate_structure(seed) for seed in range(200)}) == 200
    assert generate_structure(2**64 - 1).num_entries >= 21
    labelled = generate_structure(5, id="x")
    assert labelled.id == "x" and labelled == generate_structure(5)


def test_bad_seed_is_rejected():
    for bad in (-1, 1.5, True, "7", None):
        with pytest.raises(ValueError, match="seed"):
            generate_structure(bad)
    with pytest.raises(ValueError, match="height"):
        generate_structure(0, 3, 0)
    with pytest.raises(ValueError, match="n"):
        generate_structure(0, 7, 3)


def test_identical_bytes_in_a_separate_process(tmp_path):
    path = tmp_path / "generated.json"
    code = textwrap.dedent(
        f"""
        from craft_env import generate_structure, save_structures
        structures = [generate_structure(seed, id=f"s{{seed}}") for seed in range(300)]
        structures += [
            generate_structure(seed, n, h) for seed in range(20) for n in (2, 4, 6) for h in (1, 3, 5)
        ]
        save_structures(structures, {str(path)!r})
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
    here = [generate_structure(seed, id=f"s{seed}") for seed in range(300)]
    here += [generate_structure(seed, n, h) for seed in range(20) for n in (2, 4, 6) for h in (1, 3, 5)]
    assert path.read_bytes() == dumps_structures(here).encode("utf-8")
    assert load_structures(path) == here


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("height", range(1, 6))
def test_other_sizes_are_valid_and_buildable(n, height):
    for seed in range(120):
        structure = generate_structure(seed, n, height)
        assert (structure.n, structure.height) == (n, height)
        validate_array(structure.array, n)
        heights = structure.heights()
        for i in range(n):
            for j in range(n):
                on_wall = i == 0 or j == 0 or j == n - 1
                assert heights[i, j] == height if on_wall else heights[i, j] < height
        assert structure.complexity == complexity_tier(structure.num_entries, n, height)
        buildable(structure)


# ------------------------------------------------------------------ files


def test_save_and_load_round_trip(tmp_path):
    structures = [generate_structure(seed, id=f"structure_{seed:03d}") for seed in range(10)]
    structures.append(generate_structure(3, 5, 2))
    path = tmp_path / "set.json"
    save_structures(structures, path)
    loaded = load_structures(path)
    assert loaded == structures
    assert [s.id for s in loaded] == [s.id for s in structures]
    assert [s.complexity for s in loaded] == [s.complexity for s in structures]
    assert [(s.n, s.height) for s in loaded] == [(s.n, s.height) for s in structures]
    single = tmp_path / "one.json"
    single.write_text(json.dumps(structures[0].to_dict()), encoding="utf-8")
    assert load_structures(single) == structures[:1]


def test_load_names_the_bad_entry(tmp_path):
    entries = [generate_structure(0).to_dict(views=False), {"structure": {"(0,0)": ["zz"]}}]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    with pytest.raises(ValueError, match=r"entry 1.*'zz'"):
        load_structures(path)


def test_bundled_eval_set():
    bundled = load_eval_set()
    assert len(bundled) == 20
    assert Counter(s.complexity for s in bundled) == Counter(EVAL_TIER_COUNTS)
    assert EVAL_TIER_COUNTS == {"simple": 7, "medium": 8, "complex": 5}
    assert [s.id for s in bundled] == [f"eval_{k:03d}" for k in range(1, 21)]
    for structure in bundled:
        assert structure.complexity == structure.tier
        buildable(structure)
    rebuilt = build_eval_set()
    assert rebuilt == bundled
    assert eval_set_path().read_bytes() == dumps_structures(rebuilt).encode("utf-8")

"""The text path gives the same bytes after its speed-ups (issue 33): logs, exported records, text-env chats.

``tests/data/speed_reference.json`` holds digests written before the
optimisation (``tests/speed_reference.py``); the run, the export and the
text environment's games are played again here and must match them all.
"""

from __future__ import annotations

import json

import pytest

import speed_reference


@pytest.fixture(scope="module")
def reference() -> dict[str, str]:
    return json.loads(speed_reference.REFERENCE.read_text(encoding="utf-8"))


def test_offline_run_and_export_are_byte_identical(reference):
    got = speed_reference.run_digests()
    assert {name: value for name, value in got.items()} == {name: reference[name] for name in got}


def test_text_env_chats_rewards_and_verdicts_are_identical(reference):
    got = speed_reference.text_env_digests()
    assert got == {name: reference[name] for name in got}

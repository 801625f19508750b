"""``text_env(num_envs=B, workers=K)``: the games in K processes give what one process gives, and a
worker that dies is an error naming its games, never a hang (``craft_env.train.workers``)."""

from __future__ import annotations

import os
import signal
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import craft_env
from craft_env.train import workers as workers_module
from craft_env.train.workers import (
    WorkerError,
    _pack,
    _unpack,
    current_core,
    sending_order,
    worker_cores,
)
from speed_reference import builder_reply, digest


def play(env, seed: int) -> str:
    """Digest of every reset and step of the env's games, the builder replying as the reference does."""
    observations, infos = env.reset(seed=seed)
    steps, turn = [[observations, infos]], 0
    while any(o is not None for o in observations):
        result = env.step([None if o is None else builder_reply(o, turn) for o in observations])
        steps.append(list(result))
        observations, turn = result[0], turn + 1
    return digest(steps)


def test_workers_play_what_one_process_plays_and_a_dead_worker_names_its_games():
    options = {"num_envs": 3, "max_turns": 3}
    with craft_env.text_env(**options) as env:
        expected = play(env, 11)
    env = craft_env.text_env(workers=2, **options)
    processes = [worker.process for worker in env._workers]
    try:
        assert play(env, 11) == expected
        assert env.done == [True, True, True]
        assert len(env.cpu_seconds) == 2 and all(seconds > 0 for seconds in env.cpu_seconds)
        env.reset(seed=40)
        os.kill(env._workers[1].process.pid, signal.SIGKILL)  # worker 1 holds the games of seeds 42
        died = r"worker 1 .* died \(signal 9\) while playing structure_\d+ \(seed 42\)"
        with pytest.raises(WorkerError, match=died):
            env.step(["MOVE: pass"] * 3)
        with pytest.raises(ValueError, match="a worker of this environment failed"):
            env.step(["MOVE: pass"] * 3)
    finally:
        env.close()
    env.close()
    assert len(processes) == 2 and all(process.exitcode is not None for process in processes)


def test_without_turn_records_the_games_give_the_same_steps_less_the_records():
    """``turn_records=False`` (what a rollout loop that reads no run-log records sets, so the workers send
    and the caller unpacks much less per step): every chat, reward, flag and verdict of the default's,
    without ``info["turns"]``, in one process and in workers; a non-bool is refused by name."""

    def steps_of(env, drop_records):
        observations, infos = env.reset(seed=5)
        steps, turn, records = [], 0, []
        while True:
            records.extend("turns" in info for info in infos)
            kept = [{k: v for k, v in info.items() if not (drop_records and k == "turns")} for info in infos]
            steps.append((observations, kept))
            if all(o is None for o in observations):
                assert any(records) == drop_records  # the default's steps hold records; none without
                return steps
            observations, rewards, terminated, truncated, infos = env.step(
                [None if o is None else builder_reply(o, turn) for o in observations])
            steps.append((rewards, terminated, truncated))
            turn += 1

    options = {"num_envs": 3, "max_turns": 4}
    with craft_env.text_env(**options) as env:
        expected = steps_of(env, drop_records=True)
    for workers in (None, 2):
        with craft_env.text_env(workers=workers, turn_records=False, **options) as env:
            got = steps_of(env, drop_records=False)
        assert got == expected
    with pytest.raises(ValueError, match="turn_records: expected True or False, got 'no'"):
        craft_env.text_env(num_envs=2, turn_records="no")


@pytest.mark.skipif(not hasattr(os, "sched_getscheduler"), reason="no scheduling policies to read")
def test_workers_keep_the_callers_scheduling_policy():
    """Not batch scheduling: a woken batch worker waits out other programs' time slices on every call
    (the module docstring); a worker runs as the caller does, and the caller is left as it was."""
    policy = os.sched_getscheduler(0)
    with craft_env.text_env(num_envs=2, workers=2, max_turns=1) as env:
        assert [os.sched_getscheduler(w.process.pid) for w in env._workers] == [policy] * 2
    assert os.sched_getscheduler(0) == policy


@pytest.mark.parametrize(
    ("cores", "here", "order"),
    [
        ([0, 1], 0, [1, 0]),  # the worker on the caller's core is woken last
        ([0, 1], 1, [0, 1]),
        ([0, 1, 0, 1], 0, [1, 3, 0, 2]),  # the others keep their numbering
        ([3, 5], 4, [0, 1]),  # the caller on a core without a worker
        ([0, 1], None, [0, 1]),  # the system cannot say where the caller runs
        ([None, None], 0, [0, 1]),  # not pinned
    ],
)
def test_parts_go_to_the_callers_own_core_last(cores, here, order):
    assert sending_order(cores, here) == order


def test_the_caller_can_say_which_of_its_cores_it_runs_on():
    core = current_core()
    if core is None:
        pytest.skip("the system cannot say which core a process runs on")
    assert core in os.sched_getaffinity(0)


@pytest.fixture
def two_cores(monkeypatch) -> list[int]:
    """Two of this process's cores, ``usable_cores`` giving only them (so two workers are pinned)."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("the system cannot pin a process to a core")
    cores = sorted(os.sched_getaffinity(0))[:2]
    if len(cores) < 2:
        pytest.skip("one core: two workers cannot be spread")
    monkeypatch.setattr(workers_module, "usable_cores", lambda: cores)
    return cores


def test_a_call_sends_in_sending_order_and_gathers_in_game_order(monkeypatch, two_cores):
    cores = two_cores
    options = {"num_envs": 4, "max_turns": 2}
    with craft_env.text_env(**options) as env:
        expected = play(env, 3)
    monkeypatch.setattr(workers_module, "current_core", lambda: cores[0])  # as if on the first worker's core
    sent = []
    send = workers_module._Worker.send

    def recording(worker, message):
        sent.append((worker.number, message[0]))
        send(worker, message)

    monkeypatch.setattr(workers_module._Worker, "send", recording)
    with craft_env.text_env(workers=2, **options) as env:
        assert play(env, 3) == expected
    calls = [number for number, command in sent if command in ("reset", "step")]
    assert calls and calls == [1, 0] * (len(calls) // 2)


@pytest.mark.parametrize(
    ("workers", "cores", "pinned"),
    [
        (1, [0, 1], [None]),  # one worker: nothing to spread
        (2, [0, 1], [0, 1]),
        (4, [0, 1], [0, 1, 0, 1]),
        (2, [3, 5], [3, 5]),
        (3, [0, 1], [None] * 3),  # not a whole multiple: one core would take two workers, the other one
        (2, list(range(16)), [None] * 2),  # fewer workers than cores: the scheduler has idle cores for them
        (2, [], [None] * 2),  # a system that cannot pin
    ],
)
def test_workers_are_pinned_only_when_every_core_takes_the_same_number(workers, cores, pinned):
    assert worker_cores(workers, cores) == pinned


def test_pinned_workers_run_on_their_cores_and_play_what_one_process_plays(two_cores):
    cores = two_cores
    options = {"num_envs": 3, "max_turns": 2}
    with craft_env.text_env(**options) as env:
        expected = play(env, 7)
    affinity = os.sched_getaffinity(0)
    with craft_env.text_env(workers=2, **options) as env:
        assert env.cores == cores
        assert [os.sched_getaffinity(w.process.pid) for w in env._workers] == [{core} for core in cores]
        assert play(env, 7) == expected
    assert os.sched_getaffinity(0) == affinity  # the caller is left where it was


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"workers": 2}, "workers: needs num_envs"),
        ({"num_envs": 2, "workers": 0}, "workers: expected an int"),
        ({"num_envs": 2, "workers": 3}, "workers: expected an int"),
        ({"num_envs": 2, "workers": True}, "workers: expected an int"),
        ({"num_envs": 2, "workers": 2, "seat": "D9"}, "seat: expected one of"),
    ],
)
def test_bad_worker_arguments_fail_before_any_process_starts(options, message):
    with pytest.raises(ValueError, match=message):
        craft_env.text_env(**options)


class Flag(int):
    """An int subclass: a message that holds one must come back holding the subclass, not a plain int."""


def _types(value):
    """``value``'s type, and those of everything it holds."""
    if isinstance(value, dict):
        return (type(value), [(_types(k), _types(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value), [_types(v) for v in value])
    return type(value)


@pytest.mark.parametrize(
    "message",
    [
        ("ok", ([[{"role": "user", "content": "é\ufffd"}], None], [0.5, -0.0], {"a": (1, None)}), [True], 1.5),
        ("ok", {"seed": np.int64(3)}, [False], 0.0),
        ("ok", OrderedDict(b=1, a=[Flag(2)]), [], 0.0),
        ("error", "ValueError", "seed: expected an int"),
    ],
)
def test_messages_come_back_equal_and_of_the_same_types(message):
    back = _unpack(_pack(message))
    assert back == message and _types(back) == _types(message)


#: Values a message may hold: the built-in types, numpy scalars and a subclass of int, nested in lists,
#: tuples and dicts.
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(max_size=8),
    st.integers(-(2**63), 2**63 - 1).map(np.int64),
    st.floats(allow_nan=False).map(np.float64),
    st.integers(0, 9).map(Flag),
)
_MESSAGES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=4), inner, max_size=4),
    ),
    max_leaves=20,
)


@given(_MESSAGES)
def test_any_message_comes_back_equal_and_of_the_same_types(message):
    back = _unpack(_pack(message))
    assert back == message and _types(back) == _types(message)

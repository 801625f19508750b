"""The text environment as an OpenEnv server, and its client (``docs/train.md``, "Training elsewhere").

Needs the ``openenv`` package (tested with 0.10). OpenEnv serves an
environment over HTTP and a WebSocket (``/ws``: one session, one game, per
connection), so rollouts can run on other machines than the trainer, and
any trainer with an OpenEnv client (TRL, or a loop of your own) can drive
it. The environment is ``text_env.TextEnv``: an action is the seat's reply
text, an observation the chat for its next reply plus the engine's verdict
on the last turn.

Serve::

    python -m craft_env.train.openenv --seat builder --others scripted --port 8000

Drive::

    with CraftEnvClient(base_url="http://localhost:8000").sync() as env:
        result = env.reset(seed=3)
        while not result.done:
            result = env.step(CraftAction(reply=my_model(result.observation.messages)))

``reset`` takes ``seed`` and optionally ``structure`` (an index into the
dataset) and ``run`` (the directors' archetypes), as ``TextEnv.reset``.
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Sequence
from typing import Any

import uvicorn
from fastapi import FastAPI
from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from craft_env.train.clients import BUILDER
from craft_env.train.text_env import TextEnv

ENV_NAME = "craft"


class CraftAction(Action):
    """The seat's reply, as a model wrote it."""

    reply: str = Field(..., description="the seat's reply text (read exactly as a benchmark run reads it)")


class CraftObservation(Observation):
    """The chat for the seat's next reply (empty once the game has ended) and the engine's verdict."""

    messages: list[dict[str, str]] = Field(default_factory=list, description="system and user messages")
    structure_id: str = Field(default="", description="the game's target")
    turn: int = Field(default=0, description="the last turn played (0 after reset)")
    legal: bool | None = Field(default=None, description="the last turn's move was legal")
    reason: str | None = Field(default=None, description="why the last turn failed, if it did")
    optimal: bool | None = Field(default=None, description="the last move shortened the fewest-moves plan")
    distance: int | None = Field(default=None, description="moves still needed after the last turn")
    progress: float | None = Field(default=None, description="the paper's progress after the last turn")
    truncated: bool = Field(default=False, description="the game ended without completing the target")
    error: str | None = Field(default=None, description="another seat's model call failed for good")


class CraftEnvironment(Environment):
    """An OpenEnv environment over one ``TextEnv`` game per session."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self.env = TextEnv(**options)
        self._state = State(episode_id=None, step_count=0)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        structure: int | None = None,
        run: int = 1,
        **kwargs: Any,
    ) -> CraftObservation:
        messages, info = self.env.reset(seed=seed or 0, structure=structure, run=run)
        self._state = State(
            episode_id=episode_id or str(uuid.uuid4()),
            step_count=0,
            seed=seed or 0,
            structure_id=info["structure_id"],
        )
        return CraftObservation(
            messages=messages or [], structure_id=info["structure_id"], done=messages is None, reward=None
        )

    def step(self, action: CraftAction, timeout_s: float | None = None, **kwargs: Any) -> CraftObservation:
        messages, reward, terminated, truncated, info = self.env.step(action.reply)
        self._state.step_count += 1
        return CraftObservation(
            messages=messages or [],
            structure_id=info["structure_id"],
            turn=info.get("turn", 0),
            legal=info.get("legal"),
            reason=info.get("reason"),
            optimal=info.get("optimal"),
            distance=info.get("distance"),
            progress=info.get("progress"),
            truncated=truncated,
            error=info.get("error"),
            done=terminated or truncated,
            reward=reward,
        )

    @property
    def state(self) -> State:
        return self._state

    def close(self) -> None:
        self.env.close()


def create_craft_app(max_concurrent_envs: int = 8, **options: Any) -> FastAPI:
    """The OpenEnv server app; each session gets ``CraftEnvironment(**options)`` (``text_env`` keywords)."""
    return create_app(
        lambda: CraftEnvironment(**options),
        CraftAction,
        CraftObservation,
        env_name=ENV_NAME,
        max_concurrent_envs=max_concurrent_envs,
    )


class CraftEnvClient(EnvClient[CraftAction, CraftObservation, State]):
    """The client of a ``create_craft_app`` server (OpenEnv's WebSocket session)."""

    def _step_payload(self, action: CraftAction) -> dict[str, Any]:
        return {"reply": action.reply}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CraftObservation]:
        fields = dict(payload.get("observation") or {})
        fields.pop("metadata", None)
        observation = CraftObservation(
            **fields, done=payload.get("done", False), reward=payload.get("reward")
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return State(**payload)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the text environment: ``python -m craft_env.train.openenv --help``."""
    parser = argparse.ArgumentParser(
        prog="python -m craft_env.train.openenv", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--seat", default=BUILDER, help="the seat the client plays (default builder)")
    parser.add_argument(
        "--others", default="scripted", help="the other seats: scripted, random or a litellm model"
    )
    parser.add_argument("--oracle-n", type=int, default=5, help="candidates shown to the builder; 0 = none")
    parser.add_argument("--protocol", default="craft", help="craft (default) or paper")
    parser.add_argument("--max-turns", type=int, default=20, help="turns in a game (default 20)")
    parser.add_argument("--max-sessions", type=int, default=8, help="concurrent games (default 8)")
    args = parser.parse_args(argv)
    app = create_craft_app(
        args.max_sessions,
        seat=args.seat,
        others=args.others,
        oracle_n=args.oracle_n,
        protocol=args.protocol,
        max_turns=args.max_turns,
    )
    uvicorn.run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()

"""Directors and builders behind one small protocol (``base``).

* ``scripted``: the offline default team, rule-based, speaking plain English;
* ``random``: uniform over the action mask, the floor;
* ``llm``: any litellm model, with the prompts of ``prompts`` (versioned).

Importing this package is light: no litellm, no network.
"""

from craft_env.agents.base import AgentContext, Builder, BuilderReply, Director, DirectorReply, Usage

__all__ = ["AgentContext", "Builder", "BuilderReply", "Director", "DirectorReply", "Usage"]

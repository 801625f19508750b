"""The language layer: game state to text for a model, and text back to moves and intents.

Depends on ``craft_env.core`` only; every reading of model text lives here. Its parts:

* ``moves``: ``format_move`` (canonical line), ``parse_move`` (forgiving:
  JSON, fences, prose, coordinate variants), ``parse_builder_reply``
  (move or clarifying question, and which director was followed).
* ``speech``: director intents in words, in the speaking director's own
  frame (``intent_to_text`` / ``text_to_intent``), ``parse_director_message``
  for free-form messages, slot and layer names, the seat's frame for prompts.
* ``describe``: the board, a wall view, candidate moves and the conversation
  as compact deterministic text.
* ``replies``: a model's whole reply: ``<think>`` split off, a director's
  ``<message>``, a builder's action for the env (``builder_action``).
* ``paper_grammar``: the paper's reply grammar and the moves its logs record
  (``move_from_paper``).

Every parser raises ``ParseError`` (a ``ValueError`` with ``.reason`` and
``.text``) and nothing else on bad text.
"""

from craft_env.text.describe import (
    describe_board,
    describe_candidates,
    describe_conversation,
    describe_message,
    describe_view,
)
from craft_env.text.errors import ParseError
from craft_env.text.moves import ParsedBuilderReply, find_positions, format_move, parse_builder_reply, parse_move
from craft_env.text.speech import (
    NOOP_TEXT,
    describe_intents,
    director_frame_description,
    intent_move,
    intent_to_text,
    layer_name,
    named_information,
    parse_director_message,
    slot_name,
    text_to_intent,
)

__all__ = [
    "NOOP_TEXT",
    "ParsedBuilderReply",
    "ParseError",
    "describe_board",
    "describe_candidates",
    "describe_conversation",
    "describe_message",
    "describe_intents",
    "describe_view",
    "director_frame_description",
    "find_positions",
    "format_move",
    "intent_move",
    "intent_to_text",
    "layer_name",
    "named_information",
    "parse_builder_reply",
    "parse_director_message",
    "parse_move",
    "slot_name",
    "text_to_intent",
]

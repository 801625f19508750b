"""A person at one seat, in a terminal: ``HumanBuilder`` and ``HumanDirector``.

They are agents like the others (``agents.base``): the runner hands them an
``AgentContext`` and they answer a ``BuilderReply`` or a ``DirectorReply``,
so a game with a person is played and logged exactly like a benchmark game
(``craft-env play``, ``eval.play``).

What the person is shown is the seat's observation and nothing else: its
``"text"`` (the words a language model at that seat gets), the board drawn
from that observation's board, and for a director its own target wall
decoded from its numeric observation (``agents.decode``). Never another
director's wall, never the target.

What the person types is read by the text layer: a builder's line by
``craft_env.text.parse_builder_reply`` (a move, a question, ``pass``, or
the number of an oracle candidate), a director's by
``parse_director_message``. A line the text layer cannot read is answered
with its one-line reason and asked again (no turn is lost to a typo); a
readable move that the rules refuse is played as a failed turn, and its
reason shows at the start of the next turn (it is in the conversation).
``help`` lists the syntax, ``quit`` (or end of input, or Ctrl-C) raises
``GameStopped``.
"""

from __future__ import annotations

from typing import Any, Callable

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from craft_env.agents.base import AgentContext, BuilderReply, DirectorReply, GameStopped
from craft_env.agents.decode import decode_wall_view
from craft_env.core.encoding import COLOUR_NAMES
from craft_env.core.intents import ALONG_RIGHT, INWARD, intent_table
from craft_env.envs.render import render_ansi
from craft_env.text import (
    NOOP_TEXT,
    ParseError,
    describe_intents,
    format_move,
    intent_to_text,
    parse_builder_reply,
    parse_director_message,
)
from craft_env.text.clean import printable, valid_unicode

QUIT_WORDS = ("quit", "exit")
HELP_WORDS = ("help", "?")

BUILDER_HELP = """\
Type one move, a question, or a command. Cells are (row i, column j): row 0 is
the far row (D2's side), column 0 your left (D1's side); L0 is the ground layer.
  place gs (0,0) L0          a small green block on cell (0,0), ground layer
  place bl (1,0)-(1,1) L1    a large blue block over (1,0) and (1,1), layer 1
  remove (0,2)               take the top block off cell (0,2)
  colours g green, b blue, r red, y yellow, o orange; s small, l large
  1, 2, ...                  play that candidate (when candidates are listed)
  what goes on (0,1)?        a question to the directors (you pass this turn)
  pass                       do nothing this turn
  help                       this list
  quit                       stop the game (it is logged as stopped)"""


class Terminal:
    """Where the person reads and types: a rich console and a line reader.

    End of input and Ctrl-C count as ``quit``. ``read`` defaults to the console's
    ``input``; tests may pass another.
    """

    def __init__(self, console: Console | None = None, read: Callable[[str], str] | None = None) -> None:
        self.console = console or Console(highlight=False)
        self._read = read or self.console.input

    @property
    def width(self) -> int:
        return max(40, min(100, self.console.width))

    def show(self, *items: Any) -> None:
        self.console.print(*items)

    def say(self, text: str, style: str | None = None) -> None:
        """Print ``text`` with no rich markup read from it and control characters escaped (``text.clean``)."""
        self.console.print(Text(printable(text), style=style or ""))

    def ask(self, prompt: str) -> str:
        """The person's line, stripped and made valid Unicode (a terminal may pass undecodable bytes on)."""
        try:
            return valid_unicode(self._read(prompt).strip())
        except (EOFError, KeyboardInterrupt):
            return "quit"


def _last_builder_note(context: AgentContext) -> str | None:
    """The builder's entry of the previous turn in the conversation (its move and outcome)."""
    for entry in reversed(context.conversation):
        if entry.get("speaker") == "builder" and entry.get("turn") == context.turn - 1:
            return str(entry.get("text") or "")
    return None


def _wall_view_panel(view, seat: str) -> dict[str, list[dict[str, Any]]]:
    """A decoded wall (``decode_wall_view`` codes) in ``render_ansi``'s ``target_views`` form."""
    slots, height = view.shape
    rows: dict[str, list[dict[str, Any]]] = {}
    for level in range(height):
        rows[f"row_{level}"] = [
            {"color": COLOUR_NAMES[(int(code) - 1) // 2], "size": 2 if (int(code) - 1) % 2 else 1}
            if code else {"color": None, "size": 1}
            for code in view[:, level]
        ]
    return rows


class _Person:
    """What both seats share: the turn header, the observation, help and quit."""

    name = "person"

    def __init__(self, terminal: Terminal | None = None) -> None:
        self.terminal = terminal or Terminal()

    def _show_turn(self, context: AgentContext, you: str, drawing: str) -> None:
        """The turn header, the last move's outcome, ``drawing`` (ANSI text) and the text observation."""
        term = self.terminal
        term.show(Text(f"Turn {context.turn}/{context.max_turns} - you are {you}", style="bold"))
        note = _last_builder_note(context)
        if note is not None:
            failed = "(failed:" in note
            term.say(f"Last move: {note}", "bold red" if failed else "green")
        term.show(Text.from_ansi(drawing.rstrip()))
        term.show(Panel(Text(printable(context.text)), title="your observation", title_align="left"))

    def _command(self, line: str, help_text: str, seat: str) -> bool:
        """Handle ``help`` and ``quit``; True when ``line`` was one of them."""
        word = line.lower()
        if word in QUIT_WORDS:
            raise GameStopped(f"the person at seat {seat} quit")
        if word in HELP_WORDS:
            self.terminal.say(help_text)
            return True
        return False


class HumanBuilder(_Person):
    """A person at the builder's seat (see the module docstring)."""

    async def act(self, context: AgentContext) -> BuilderReply:
        return self.decide(context)

    def decide(self, context: AgentContext) -> BuilderReply:
        drawing = render_ansi(context.board, color=True, width=self.terminal.width)
        self._show_turn(context, "the builder", drawing)
        candidates = list(context.candidates or ())
        while True:
            line = self.terminal.ask("builder> ")
            if not line or self._command(line, BUILDER_HELP, "builder"):
                continue
            if line.isdigit():
                k = int(line)
                if 1 <= k <= len(candidates):
                    return BuilderReply(action=format_move(candidates[k - 1]))
                offer = f"1..{len(candidates)}" if candidates else "none are shown without the oracle"
                self.terminal.say(f"No candidate {k} (candidates: {offer}).", "red")
                continue
            try:
                parse_builder_reply(line, context.n, context.height)
            except ParseError as error:
                self.terminal.say(f"Not understood: {error.reason}. Type help for the syntax.", "red")
                continue
            return BuilderReply(action=line)


def director_help(seat: str, n: int, height: int) -> str:
    """The syntax of a director's messages, with examples in ``seat``'s own frame."""
    table = intent_table(seat, n, height)
    examples = [
        table.small(0, 0, 2),
        table.large(0, 0, 3, ALONG_RIGHT),
        table.large(n - 1, min(1, height - 1), 1, INWARD),
        table.remove(n - 1, height - 1),
    ]
    lines = [
        f"Tell the builder what your wall needs, in your own frame as {seat}:",
        "columns left to right as you look at your wall, layers from the bottom. For example:",
        *(f"  {intent_to_text(i, table)}" for i in examples),
        f"  {NOOP_TEXT}   (or: pass)",
        "  options    every instruction the current board allows, in words",
        "  help       this list",
        "  quit       stop the game (it is logged as stopped)",
    ]
    return "\n".join(lines)


class HumanDirector(_Person):
    """A person at a director's seat (see the module docstring).

    With ``strict`` (the builder is a built-in agent, which understands only
    what the text layer reads) a message with no instruction in it is
    refused and asked again; otherwise any text is sent, as a model builder
    may make sense of it.
    """

    def __init__(self, terminal: Terminal | None = None, strict: bool = True) -> None:
        super().__init__(terminal)
        self.strict = strict

    async def act(self, context: AgentContext) -> DirectorReply:
        return self.decide(context)

    def decide(self, context: AgentContext) -> DirectorReply:
        seat, n, height = context.seat, context.n, context.height
        wall = decode_wall_view(context.observation["observation"], n, height)
        views = {seat: _wall_view_panel(wall, seat)}
        drawing = render_ansi(context.board, views, color=True, width=self.terminal.width)
        self._show_turn(context, f"director {seat}", drawing)
        help_text = director_help(seat, n, height)
        while True:
            line = self.terminal.ask(f"{seat}> ")
            if not line or self._command(line, help_text, seat):
                continue
            if line.lower() == "options":
                mask = context.observation.get("action_mask")
                self.terminal.say(describe_intents(intent_table(seat, n, height), mask))
                continue
            if line.lower() == "pass":
                return DirectorReply(message=NOOP_TEXT)
            intents = parse_director_message(line, seat, n, height)
            if not intents and self.strict:
                self.terminal.say(
                    "The builder would not understand that (no instruction found); "
                    "type help for examples.", "red"
                )
                continue
            return DirectorReply(message=line)

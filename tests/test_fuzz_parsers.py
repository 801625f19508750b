"""Fuzzing every text parser with model-like replies (issue 15, "a fuzz suite in CI").

Strategies build random text, huge inputs, nested and unclosed tags, JSON
fragments with extreme numbers, code fences, mixed case, several moves and
negations. Every parser must raise nothing but its documented error
(``ParseError`` for the move and intent readers, nothing at all for the
forgiving ones), and its time must grow with the input no faster than
linearly: each example is also parsed ten times over, and the time ratio is
checked, not a wall clock. ``benchmarks/bench_fuzz.py`` runs the long version.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from parse_timing import best_time

from craft_env.text.replies import builder_action, parse_director_reply, split_think
from craft_env.core.intents import intent_table
from craft_env.text import ParseError, parse_builder_reply, parse_director_message, parse_move, text_to_intent

D2 = intent_table("D2", 3, 3)
#: Ten copies may cost this many times one copy: bounded per-clause work makes small inputs cheap, and a
#: loaded machine adds noise, but a quadratic parser shows 100x and the faults of issue 15 far more.
LINEAR_LIMIT = 70.0

#: parser -> the exceptions it documents (empty: it never raises on text).
PARSERS = {
    "parse_move": (lambda t: parse_move(t), (ParseError,)),
    "parse_builder_reply": (lambda t: parse_builder_reply(t), (ParseError,)),
    "text_to_intent": (lambda t: text_to_intent(t, D2), (ParseError,)),
    "parse_director_message": (lambda t: parse_director_message(t, "D2"), ()),
    "parse_director_reply": (parse_director_reply, ()),
    "builder_action": (lambda t: builder_action(t, 3, 3), ()),
    "split_think": (split_think, ()),
}

WORDS = [
    "place", "remove", "pass", "noop", "MOVE:", "QUESTION:", "FOLLOWED:", "D1", "D2, D3", "gs", "gl", "bl",
    "rs", "ys", "os", "(0,0)", "( 1 , 2 )", "[2,1]", "row 1 col 2", "L0", "layer 2", "large", "small",
    "green", "purple", "not", "don't", "I will not", "because", "instead of", "I'll", "so", "?", ".", ",",
    "I refuse to", "decided against", "under no circumstances", ", I'll", "but", "not sure,", "never",
    "-", "to the right", "inward", "my left column", "bottom layer", "take the top block off", "\n",
    "   ", "\t", "```json", "```", "<think>", "</think>", "<message>", "</message>", "<move>", "</move>",
    "{", "}", '"action"', ":", '"position"', "1e999", "Infinity", "-0.5", "NaN", "99999999", "null",
]
NUMBERS = st.one_of(
    st.integers(-10, 10), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["1e999", "-1e999", "Infinity", "NaN", "1" * 5000, "-0.5", "0.9"]),
)


@st.composite
def json_moves(draw) -> str:
    position = draw(st.one_of(
        st.lists(NUMBERS.map(str), min_size=0, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]"),
        st.sampled_from(
            ['"(0,0)"', '"col 1 row"', '{"row": 1.5, "col": 0}', "[[[[0]]]]", '"' + " " * 500 + '"']
        ),
    ))
    action = draw(st.sampled_from(['"place"', '"remove"', '"noop"', '"PLACE"', "1", "null", '"x y (0,0)"']))
    block = draw(st.sampled_from(['"gs"', '"gl"', '"purple"', "2", '"large green"']))
    layer = draw(NUMBERS.map(str))
    body = f'{{"action": {action}, "block": {block}, "position": {position}, "layer": {layer}}}'
    prefix = draw(st.sampled_from(["", "```json\n", "Here: "]))
    return prefix + body + draw(st.sampled_from(["", "\n```", "}"]))


@st.composite
def nested_tags(draw) -> str:
    depth = draw(st.integers(1, 30))
    tags = draw(st.lists(st.sampled_from(["think", "message", "move", "question", "THINK", "Message"]),
                         min_size=depth, max_size=depth))
    inner = draw(st.sampled_from(["place gs (0,0) L0", "draft", "", "FOLLOWED: D1"]))
    closes = draw(st.booleans())
    opened = "".join(f"<{t}>" for t in tags)
    closed = "".join(f"</{t}>" for t in reversed(tags)) if closes else ""
    return opened + inner + closed


REPLIES = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(WORDS), max_size=80).map(" ".join),
    st.lists(st.sampled_from(WORDS), max_size=40).map("".join),
    json_moves(),
    nested_tags(),
    st.tuples(st.sampled_from(WORDS), st.integers(1000, 20_000)).map(lambda p: p[0] + " " * p[1] + "x"),
    st.tuples(st.sampled_from(["(", "{", "[", "<think>", "row ", "1,", "-", "?", "\n"]),
              st.integers(100, 5000)).map(lambda p: p[0] * p[1]),
    st.lists(st.sampled_from(WORDS), max_size=30).map(lambda ws: " ".join(w.upper() for w in ws)),
)


def _check(name: str, text: str) -> None:
    parse, allowed = PARSERS[name]
    try:
        parse(text)
    except allowed:
        pass


@given(REPLIES)
def test_no_parser_raises_anything_but_its_documented_error(text):
    for name in PARSERS:
        _check(name, text)


@given(REPLIES)
def test_parse_time_grows_at_most_linearly_with_the_input(text):
    """Ten copies of an input take at most ``LINEAR_LIMIT`` times one copy (a ratio, not a clock)."""
    longer = "\n".join([text] * 10)
    for name, (parse, _) in PARSERS.items():
        ratio = 0.0
        for _ in range(3):  # a busy machine inflates one round, not three in a row
            small = best_time(parse, text, tries=2)
            large = best_time(parse, longer, tries=2)
            if large < 0.005:  # below a few milliseconds the ratio is noise
                break
            ratio = large / max(small, 5e-4)
            if ratio < LINEAR_LIMIT:
                break
        assert ratio < LINEAR_LIMIT, f"{name}: {ratio:.0f}x the time for 10x the input"

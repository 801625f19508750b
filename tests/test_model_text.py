"""Model text that breaks readers or terminals (issue 26): lone surrogates (#3) and terminal escapes (#7).

A reply holding ``\\ud800`` used to play fine and then break ``replay``,
``transcript`` and every judge call (the text could not be encoded as
UTF-8); now the model client makes it valid Unicode where it enters. A
message holding ``ESC]0;...BEL`` (sets the window title) or ``ESC[2J``
(clears the screen) used to reach the terminal as is; now everything that
prints model text to a terminal escapes control characters, and files keep
the text.
"""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys

from fake_providers import install  # tests/ is on sys.path (conftest)

from craft_env.agents.human import Terminal
from craft_env.cli import main
from craft_env.eval.logs.games import read_games
from craft_env.eval.run.provider import request_context, scripted_reply
from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings
from craft_env.models.cache import ReplayCache
from craft_env.models.llm import ModelClient, import_litellm
from craft_env.text.clean import printable, valid_unicode, valid_unicode_data

litellm = import_litellm()
TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J"


class Appending(litellm.CustomLLM):
    """The scripted team, with ``suffix`` added to every director message; the request is encoded as an HTTP
    client would encode it (UTF-8 JSON), so text that cannot be encoded fails the call as it does in real life."""

    def __init__(self, suffix: str) -> None:
        super().__init__()
        self.suffix = suffix

    async def acompletion(self, model, messages, *args, **kwargs):
        json.dumps(messages, ensure_ascii=False).encode("utf-8")
        text = scripted_reply("scripted/team", messages, request_context(kwargs))
        text = text.replace("</message>", f" {self.suffix}</message>")
        return litellm.ModelResponse(model=model, choices=[{"message": {"role": "assistant", "content": text}}])


def _run(tmp_path, suffix: str, name: str = "appending"):
    install(name, Appending(suffix))
    out = tmp_path / "run"
    settings = RunSettings(out=str(out), director_model=f"{name}/team", builder_model=f"{name}/team",
                           structures=[0], turns=2)
    (summary,) = run_benchmark(settings)
    assert summary["done"] == 1
    return out


# ------------------------------------------------------------------ #3 lone surrogates


def test_valid_unicode_replaces_lone_surrogates_only():
    assert valid_unicode("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert valid_unicode("ok 😀 é") == "ok 😀 é"


def test_a_reply_with_a_lone_surrogate_is_logged_valid_and_every_reader_works(tmp_path, capsys):
    out = _run(tmp_path, "\ud800")
    (game,) = read_games(out / "run_1" / "log.jsonl").values()
    message = game.turns[0]["director_responses"][0]["message"]
    assert message.endswith("\ufffd") and "\ud800" not in message
    assert main(["replay", str(out), "-o", str(tmp_path / "replay.html")]) == 0
    assert main(["transcript", str(out), "--game", "0"]) == 0
    assert main(["transcript", str(out), "--game", "0", "-o", str(tmp_path / "t.md")]) == 0
    install("judging", Appending(""))  # a judge model that encodes its requests as UTF-8
    code = main(["judge", str(out), "--judge-model", "judging/judge", "--judges", "sg", "--no-progress",
                 "--num-retries", "0"])
    assert code in (0, 1)  # the stand-in judge answers like a director, so its answers are unreadable...
    output = capsys.readouterr().out
    assert " 0 failed;" in output  # ...but no call fails: every prompt could be sent


def test_replayed_records_of_an_older_version_are_made_valid(tmp_path):
    cache = ReplayCache(tmp_path / "cache.jsonl")
    client = ModelClient("nowhere/model", cache=cache, replay_only=True)
    messages = [{"role": "user", "content": "hi"}]
    cache.put({"key": client.key(messages), "model": "nowhere/model", "text": "old \ud800 reply"})
    assert asyncio.run(client.acomplete(messages)).text == "old \ufffd reply"


def test_a_run_log_of_an_older_version_holding_a_lone_surrogate_is_read_valid(tmp_path, capsys):
    out = _run(tmp_path, "", name="plain")
    log_path = out / "run_1" / "log.jsonl"
    lines = log_path.read_text(encoding="utf-8").splitlines()
    for k, line in enumerate(lines):  # what an older version wrote: the surrogate's JSON escape in a message
        record = json.loads(line)
        if record.get("kind") == "turn":
            record["director_responses"][0]["message"] = "old \ud800 text"
            record["director_responses"][0]["\udfff key"] = "value \udc00"
            lines[k] = json.dumps(record)
            break
    log_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (game,) = read_games(log_path).values()
    response = game.turns[0]["director_responses"][0]
    assert response["message"] == "old \ufffd text" and response["\ufffd key"] == "value \ufffd"
    assert main(["replay", str(out), "-o", str(tmp_path / "replay.html")]) == 0
    assert main(["transcript", str(out), "--game", "0", "-o", str(tmp_path / "t.md")]) == 0
    assert "old \ufffd text" in (tmp_path / "t.md").read_text(encoding="utf-8")


def test_valid_unicode_data_walks_any_depth_without_recursion():
    deep: list = ["\ud800"]
    for _ in range(5000):
        deep = [deep]
    fixed = valid_unicode_data({"\ud801": deep, "n": 1})
    inner = fixed["\ufffd"]
    for _ in range(5000):
        inner = inner[0]
    assert inner == ["\ufffd"] and fixed["n"] == 1


# ------------------------------------------------------------------ #7 terminal escapes


def test_printable_escapes_control_characters_and_keeps_the_rest():
    assert printable(f"a{TITLE}b{CLEAR}\u202e\x9b") == "a\\x1b]0;owned\\x07b\\x1b[2J\\u202e\\x9b"
    assert printable("line\n\ttab é 😀") == "line\n\ttab é 😀"
    assert printable("one\ntwo", keep_newlines=False) == "one\\x0atwo"


def test_transcript_escapes_the_terminal_and_the_file_keeps_the_text(tmp_path, capsys):
    out = _run(tmp_path, TITLE + CLEAR, "escaping")
    capsys.readouterr()
    assert main(["transcript", str(out), "--game", "0"]) == 0
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\x07" not in shown
    assert "\\x1b]0;owned\\x07\\x1b[2J" in shown
    assert main(["transcript", str(out), "--game", "0", "-o", str(tmp_path / "t.md")]) == 0
    assert TITLE + CLEAR in (tmp_path / "t.md").read_text(encoding="utf-8")


def test_what_play_says_to_the_person_is_escaped():
    from rich.console import Console

    buffer = io.StringIO()
    terminal = Terminal(Console(file=buffer, width=200, no_color=True), read=lambda prompt: "quit")
    terminal.say(f"Last move: place gs (0,0) {TITLE} failed")  # play's last line holds the builder's text
    shown = buffer.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown and "\\x1b]0;owned\\x07" in shown


def test_report_tables_escape_model_names_from_files(tmp_path, capsys):
    from paper_log_samples import paper_log, write_log

    log = paper_log()
    log["experiment_info"]["models"] = {"director": TITLE + "dir", "builder": CLEAR + "build"}
    write_log(tmp_path / "in.json", log)
    assert main(["report", str(tmp_path / "in.json"), "--out", str(tmp_path / "r"), "--no-plots"]) == 0
    shown = capsys.readouterr().out
    assert "\x1b]" not in shown and CLEAR not in shown and "\\x1b]0;owned" in shown


def test_verbose_logs_escape_model_text(tmp_path):
    code = (
        "import logging, sys\n"
        "from craft_env.cli import main\n"
        f"main(['-v', 'generate', '--n', '1', '-o', {str(tmp_path / 's.json')!r}])\n"
        f"logging.getLogger('craft_env.test').warning('reply was %s', {TITLE!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False)
    assert "\x1b" not in done.stderr and "reply was \\x1b]0;owned\\x07" in done.stderr, done.stderr

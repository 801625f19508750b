"""``craft-env leaderboard`` on real runs: inputs, groups, published rows, entry files, outputs, escaping.

The bands and the behaviour measures have their own tests
(test_leaderboard_bands.py, test_leaderboard_behaviour.py); the page in a
browser is test_leaderboard_browser.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import shutil
from pathlib import Path

import pytest

from craft_env.cli import main
from craft_env.datasets import load_dataset
from craft_env.eval.leaderboard.board import BoardOptions, build_board
from craft_env.eval.leaderboard.entries import SUMMARY_KEYS, entries_from_path, summarise
from craft_env.eval.leaderboard.entryfile import read_entry, write_entry
from craft_env.eval.leaderboard.markdown import board_markdown, escape_cell
from craft_env.eval.leaderboard.page import render_board
from craft_env.eval.leaderboard.published import published_table
from craft_env.eval.replay.page import replay_data
from craft_env.eval.report.report import load_results

PAPER_TEXT = Path(__file__).resolve().parents[1].parent / "shared" / "seed" / "CRAFT-paper.txt"
HOSTILE_MODEL = "<img src=x onerror=alert(1)>|</script><script>window.__pwned=1</script>"
HOSTILE_MESSAGE = '<script>alert("x")</script> | `code` [link](javascript:alert(1))'
STRUCTURES = "0,2,7"  # the paper's structure_001 (medium), structure_003 (complex), structure_008 (simple)
FAST = {"samples": 1000}

# The paper's Table 1 as its text holds it (six frontier rows): model, then Prog., Comp., Pos. Acc., IoU and
# Fail as (mean, SEM), then REMOVE and Gap.
TABLE1 = {
    "Gemini-3-Flash": (
        (0.675, 0.052),
        (0.716, 0.045),
        (0.594, 0.065),
        (0.817, 0.034),
        (0.625, 0.125),
        0.196,
        0.018,
    ),
    "GPT-4o": ((0.588, 0.051), (0.633, 0.048), (0.500, 0.061), (0.753, 0.038), (0.421, 0.116), 0.280, 0.056),
    "GPT-4o-Mini": (
        (0.333, 0.041),
        (0.383, 0.040),
        (0.233, 0.047),
        (0.531, 0.041),
        (0.550, 0.114),
        0.432,
        0.254,
    ),
    "GPT-4.1-Mini": (
        (0.312, 0.053),
        (0.352, 0.054),
        (0.233, 0.056),
        (0.481, 0.053),
        (0.500, 0.115),
        0.463,
        0.388,
    ),
    "Claude-Sonnet-4.6": (
        (0.285, 0.036),
        (0.332, 0.038),
        (0.189, 0.039),
        (0.479, 0.041),
        (0.350, 0.109),
        0.395,
        0.265,
    ),
    "Gemini-2.5-Flash": (
        (0.257, 0.030),
        (0.279, 0.033),
        (0.206, 0.033),
        (0.428, 0.039),
        (0.300, 0.105),
        0.467,
        0.402,
    ),
}
METRICS = ("progress", "completion", "position_accuracy", "iou", "fail")


def _run(out: Path, *extra: str, structures: str = STRUCTURES, turns: int = 6, runs: int = 2) -> Path:
    args = ["run", "--out", str(out), "--protocol", "paper", "--structures", structures]
    args += ["--turns", str(turns), "--runs", str(runs), "--no-progress", "--no-plots"]
    assert main([*args, *extra]) == 0
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("board")
    return {
        "scripted": _run(root / "scripted"),
        "random": _run(root / "random", "--director-model", "random", "--builder-model", "random"),
        "no_oracle": _run(root / "no-oracle", "--oracle-n", "0"),
        "craft": _run(root / "craft-protocol", "--protocol", "craft"),
    }


def _entry(data: dict, key: str) -> dict:
    return next(e for e in data["entries"] if e["key"] == key)


def _group_of(data: dict, key: str) -> dict:
    return next(g for g in data["groups"] if key in g["entries"])


# ------------------------------------------------------------------ published rows


def test_the_shipped_published_rows_are_the_papers_table1():
    table = published_table()
    assert table["citation"].startswith("Abhijnan Nath, Hannah VanderHoeven, Nikhil Krishnaswamy. CRAFT")
    assert (table["dataset"], table["protocol"], table["games"]) == ("paper", "paper", 20)
    assert table["condition"] == {"oracle_n": 5, "builder_tools": False, "turns": 20}
    assert [row["model"] for row in table["rows"]] == list(TABLE1)
    for row in table["rows"]:
        *pairs, remove, gap = TABLE1[row["model"]]
        for name, (mean, sem) in zip(METRICS, pairs):
            assert (row[name], row[name + "_sem"]) == (mean, sem), (row["model"], name)
        assert (row["remove"], row["gap"], row["group"]) == (remove, gap, "frontier")


def _paper_table1(text: str) -> dict[str, list[float]]:
    start = text.index("Model\tProg.")
    end = text.index("Table 1:", start)
    rows = {}
    for line in text[start:end].splitlines()[1:]:
        if "\t" in line:
            name, *cells = line.split("\t")
            rows[name] = [float(x) for cell in cells for x in re.findall(r"\d+\.\d+", cell)]
    return rows


@pytest.mark.skipif(not PAPER_TEXT.exists(), reason="the paper's text (../shared/seed) is not here")
def test_the_published_rows_match_the_papers_text():
    rows = _paper_table1(PAPER_TEXT.read_text(encoding="utf-8"))
    table = published_table()
    assert list(rows) == [row["model"] for row in table["rows"]]  # every row the text has, none added
    for row in table["rows"]:
        shipped = [x for name in METRICS for x in (row[name], row[name + "_sem"])] + [
            row["remove"],
            row["gap"],
        ]
        assert rows[row["model"]] == shipped


def test_published_rows_sit_in_the_paper_group_with_empty_cells(runs):
    data = build_board([runs["scripted"]], BoardOptions(**FAST))
    group = _group_of(data, "scripted")
    assert (group["dataset"], group["protocol"], group["condition"]) == (
        "paper",
        "paper",
        "oracle 5 · no tools · 6 turns",
    )
    published = [e for e in data["entries"] if e["kind"] == "published"]
    assert len(published) == len(TABLE1)
    paper_group = _group_of(data, published[0]["key"])
    assert paper_group["condition"] == "oracle 5 · no tools · 20 turns"
    assert set(paper_group["entries"]) == {e["key"] for e in published}
    for e in published:
        assert (
            e["split"] is None and e["taxonomy"] is None and e["behaviour"] is None and e["builder"] is None
        )
        assert e["m"]["completed"] is None and e["m"]["tokens"] is None  # absent, never 0
        assert e["ci_method"] == "unpaired, from SEM" and "published" in e["tags"]
    gemini = _entry(data, "published/Gemini-3-Flash")
    assert (gemini["m"]["progress"], gemini["m"]["progress_sem"], gemini["games"]) == (0.675, 0.052, 20)
    assert (
        build_board([runs["scripted"]], BoardOptions(published=False, **FAST))["entries"][0]["key"]
        == "scripted"
    )
    assert len(build_board([runs["scripted"]], BoardOptions(published=False, **FAST))["entries"]) == 1


def test_a_paper_protocol_run_of_twenty_turns_on_two_structures_is_not_ranked_against_table1(tmp_path):
    out = _run(tmp_path / "twenty", structures="0,1", turns=20, runs=1)
    data = build_board([out], BoardOptions(**FAST))
    group = _group_of(data, "twenty")
    assert len(group["entries"]) == 1 + len(TABLE1)
    members = [_entry(data, k) for k in group["entries"]]
    ours = _entry(data, "twenty")
    # Table 1 is over the paper's 20 structures, this run over 2 of them: the means are not comparable
    assert sorted(ours["not_comparable"]) == sorted(e["key"] for e in members if e is not ours)
    assert all("played 2 structures" in reason for reason in ours["not_comparable"].values())
    published = [e for e in members if e is not ours]
    z = 1.959963984540054
    for entry in published:  # the published rows among themselves: unpaired, each rank worked out by hand
        assert list(entry["not_comparable"]) == ["twenty"]
        better = [
            o
            for o in published
            if o is not entry
            and o["m"]["progress"]
            - entry["m"]["progress"]
            - z * math.hypot(o["m"]["progress_sem"], entry["m"]["progress_sem"])
            > 0
        ]
        assert entry["rank"] == 1 + len(better), entry["key"]


# ------------------------------------------------------------------ entries and groups


def test_rows_are_grouped_by_dataset_protocol_and_condition(runs):
    data = build_board(
        [runs["scripted"], runs["random"], runs["no_oracle"], runs["craft"]],
        BoardOptions(published=False, **FAST),
    )
    groups = {g["label"]: set(g["entries"]) for g in data["groups"]}
    assert groups == {
        "dataset paper · protocol paper · oracle 5 · no tools · 6 turns": {"scripted", "random"},
        "dataset paper · protocol paper · no oracle · no tools · 6 turns": {"no-oracle"},
        "dataset paper · protocol craft · oracle 5 · no tools · 6 turns": {"craft-protocol"},
    }
    # each group is ranked on its own: the lone entries are first of their groups
    assert _entry(data, "no-oracle")["rank"] == _entry(data, "craft-protocol")["rank"] == 1
    assert _entry(data, "no-oracle")["next"] is None
    paired = _entry(data, _group_of(data, "random")["entries"][0])["next"]
    assert paired["method"] == "paired bootstrap" and paired["structures"] == 3


def test_an_entry_recomputes_the_reports_table1(runs):
    entry = entries_from_path(runs["random"])[0]
    pooled = next(r for r in load_results([runs["random"]]) if r.pooled)
    shared = [key for key in SUMMARY_KEYS if key in pooled.row]
    assert len(shared) == len(SUMMARY_KEYS) - 1  # all but tokens (the report splits prompt and completion)
    for key in shared:
        assert entry.summary[key] == pytest.approx(pooled.row[key], nan_ok=True), key
    assert (entry.runs, len(entry.games), entry.errored) == (2, 6, 0)
    assert summarise(entry.games) == entry.summary


def test_the_complexity_split_uses_the_datasets_labels(runs):
    data = build_board([runs["random"]], BoardOptions(published=False, **FAST))
    record = _entry(data, "random")
    entry = entries_from_path(runs["random"])[0]
    labels = {s.id: s.complexity for s in load_dataset("paper")}
    assert labels["structure_001"] == "medium" and labels["structure_003"] == "complex"
    for label in ("simple", "medium", "complex"):
        values = [g.progress for g in entry.games if labels[g.structure] == label]
        assert record["split"][label] == pytest.approx(sum(values) / len(values))
    assert sum(1 for s in load_dataset("paper") if s.complexity == "simple") == 7


def test_tags_come_from_group_patterns_and_match_any_case(runs):
    options = BoardOptions(
        tags=[("baseline", "SCRIPTED*"), ("chaos", "rand?m"), ("none", "llama-*"), ("openai", "gpt-*")],
        **FAST,
    )
    data = build_board([runs["scripted"], runs["random"]], options)
    assert _entry(data, "scripted")["tags"] == ["baseline"]
    assert _entry(data, "random")["tags"] == ["chaos"]
    assert data["tags"] == ["baseline", "chaos", "frontier", "openai", "published"]
    assert _entry(data, "published/GPT-4o")["tags"] == ["published", "frontier", "openai"]


def test_the_same_directory_twice_gets_distinct_keys(runs):
    data = build_board([runs["scripted"], runs["scripted"]], BoardOptions(published=False, **FAST))
    assert [e["key"] for e in data["entries"]] == ["scripted", "scripted#2"]
    assert {e["label"] for e in data["entries"]} == {"scripted (scripted)", "scripted (scripted#2)"}


def test_paper_logs_are_read_through_the_import_path(runs, tmp_path):
    logs = tmp_path / "paper_logs"
    assert main(["export", str(runs["scripted"]), "--format", "paper", "-o", str(logs)]) == 0
    data = build_board([logs, runs["scripted"]], BoardOptions(published=False, **FAST))
    from_logs = next(e for e in data["entries"] if e["kind"] == "paper logs")
    ours = _entry(data, "scripted")
    assert from_logs["group"] == ours["group"]
    assert from_logs["m"]["progress"] == pytest.approx(ours["m"]["progress"])
    assert from_logs["games"] == ours["games"]


def test_judge_means_and_credit_are_columns_where_judges_were_run(runs, tmp_path):
    judged = tmp_path / "judged"
    shutil.copytree(runs["scripted"], judged)
    assert main(["judge", str(judged), "--judge-model", "engine", "--no-progress"]) == 0
    data = build_board([judged, runs["random"]], BoardOptions(published=False, **FAST))
    judges = _entry(data, "judged")["judges"]
    assert judges["model"] == "engine"
    for family in ("SG", "MM", "PS"):
        assert 0.0 <= judges[family] <= 1.0
    assert _entry(data, "random")["judges"] is None
    credit = _entry(data, "judged")["credit"]
    assert set(credit) == {"lambda_D1", "lambda_D2", "lambda_D3", "lambda_std"}
    assert sum(credit[f"lambda_D{k}"] for k in (1, 2, 3)) == pytest.approx(1.0)


# ------------------------------------------------------------------ entry files


def test_an_entry_file_round_trips(runs, tmp_path):
    path = tmp_path / "scripted.entry.json"
    assert main(["leaderboard", "--entry", str(runs["scripted"]), "-o", str(path)]) == 0
    text = path.read_text()
    assert str(tmp_path) not in text and str(runs["scripted"]) not in text  # no path of this machine
    data = json.loads(text)
    assert data["settings"]["prompt_version"] and data["settings"]["craft_env_version"]
    for record in data["files"]:
        file = runs["scripted"] / record["path"]
        assert hashlib.sha256(file.read_bytes()).hexdigest() == record["sha256"]
    assert {r["path"] for r in data["files"]} == {"config.json", "run_1/log.jsonl", "run_2/log.jsonl"}
    read = read_entry(path)
    original = entries_from_path(runs["scripted"])[0]
    assert read.games == original.games and read.behaviour == original.behaviour
    assert read.taxonomy == original.taxonomy and read.group == original.group
    from_dir = build_board([runs["scripted"]], BoardOptions(published=False, **FAST))["entries"][0]
    from_file = build_board([path], BoardOptions(published=False, **FAST))["entries"][0]
    for key in ("m", "split", "taxonomy", "behaviour", "credit", "rank", "ci", "games", "runs"):
        assert from_file[key] == from_dir[key], key
    assert from_file["kind"] == "entry file"


V1_ENTRY = Path(__file__).resolve().parent / "data" / "leaderboard-v1-random.entry.json"


def test_an_entry_file_of_version_1_still_reads_with_panic_empty(runs, tmp_path):
    """An entry written before panic was measured (the random team, by the previous release) keeps its
    numbers: panic is empty, never 0, and its teammate score is the one it was written with."""
    data = json.loads(V1_ENTRY.read_text())
    assert data["version"] == 1 and "panic_chances" not in data["behaviour"] and "panic" not in data["measures"]
    entry = read_entry(V1_ENTRY)
    assert (entry.behaviour.panic_chances, entry.behaviour.panics) == (0, 0)
    board = build_board([V1_ENTRY, runs["scripted"]], BoardOptions(**FAST))
    old = _entry(board, "random")
    assert old["behaviour"]["panic"] is None
    assert old["behaviour"]["teammate"] == pytest.approx(data["measures"]["teammate"])
    for name in ("chatter", "broken_record", "grounding", "recovery", "overthink"):
        assert old["behaviour"][name] == pytest.approx(data["measures"][name]), name
    text = board_markdown(board)
    header = "| Rank | Entry | Teammate | Chatter | Broken record | Panic | Grounding | Recovery | Overthink |"
    rows = text.split(header, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    assert next(r for r in rows if r.split(" | ")[1] == "random").split(" | ")[5] == "—"  # its Panic cell
    # a version 2 file must carry the panic counts
    current = tmp_path / "v2.entry.json"
    data["version"] = 2
    current.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"behaviour\.panic_chances: expected a count"):
        read_entry(current)


def _tampered(source: Path, tmp_path: Path, change) -> Path:
    data = json.loads(source.read_text())
    change(data)
    path = tmp_path / "tampered.entry.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["summary"].update(progress=d["summary"]["progress"] + 0.01), "summary.progress"),
        (lambda d: d["games"][0].update(progress=d["games"][0]["progress"] + 0.2), "summary.progress"),
        (lambda d: d["summary"].update(games=99), "summary.games"),
        (lambda d: d["group"].update(dataset="craft"), "group.dataset"),
        (lambda d: d["group"].update(protocol="craft"), "group.protocol"),
        (lambda d: d["group"].update(condition="no oracle · no tools · 6 turns"), "group.condition"),
        (
            lambda d: (d["group"].update(dataset="craft"), d["settings"].update(dataset="craft")),
            "games[0].structure",
        ),
        (lambda d: d["games"][0].update(complexity="simple"), "games[0].complexity"),
        (lambda d: d["settings"].update(protocol="chess"), "settings.protocol"),
        (lambda d: d["games"][1].update(progress="high"), "games[1].progress"),
        (lambda d: d["taxonomy"].update(correct=d["taxonomy"]["correct"] + 1), "taxonomy.turns"),
        (lambda d: d["measures"].update(chatter=0.123456), "measures.chatter"),
        (lambda d: d["behaviour"].update(stalls=-2), "behaviour.stalls"),
        (lambda d: d["measures"].update(panic=0.5), "measures.panic"),
        (lambda d: d["behaviour"].update(panic_chances=4, panics=1), "measures.panic"),
        (lambda d: d["behaviour"].update(panics=d["behaviour"]["panic_chances"] + 1), "behaviour.panics"),
        (lambda d: d["behaviour"].pop("panic_chances"), "behaviour.panic_chances"),
        (lambda d: d.update(format="something else"), "format"),
        (lambda d: d.update(version=3), "version"),
        (lambda d: d.update(version="2"), "version"),
    ],
)
def test_an_entry_file_that_does_not_add_up_is_refused_naming_the_field(runs, tmp_path, change, field):
    source = tmp_path / "good.entry.json"
    write_entry(runs["scripted"], source)
    path = _tampered(source, tmp_path, change)
    with pytest.raises(ValueError, match=re.escape(field)):
        read_entry(path)
    assert main(["leaderboard", str(path), "-o", str(tmp_path / "b.html")]) == 2


def test_entry_needs_one_directory_and_an_output(runs, tmp_path, capsys):
    assert main(["leaderboard", "--entry", str(runs["scripted"])]) == 2
    assert "--entry needs -o FILE" in capsys.readouterr().err
    assert main(["leaderboard", "--entry", str(runs["scripted"]), str(runs["random"]), "-o", "x.json"]) == 2
    assert main(["leaderboard", str(tmp_path / "missing"), "-o", str(tmp_path / "b.html")]) == 2
    assert "neither a directory nor an entry file" in capsys.readouterr().err
    assert (
        main(["leaderboard", str(runs["scripted"]), "--group", "nopattern", "-o", str(tmp_path / "b.html")])
        == 2
    )
    assert "--group: expected NAME=PATTERN" in capsys.readouterr().err


# ------------------------------------------------------------------ outputs and safety


def _data_block(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="board-data">(.*?)</script>', html, re.DOTALL)
    assert match, "the data block is missing"
    return json.loads(match.group(1))


def test_the_page_is_self_contained_and_runs_only_its_own_code(runs):
    html = render_board(build_board([runs["scripted"], runs["random"]], BoardOptions(**FAST)))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in policy
    script = re.search(r"<script>(.*?)</script>", html, re.DOTALL).group(1)
    style = re.search(r"<style>(.*?)</style>", html, re.DOTALL).group(1)
    for text in (script, style):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    assert "function craftDrawing(colours)" in script  # the replay page's drawing, shared, not copied
    assert set(re.findall(r"https?://[^\s\"')]+", html)) == {"http://www.w3.org/2000/svg"}
    for forbidden in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "eval(",
        "new Function",
        "document.write",
    ):
        assert forbidden not in script
    assert html.count("</script>") == 2
    assert _data_block(html)["entries"]


@pytest.fixture(scope="module")
def hostile(runs, tmp_path_factory) -> Path:
    """The scripted run with a hostile model name and director messages."""
    out = tmp_path_factory.mktemp("hostile") / "hostile"
    shutil.copytree(runs["scripted"], out)
    config = json.loads((out / "config.json").read_text())
    config["director_model"] = HOSTILE_MODEL
    (out / "config.json").write_text(json.dumps(config))
    for summary_path in out.glob("run_*/summary.json"):  # each run says the same (runs must agree to pool)
        summary = json.loads(summary_path.read_text())
        summary["director_model"] = HOSTILE_MODEL
        summary_path.write_text(json.dumps(summary))
    log = out / "run_1" / "log.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    for line in lines:
        for reply in line.get("director_responses") or []:
            reply["message"] = HOSTILE_MESSAGE
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return out


def test_hostile_model_names_and_messages_stay_text(hostile, tmp_path):
    data = build_board([hostile], BoardOptions(**FAST))
    assert _entry(data, "hostile")["name"] == HOSTILE_MODEL
    html = render_board(data)
    assert HOSTILE_MODEL not in html and "<img" not in html and "</script><script>" not in html
    assert html.count("</script>") == 2
    assert _entry(_data_block(html), "hostile")["name"] == HOSTILE_MODEL
    markdown = board_markdown(data)
    assert "<img" not in markdown and "</script>" not in markdown
    row = next(line for line in markdown.splitlines() if "onerror" in line)
    assert row.count(" | ") == next(
        line for line in markdown.splitlines() if line.startswith("| Rank")
    ).count(" | ")
    assert escape_cell("a|b<c>&`d`\n[e](f)") == r"a\|b&lt;c&gt;&amp;\`d\` \[e\](f)"
    out = tmp_path / "board.json"
    assert main(["leaderboard", str(hostile), "--format", "json", "-o", str(out)]) == 0
    assert _entry(json.loads(out.read_text()), "hostile")["name"] == HOSTILE_MODEL


def test_markdown_and_json_outputs(runs, tmp_path, capsys):
    md, js = tmp_path / "board.md", tmp_path / "board.json"
    assert (
        main(
            [
                "leaderboard",
                str(runs["scripted"]),
                str(runs["random"]),
                "--format",
                "md",
                "-o",
                str(md),
                "--samples",
                "500",
            ]
        )
        == 0
    )
    assert "Wrote 8 entries in 2 group(s)" in capsys.readouterr().out
    text = md.read_text()
    assert "## dataset paper · protocol paper · oracle 5 · no tools · 6 turns" in text
    assert "Gemini-3-Flash (published)" in text and "0.675 ± 0.052" in text
    header = "| Rank | Entry | Teammate | Chatter | Broken record | Panic | Grounding | Recovery | Overthink |"
    behaviour = text.split(header, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    assert sorted(line.split(" | ")[1] for line in behaviour) == ["random", "scripted"]  # no published row
    assert "(1 - panic)" in text
    assert (
        main(["leaderboard", str(runs["scripted"]), "--format", "json", "-o", str(js), "--no-published"]) == 0
    )
    data = json.loads(js.read_text())
    assert [e["key"] for e in data["entries"]] == ["scripted"]
    assert "panic" in data["measures"] and "panic" in data["entries"][0]["behaviour"]
    assert data["bootstrap"] == {"samples": 10_000, "seed": 0, "level": 0.95}
    assert not any(isinstance(v, float) and math.isnan(v) for v in data["entries"][0]["m"].values())


def test_structure_cards_link_to_the_replay_of_that_game(runs, tmp_path):
    output = tmp_path / "site" / "board.html"
    output.parent.mkdir()
    data = build_board(
        [runs["random"], runs["scripted"]],
        BoardOptions(with_replays=True, output=output, published=False, **FAST),
    )
    pages = sorted((tmp_path / "site" / "board-replays").glob("*.html"))
    assert [p.name for p in pages] == ["random.html", "scripted.html"]
    games = replay_data([runs["random"]])["games"]
    section = data["structures"][0]
    assert [c["key"] for c in section["cards"]] == ["structure_001", "structure_003", "structure_008"]
    for card in section["cards"]:
        assert card["picture"]["walls"] and card["picture"]["target"]
        result = next(r for r in card["results"] if r["entry"] == "random")
        link, fragment = result["replay"].split("#")
        assert link == "board-replays/random.html"
        g = int(re.match(r"g=(\d+)&t=1$", fragment).group(1))
        assert games[g]["sid"] == card["key"] and games[g]["run"].endswith("run_1")
    given = build_board(
        [runs["random"]],
        BoardOptions(replays={str(runs["random"]): str(pages[0])}, output=output, published=False, **FAST),
    )
    assert given["structures"][0]["cards"][0]["results"][0]["replay"] == "board-replays/random.html#g=0&t=1"
    with pytest.raises(ValueError, match="--replay"):
        build_board(
            [runs["random"]], BoardOptions(replays={str(tmp_path): "x.html"}, published=False, **FAST)
        )

"""Fault probes of issue 26: what a hostile file, model or command line does to craft-env, before and after.

Run from the repository root, with a checkout of the code to compare with::

    python benchmarks/probe_faults.py --baseline ../other-checkout/src [--probes index,cap,...]

Each probe runs in a child process per source tree (``PYTHONPATH`` set to
the tree's ``src``), so a memory bomb or a traceback in the baseline cannot
take the probe down; children of the paper-log probes run under
``RLIMIT_AS`` (2 GiB). The table gives, per probe, what the baseline and
this tree did: exit status, time, the child's peak resident memory, and the
probe's own measure. Offline: models are stand-in litellm providers.
docs/robustness.md quotes a run of this script.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
LIMIT = 2 * 2**30

# Each probe is Python run in a child with ``sys.argv[1]`` a scratch folder; it prints one JSON line.
PRELUDE = """
import json, os, sys, resource, io, contextlib
sys.path.insert(0, TESTS)
scratch = sys.argv[1]
def cli(*argv):
    from craft_env.cli import main
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    except BaseException as error:
        code = type(error).__name__
    return code, out.getvalue(), err.getvalue()
def report(code, measure):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"exit": code, "measure": measure, "peak_mib": peak}), file=sys.__stdout__, flush=True)
"""

PROBES = {
    "index": ("paper log with structure_index 3,000,000 (import)", """
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from paper_log_samples import paper_log, write_log
path = write_log(__import__("pathlib").Path(scratch) / "bomb.json", paper_log(structure_index=3_000_000))
code, out, err = cli("import", str(path), "-o", os.path.join(scratch, "out"))
report(code, "traceback" if "Traceback" in err or code == "MemoryError"
       else err.strip().split(": ", 2)[-1][:70] if err.strip() else "no error")
"""),
    "one_bad": ('a good and a bad (num_oracle {"n": 5}) log in one folder (import)', """
from pathlib import Path
from paper_log_samples import paper_log, write_log
write_log(Path(scratch) / "in" / "a.json", paper_log())
write_log(Path(scratch) / "in" / "b.json", paper_log(num_oracle={"n": 5}))
code, out, err = cli("import", str(Path(scratch) / "in"), "-o", os.path.join(scratch, "out"))
games = sum(1 for _ in Path(scratch, "out").rglob("log.jsonl"))
report(code, f"{games} run log(s) written")
"""),
    "at_limit": ("16 MiB log of empty objects, the worst at the size limit (import)", """
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from pathlib import Path
head, tail = '{"games": [', '{}]}'
count = (16 * 2**20 - len(head) - len(tail) - 64) // 3
Path(scratch, "big.json").write_text(head + "{}," * count + tail)
code, out, err = cli("import", str(Path(scratch, "big.json")), "-o", os.path.join(scratch, "out"))
report(code, "traceback" if "Traceback" in err or code == "MemoryError"
       else err.strip().split(": ", 2)[-1][:70] if err.strip() else "no error")
"""),
    "cap": ("--max-cost 0.05, 20 games at --concurrency 20: spend / cap", """
import asyncio
from pathlib import Path
from craft_env.models.llm import import_litellm
from craft_env.eval.run.provider import request_context, scripted_reply
from fake_providers import install
litellm = import_litellm()
class Metered(litellm.CustomLLM):
    async def acompletion(self, model, messages, *args, **kwargs):
        for _ in range(20):
            await asyncio.sleep(0)
        text = scripted_reply("scripted/team", messages, request_context(kwargs))
        prompt = litellm.token_counter(model=model, messages=messages)
        response = litellm.ModelResponse(model=model, choices=[{"message": {"role": "assistant", "content": text}}],
                                         usage={"prompt_tokens": prompt, "completion_tokens": 100, "total_tokens": prompt + 100})
        response._hidden_params = {"response_cost": prompt * 1e-5 + 100 * 2e-5}
        return response
install("metered", Metered())
out = Path(scratch, "run")
args = ["run", "--out", str(out), "--director-model", "metered/m", "--builder-model", "metered/m", "--max-tokens", "100",
        "--max-cost", "0.05", "--structures", "all", "--turns", "2", "--concurrency", "20", "--no-progress", "--no-plots"]
from craft_env import cli as command_line
parser = getattr(command_line, "build_parser", None) or getattr(command_line, "_parser")
if not parser().parse_known_args(["run", "--price-per-token", "1e-5,2e-5"])[1]:
    args += ["--price-per-token", "1e-5,2e-5"]  # a tree that knows the flag: litellm has no price for the stand-in
code, _, err = cli(*args)
spent = sum(json.loads(line)["cost"] for line in (out / "cache.jsonl").read_text().splitlines())
report(code, f"${spent:.4f} = {spent / 0.05:.2f} x the cap")
"""),
    "negation": ("negation table: refusals not played, look-alikes played", """
import test_negation as t
refused = sum(t._plays(x) is None for x in t.REFUSALS)
played = sum(t._plays(x) == m for x, m in t.AFFIRMATIVES)
report(0, f"{refused}/{len(t.REFUSALS)} refusals, {played}/{len(t.AFFIRMATIVES)} look-alikes")
"""),
    "symlink": ("lock path a symbolic link to another file (run --resume)", """
from pathlib import Path
victim = Path(scratch, "victim.txt"); victim.write_text("precious\\n")
out = Path(scratch, "run")
cli("run", "--out", str(out), "--structures", "0", "--turns", "1", "--no-progress", "--no-plots")
(out / ".craft-env.lock").unlink()
(out / ".craft-env.lock").symlink_to(victim)
code, _, err = cli("run", "--resume", "--out", str(out), "--no-progress", "--no-plots")
report(code, "victim intact" if victim.read_text() == "precious\\n"
                  else f"victim now {victim.read_text()!r}")
"""),
    "runs": ("--runs 100000000000 (time to the first line)", """
import threading
threading.Timer(20, lambda: (report("killed", "still building after 20 s"), os._exit(0))).start()
code, _, err = cli("run", "--runs", "100000000000", "--out", os.path.join(scratch, "run"), "--no-progress")
report(code, err.strip()[:60])
os._exit(0)
"""),
    "surrogate": ("director reply holding \\\\ud800: replay, transcript, judge", """
from pathlib import Path
from craft_env.models.llm import import_litellm
from craft_env.eval.run.provider import request_context, scripted_reply
from fake_providers import install
litellm = import_litellm()
class Odd(litellm.CustomLLM):
    async def acompletion(self, model, messages, *args, **kwargs):
        json.dumps(messages, ensure_ascii=False).encode("utf-8")
        text = scripted_reply("scripted/team", messages, request_context(kwargs)).replace("</message>", " \\ud800</message>")
        return litellm.ModelResponse(model=model, choices=[{"message": {"role": "assistant", "content": text}}])
install("odd", Odd())
out = Path(scratch, "run")
cli("run", "--out", str(out), "--director-model", "odd/m", "--builder-model", "odd/m", "--structures", "0",
    "--turns", "2", "--no-progress", "--no-plots")
codes = [cli("replay", str(out), "-o", str(out / "r.html"))[0],
         cli("transcript", str(out), "--game", "0", "-o", str(out / "t.md"))[0],
         cli("judge", str(out), "--judge-model", "odd/j", "--judges", "sg", "--no-progress", "--num-retries", "0")]
failed = codes[2][1].count(" 0 failed")
report(0, f"replay {codes[0]}, transcript {codes[1]}, judge calls failing: {'no' if failed else 'yes'}")
"""),
    "escape": ("transcript of a message holding ESC]0;...BEL and ESC[2J", """
from pathlib import Path
from craft_env.models.llm import import_litellm
from craft_env.eval.run.provider import request_context, scripted_reply
from fake_providers import install
litellm = import_litellm()
class Esc(litellm.CustomLLM):
    async def acompletion(self, model, messages, *args, **kwargs):
        text = scripted_reply("scripted/team", messages, request_context(kwargs)).replace("</message>", "\\x1b]0;t\\x07\\x1b[2J</message>")
        return litellm.ModelResponse(model=model, choices=[{"message": {"role": "assistant", "content": text}}])
install("esc", Esc())
out = Path(scratch, "run")
cli("run", "--out", str(out), "--director-model", "esc/m", "--builder-model", "esc/m", "--structures", "0", "--turns", "1",
    "--no-progress", "--no-plots")
code, shown, _ = cli("transcript", str(out), "--game", "0")
report(code, f"{shown.count(chr(27))} raw ESC on the terminal")
"""),
    "disk": ("a full 24 KiB tmpfs during a run (root only), then a resume elsewhere", """
import shutil, subprocess
from pathlib import Path
disk = Path(scratch, "disk"); disk.mkdir()
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", str(disk)], check=False).returncode:
    report("skipped", "cannot mount a tmpfs here")
    sys.exit(0)
try:
    out = disk / "run"
    code, _, err = cli("run", "--out", str(out), "--director-model", "scripted/team", "--builder-model",
                       "scripted/team", "--structures", "0,1", "--runs", "2", "--turns", "2", "--concurrency", "2",
                       "--no-progress", "--no-plots")
    tracebacks = err.count("Traceback") + (1 if code in ("OSError", "LogWriteError") else 0)
    left = [p.name for p in out.rglob("*.tmp")]
    resume_line = "--resume --out" in err
    shutil.copytree(out, Path(scratch, "moved"))
finally:
    subprocess.run(["umount", str(disk)], check=False)
again, _, _ = cli("run", "--resume", "--out", str(Path(scratch, "moved")), "--no-progress", "--no-plots")
report(code, f"{tracebacks} traceback(s), temporaries left {left}, resume line {resume_line}, resume exit {again}")
"""),
    "specs": ("game specs of --runs 1000 (seconds to build)", """
import time
from craft_env.eval.run.settings import RunSettings
from craft_env.eval.run import runner
settings = RunSettings(out=os.path.join(scratch, "x"), runs=1000)
start = time.perf_counter()
if hasattr(runner, "all_game_specs"):
    count = sum(map(len, runner.all_game_specs(settings).values()))
else:
    count = sum(len(runner.game_specs(settings, run)) for run in range(1, 1001))
report(0, f"{count} games in {time.perf_counter() - start:.1f} s")
"""),
}


def run_probe(tree: Path, code: str) -> dict:
    """One probe in a child process over ``tree``: its JSON line, exit status, seconds and peak RSS (MiB)."""
    scratch = tempfile.mkdtemp(prefix="probe-")
    env = dict(os.environ, PYTHONPATH=str(tree))
    started = time.perf_counter()
    prelude = f"TESTS = {str(TESTS)!r}\n" + PRELUDE
    child = subprocess.Popen([sys.executable, "-c", prelude + code, scratch], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    stdout, stderr = child.communicate(timeout=1800)
    seconds = time.perf_counter() - started
    shutil.rmtree(scratch, ignore_errors=True)
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    result = json.loads(lines[-1]) if lines else {"exit": child.returncode, "measure": stderr.strip()[-80:],
                                                  "peak_mib": float("nan")}
    result["seconds"] = seconds
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="the src folder of the checkout to compare with")
    parser.add_argument("--probes", default=",".join(PROBES), help="comma-separated probe names")
    args = parser.parse_args()
    trees = {"baseline": Path(args.baseline).resolve(), "this tree": ROOT / "src"}
    print("| probe | tree | exit | s | peak MiB | measure |")
    print("|---|---|---|---|---|---|")
    for name in args.probes.split(","):
        title, code = PROBES[name]
        for label, tree in trees.items():
            result = run_probe(tree, code.replace("{limit}", str(LIMIT)))
            print(f"| {title} | {label} | {result['exit']} | {result['seconds']:.1f} | {result['peak_mib']:.0f} "
                  f"| {result['measure']} |", flush=True)


if __name__ == "__main__":
    main()

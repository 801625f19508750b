"""The paper's SG/MM/PS judges, with any model or the engine (docs/judges.md).

* ``questions``: the questions as data (code, wording, fields read);
* ``items``: judged items built from run logs;
* ``prompts`` and ``parse``: what a judge model is asked and how its reply is read;
* ``engine``: exact answers from the rules, offline (``--judge-model engine``);
* ``run``: ``craft-env judge``, resumable, through the runner's model client;
* ``scoring``, ``agreement`` and ``tables``: scores, judge-vs-judge agreement, report tables.

Nothing heavy is imported here.
"""

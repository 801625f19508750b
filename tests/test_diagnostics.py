"""Credit λ, outcome and remove rates, statistics and the report's judge tables, on hand-built logs."""

from __future__ import annotations

import math

import pytest
from judge_logs import turn_record, write_run

from craft_env.eval.results.diagnostics import credit_lambda, outcome_rates, remove_rates
from craft_env.eval.judges.agreement import agreement
from craft_env.eval.results.stats import mean_sem, pearson, spearman, weighted_kappa
from craft_env.eval.results.taxonomy import taxonomy

OFFER = ["place rs (0,2) L0"]
SAID = {"D1": "Nothing to add from me.", "D2": "put a small red block on my left column, bottom layer"}


def credited(followed, *, oracle=True, correct=True):
    return turn_record(1, SAID, followed=followed, offered=OFFER if oracle else None,
                       followed_oracle=oracle and correct)


def test_lambda_keeps_every_named_seat_and_filters_degenerate_credits():
    turns = [
        credited(["D3", "D2"]),  # two seats: a half each
        credited(["D1"]),
        credited(["D1"]),
        credited(["D2", "D3", "D1"]),  # every seat: degenerate
        credited([]),  # no seat: degenerate
        credited(["D1", "D9"]),  # an unknown seat: degenerate
        credited(["D2"], correct=False),  # oracle offered, builder played something else: not counted
        credited(["D2"], oracle=False),  # no oracle: not counted
    ]
    row = credit_lambda(turns)
    assert row["total"] == 8 and row["oracle"] == 6 and row["filtered"] == 3
    assert row["lambda_D1"] == pytest.approx(2 / 3)
    assert row["lambda_D2"] == pytest.approx(0.5 / 3) and row["lambda_D3"] == pytest.approx(0.5 / 3)
    assert row["lambda_D1"] + row["lambda_D2"] + row["lambda_D3"] == pytest.approx(1.0)
    assert row["oracle_rate"] == pytest.approx(6 / 8) and row["degenerate_rate"] == pytest.approx(3 / 6)
    mean = 1 / 3
    spread = ((2 / 3 - mean) ** 2 + 2 * (1 / 6 - mean) ** 2) / 3
    assert row["lambda_std"] == pytest.approx(math.sqrt(spread))


def test_lambda_reads_a_lone_string_credit_and_is_nan_without_oracle_turns():
    record = credited([])
    record["builder"]["followed"] = "D2"
    assert credit_lambda([record])["lambda_D2"] == 1.0
    empty = credit_lambda([credited(["D1"], oracle=False)])
    assert empty["oracle"] == 0 and math.isnan(empty["lambda_D1"]) and math.isnan(empty["degenerate_rate"])


def test_lambda_from_a_written_log_with_multi_seat_credits(tmp_path):
    from craft_env.eval.report.report import load_results

    out = write_run(tmp_path / "out", [[credited(["D3", "D2"]), credited(["D2"])]])
    (result,) = load_results([out])
    from craft_env.eval.results.diagnostics import diagnostics_row

    row = diagnostics_row(result.games)["lambda"]
    assert row["lambda_D2"] == pytest.approx(0.75) and row["lambda_D3"] == pytest.approx(0.25)


def test_outcome_and_remove_rates():
    turns = [
        turn_record(1, SAID, offered=OFFER, followed_oracle=True, remove_prescribed=True),
        turn_record(2, SAID, offered=OFFER, followed_oracle=False, remove_attempted=True),
        turn_record(3, SAID, offered=None, remove_attempted=True),
        turn_record(4, SAID, offered=None),
    ]
    rates = outcome_rates(turns)
    assert rates == {"turns": 4, "available": 0.5, "followed": 0.25, "rejected": 0.25, "no_oracle": 0.5}
    removes = remove_rates(turns)
    assert removes["orc_remove"] == 0.25 and removes["att_remove"] == 0.5 and removes["gap"] == 0.25
    assert math.isnan(remove_rates([])["gap"]) and math.isnan(outcome_rates([])["available"])


def test_taxonomy_is_nan_when_no_turn_offered_the_oracle():
    found = taxonomy([turn_record(1, SAID, offered=None)])
    assert found["turns"] == 0 and all(math.isnan(found[k]) for k in ("correct", "layer", "other"))


def test_mean_sem_pearson_spearman_by_hand():
    mean, sem = mean_sem([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5 and sem == pytest.approx(math.sqrt((2.25 + 0.25 + 0.25 + 2.25) / 3 / 4))
    assert math.isnan(mean_sem([1.0])[1])
    x, y = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]
    r, p = pearson(x, y)
    assert r == pytest.approx(0.8)  # cov 1.0 over var 1.25: 1.0 / 1.25
    rho, p_rho = spearman(x, y)
    assert rho == pytest.approx(0.8)  # 1 - 6 * 2 / (4 * 15)
    assert 0.0 < p < 1.0 and 0.0 < p_rho <= 1.0
    assert spearman([1.0, 2.0, 3.0], [3.0, 2.0, 1.0])[0] == pytest.approx(-1.0)
    assert all(math.isnan(v) for v in pearson([1.0, 2.0], [2.0, 1.0]))
    assert math.isnan(pearson([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])[0])
    assert math.isnan(pearson([1.0, float("nan"), 2.0, 3.0], [1.0, 5.0, 2.0, 9.0])[0]) is False


def test_weighted_kappa_by_hand():
    assert weighted_kappa([0, 1, 2], [0, 1, 2], 3) == pytest.approx(1.0)
    # a = [0, 0, 2, 2], b = [0, 2, 2, 0]: observed mean weight 0.5; marginals (2,0,2) each:
    # expected = sum_ij p_i q_j |i-j|/2 = 2 * (0.5 * 0.5 * 1) = 0.5, so kappa = 1 - 0.5 / 0.5 = 0.
    assert weighted_kappa([0, 0, 2, 2], [0, 2, 2, 0], 3) == pytest.approx(0.0)
    # a = [0, 1, 2, 2], b = [0, 2, 2, 1]: observed (0 + 0.5 + 0 + 0.5) / 4 = 0.25;
    # p = (1/4, 1/4, 2/4), q = (1/4, 1/4, 2/4): expected = 2 * (1/16 * 0.5 + 2/16 * 1 + 2/16 * 0.5) = 0.4375.
    assert weighted_kappa([0, 1, 2, 2], [0, 2, 2, 1], 3) == pytest.approx(1 - 0.25 / 0.4375)
    assert math.isnan(weighted_kappa([2, 2], [2, 2], 3))
    found = agreement([("Yes", "Yes"), ("No", "Unclear"), ("N/A", "Unclear"), ("Yes", "No")])
    assert found["pairs"] == 4 and found["exact"] == 0.25


def test_report_adds_team_and_judge_tables(tmp_path):
    from craft_env.eval.judges.run import JudgeSettings, judge
    from craft_env.eval.report.report import markdown, write_report

    dirs = []
    for k, progress in enumerate((0.2, 0.5, 0.9)):
        turns = [credited(["D2"]), turn_record(2, SAID, offered=OFFER, progress=progress,
                                              remove_attempted=k == 0)]
        dirs.append(write_run(tmp_path / f"out{k}", [turns]))
        judge(JudgeSettings(path=str(dirs[-1]), judge_model="engine"))
    results, target = write_report(dirs, tmp_path / "report", plots=True)
    text = markdown(results)
    for title in ("Credit λ", "Outcome rates", "Remove rates", "Judge scores per question",
                  "PS by oracle followed", "Correlation with final progress"):
        assert title in text
    assert "remove gap" in text and "overall MM" in text
    assert (target / "diagnostics.json").exists()
    assert {p.name for p in (target / "plots").iterdir()} >= {"outcomes.png", "lambda.png", "judges.png"}


def test_report_shows_judge_agreement_between_two_models(tmp_path):
    from craft_env.eval.judges.run import JudgeSettings, judge
    from craft_env.eval.report.report import load_results, markdown

    out = write_run(tmp_path / "out", [[credited(["D2"])]])
    judge(JudgeSettings(path=str(out), judge_model="engine", families=("PS",)))
    judge(JudgeSettings(path=str(out), judge_model="openai/fake", families=("PS",)),
          client_options={"extra": {"mock_response": '{"PS1": "Yes", "PS2": "No", "PS3": "Yes"}'}})
    text = markdown(load_results([out]))
    assert "Judge agreement" in text and "engine vs openai/fake" in text

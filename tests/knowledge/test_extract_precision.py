"""``eval extraction``'s precision: the seeded sample, the judgements file, and how facts count."""

import json

from mnemoscope.app.cli import main
from mnemoscope.engine.eval.extraction import JUDGEMENTS, evaluate, judged_precision, sampled_facts

from .conftest import CONVERSATION


def locomo_file(tmp_path, sample_id="conv-26"):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{**CONVERSATION, "sample_id": sample_id}]), encoding="utf-8")
    return path


def test_the_sample_is_fixed_and_covers_the_demo_and_the_conversation(tmp_path):
    path = locomo_file(tmp_path)
    first = sampled_facts(path)
    assert first == sampled_facts(path)
    sources = {f["source"] for f in first}
    assert "conv-26" in sources and any(s.endswith(".md") for s in sources)


def test_only_produced_judged_facts_count_and_unjudged_ones_are_listed(tmp_path):
    path = locomo_file(tmp_path)
    produced = sampled_facts(path)
    gone = {"source": "sourdough-baking.md", "key": "0", "fact": "Tip the —[dough]→ onto a counter"}
    judgements = [{**produced[0], "judgement": "good"}, {**produced[1], "judgement": "bad"}, {**gone, "judgement": "bad"}]
    file = tmp_path / "judged.json"
    file.write_text(json.dumps(judgements), encoding="utf-8")
    result = judged_precision(path, file)
    assert (result["good"], result["bad"], result["no_longer_produced"], result["precision"]) == (1, 1, 1, 0.5)
    assert result["unjudged"] == produced[2:]


def test_precision_is_reported_only_for_the_file_the_judgements_are_of(tmp_path, capsys):
    assert "precision" in evaluate(locomo_file(tmp_path))
    assert "precision" not in evaluate(locomo_file(tmp_path, "conv-99"))
    assert main(["eval", "extraction", str(locomo_file(tmp_path))]) == 0
    assert "fact precision" in capsys.readouterr().out


def test_the_stored_judgements_are_well_formed():
    judgements = json.loads(JUDGEMENTS.read_text(encoding="utf-8"))
    keys = [(j["source"], j["key"], j["fact"]) for j in judgements]
    assert len(keys) == len(set(keys)) >= 120
    assert {j["judgement"] for j in judgements} == {"good", "bad"}
    assert all("—[" in j["fact"] and "]→" in j["fact"] for j in judgements)

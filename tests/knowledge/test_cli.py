"""The knowledge commands: JSON listings, curation with --dry-run, errors as one line and exit 2."""

import json

import pytest

from mnemoscope.app.cli import main

from .conftest import CONVERSATION


@pytest.fixture
def store(tmp_path, conversation_file, capsys):
    path = str(tmp_path / "cli.db")
    assert main(["--store", path, "ingest", str(conversation_file)]) == 0
    capsys.readouterr()
    return path


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_listings_print_json_lists(store, capsys):
    facts = run_json(capsys, "--store", store, "facts", "--json")
    assert facts and {"subject", "predicate", "object", "time", "provenance"} <= set(facts[0])
    entities = run_json(capsys, "--store", store, "entities", "--json")
    assert entities[0]["name"] in ("Caroline", "Melanie")
    episodes = run_json(capsys, "--store", store, "episodes", "--source", "1", "--json")
    assert len(episodes) == 2 and {"summary", "events", "provenance"} <= set(episodes[0])
    melanie = run_json(capsys, "--store", store, "facts", "--entity", "Melanie", "--json")
    assert melanie and all("Melanie" in (f["subject"] + f["object"]) for f in melanie)


def test_recall_lite_with_ppr(store, capsys):
    out = run_json(capsys, "--store", store, "recall", "charity race", "--mode", "lite", "--strategy", "ppr", "--json")
    assert out["hits"] == [] and out["episodes"] and out["facts"] and out["graph"]["seeds"]


def test_curation_dry_run_changes_nothing(store, capsys):
    fact = run_json(capsys, "--store", store, "facts", "--json")[0]
    report = run_json(capsys, "--store", store, "fact", "delete", str(fact["id"]), "--dry-run", "--json")
    assert report["facts_deleted"] == 1
    assert any(f["id"] == fact["id"] for f in run_json(capsys, "--store", store, "facts", "--json"))
    assert main(["--store", store, "fact", "delete", str(fact["id"])]) == 0
    assert "changed" in capsys.readouterr().out
    assert not any(f["id"] == fact["id"] for f in run_json(capsys, "--store", store, "facts", "--json"))


def test_a_fact_added_by_hand_is_listed_with_its_items(store, capsys):
    item = run_json(capsys, "--store", store, "facts", "--json")[0]["provenance"][0]
    argv = ["--store", store, "fact", "add", "Caroline", "volunteers at", "the animal shelter", "--item", str(item)]
    assert run_json(capsys, *argv, "--dry-run", "--json") == {"facts_added": 1, "fact": None}
    assert main([*argv, "--dry-run"]) == 0  # the text names no id a dry run has not made
    assert capsys.readouterr().out == "would change: facts_added 1\n"
    assert not [f for f in run_json(capsys, "--store", store, "facts", "--json") if f["object"] == "the animal shelter"]
    fact_id = run_json(capsys, *argv, "--time", "2023-05-20", "--json")["fact"]
    added = [f for f in run_json(capsys, "--store", store, "facts", "--json") if f["id"] == fact_id]
    assert added and added[0]["origin"] == "user" and added[0]["provenance"] == [item] and added[0]["time"] == "2023-05-20"
    assert main(argv) == 2  # the same fact again
    assert "already fact" in capsys.readouterr().err
    assert main(["--store", store, "fact", "add", "Caroline", "likes", "tea", "--item", str(item), "--time", "soon"]) == 2
    assert capsys.readouterr().err.strip() == "mnemoscope: error: time 'soon' is not an ISO date such as 2023-05-20"
    assert main(["--store", store, "fact", "edit", str(fact_id), "--time", "soon"]) == 2
    assert "not an ISO date" in capsys.readouterr().err
    assert main(["--store", store, "fact", "add", "Caroline", "likes", "tea", "--item", "99999"]) == 2
    assert capsys.readouterr().err.strip() == "mnemoscope: error: a fact needs stored items as provenance; no item with id 99999"


def test_entities_are_merged_by_name_or_id(store, capsys):
    ids = {e["name"]: e["id"] for e in run_json(capsys, "--store", store, "entities", "--json")}
    report = run_json(capsys, "--store", store, "entity", "merge", "melanie", "Mel", "--dry-run", "--json")
    assert (report["kept"], report["removed"]) == ("Melanie", "Mel")
    assert run_json(capsys, "--store", store, "entity", "merge", str(ids["Melanie"]), "the Mel", "--json")["mentions_moved"] == 1
    assert "Mel" not in {e["name"] for e in run_json(capsys, "--store", store, "entities", "--json")}
    assert main(["--store", store, "entity", "merge", "Melanie", "Mela"]) == 2
    assert capsys.readouterr().err.strip() == "mnemoscope: error: no entity is named 'Mela'"


def test_errors_are_one_line_and_exit_2(store, capsys):
    assert main(["--store", store, "fact", "delete", "9999"]) == 2
    assert capsys.readouterr().err.strip() == "mnemoscope: error: no fact with id 9999"
    assert main(["--store", store, "episode", "split", "1"]) == 2
    assert "no merged episode" in capsys.readouterr().err


def test_eval_extraction_reports_recall(tmp_path, capsys):
    sample = dict(CONVERSATION)
    sample["observation"] = {"session_1_observation": {
        "Caroline": [["Caroline ran a charity race last Saturday.", "D1:1"],
                     ["Caroline went to an LGBTQ support group in Boston.", "D1:3"]]}}
    sample["event_summary"] = {"events_session_1": {"Caroline": ["Caroline runs a charity race."], "Melanie": [],
                                                    "date": "25 May, 2023"}}
    path = tmp_path / "annotated.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    out = run_json(capsys, "eval", "extraction", str(path), "--json")
    obs = out["observations"]
    assert (obs["gold"], obs["found"], obs["subject_ok"]) == (2, 2, 1.0) and obs["mean_coverage"] >= 0.5
    assert out["entities"]["recall"] == 1.0 and out["events"]["found"] == 1

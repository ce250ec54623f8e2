"""The benchmark commands' JSON shapes, on tiny fixtures (and the demo conversation)."""

import io
import json
from pathlib import Path

import pytest

from mnemoscope.app.cli import main
from mnemoscope.engine import Memory
from mnemoscope.engine.eval.bench import DEFAULT_DATA
from mnemoscope.engine.eval.metrics import mrr_at, ndcg_at, percentile, recall_at

ROOT = Path(__file__).resolve().parents[2]
TIMING = {"index_ms_per_item", "query_ms_p50", "query_ms_p95"}


def run_json(*argv):
    out = io.StringIO()
    assert main(list(argv), out) == 0
    return json.loads(out.getvalue())


def check_eval_shape(result, dataset, strategy, n):
    assert {"dataset", "strategy", "n_questions", "metrics", "by_category", "timing", "baselines"} <= result.keys()
    assert (result["dataset"], result["strategy"], result["n_questions"]) == (dataset, strategy, n)
    assert set(result["timing"]) == TIMING
    base = result["baselines"]["bm25"]
    assert set(base["metrics"]) == set(result["metrics"]) and set(base["timing"]) == TIMING
    assert all(0.0 <= v <= 1.0 for v in result["metrics"].values())


def test_eval_locomo_on_the_demo_conversation():
    demo = ROOT / "assets" / "demo" / "conversation.json"
    result = run_json("eval", "locomo", str(demo), "--strategy", "hybrid", "--baseline", "bm25", "--json")
    check_eval_shape(result, "locomo", "hybrid", 43)
    assert set(result["metrics"]) == {"recall@5", "recall@10", "ndcg@10", "mrr@10"}
    assert sum(c["n"] for c in result["by_category"].values()) == 43
    assert result["metrics"]["recall@10"] > 0.5  # the demo's questions are answerable by word overlap


def test_eval_miracl_layout_with_perturbations(tmp_path):
    docs = [("d1", "서울", "서울은 대한민국의 수도이다."), ("d2", "부산", "부산은 항구 도시이다."), ("d3", "한강", "한강은 서울을 흐른다.")]
    (tmp_path / "corpus.jsonl").write_text("\n".join(json.dumps({"docid": d, "title": t, "text": x}, ensure_ascii=False)
                                                     for d, t, x in docs), encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text('{"qid": "1", "text": "대한민국의 수도는?"}\n{"qid": "2", "text": "항구 도시"}\n', encoding="utf-8")
    (tmp_path / "qrels.tsv").write_text("1 0 d1 1\n2 0 d2 1\n2 0 d3 0\n", encoding="utf-8")
    (tmp_path / "perturbations").mkdir()
    (tmp_path / "perturbations" / "spacing.jsonl").write_text('{"qid": "1", "axis": "spacing", "text": "대한민국의수도는?"}\n', encoding="utf-8")
    result = run_json("eval", "miracl", str(tmp_path), "--strategy", "bm25", "--baseline", "bm25", "--json")
    check_eval_shape(result, "miracl-ko", "bm25", 2)
    assert result["metrics"]["hit@5"] == 1.0
    spacing = result["perturbations"]["spacing"]
    assert spacing["n"] == 1 and spacing["delta"]["hit@5"] == 0.0  # bigrams across the space still match


def test_eval_multihop_counts_titles(tmp_path):
    corpus = [{"title": "Alpha", "text": "Alpha is a town on the river Beta."},
              {"title": "Beta", "text": "The river Beta rises in the Gamma mountains."},
              {"title": "Delta", "text": "Delta is unrelated cooking text."}]
    questions = [{"id": "q1", "question": "Where does the river of Alpha rise?", "answer": "Gamma",
                  "supporting_titles": ["Alpha", "Beta"]}]
    (tmp_path / "x_corpus.json").write_text(json.dumps(corpus), encoding="utf-8")
    (tmp_path / "x_questions.json").write_text(json.dumps(questions), encoding="utf-8")
    result = run_json("eval", "multihop", str(tmp_path / "x_corpus.json"), "--strategy", "hybrid", "--baseline", "bm25", "--json")
    check_eval_shape(result, "x", "hybrid", 1)
    assert result["metrics"]["recall@2"] == 1.0


@pytest.mark.skipif(not DEFAULT_DATA.exists(), reason="LoCoMo dev data not in ../shared/data")
def test_bench_shape_and_the_store_it_keeps(tmp_path, capsys):
    kept = tmp_path / "kept.db"
    result = run_json("bench", "--items", "300", "--queries", "5", "--strategies", "bm25,hybrid", "--core",
                      "--keep", str(kept), "--json")
    assert {"items", "ingest_ms_per_item", "recall_ms", "peak_rss_mb", "baselines"} <= result.keys()
    assert result["items"] == 300 and set(result["recall_ms"]) == {"bm25", "hybrid"}
    assert all({"p50", "p95"} <= set(t) and t["p50"] <= t["p95"] for t in result["recall_ms"].values())
    assert set(result["baselines"]["rank_bm25"]) == {"index_ms_per_item", "query_ms_p50"}
    assert kept.stat().st_mode & 0o777 == 0o600  # the kept copy is private like the store
    with Memory(kept, extensions=False) as mem:
        assert mem.index.n_items == 300
    assert main(["bench", "--items", "300", "--core", "--keep", str(kept)], io.StringIO()) == 2  # never overwritten
    assert "already exists" in capsys.readouterr().err



def test_bench_refuses_a_keep_path_before_it_starts(tmp_path, capsys):
    """A folder that does not exist, or a file left beside the name (an old store's -wal), is
    refused at once with one line, not after the run."""
    assert main(["bench", "--items", "300", "--core", "--keep", str(tmp_path / "missing" / "kept.db")], io.StringIO()) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "kept.db-wal").write_bytes(b"an old store's log")
    assert main(["bench", "--items", "300", "--core", "--keep", str(tmp_path / "kept.db")], io.StringIO()) == 2
    assert "already exists" in capsys.readouterr().err
    assert not (tmp_path / "kept.db").exists()

def test_metrics_by_hand():
    ranked, relevant = ["a", "x", "b", "y"], {"a", "b", "c"}
    assert recall_at(ranked, relevant, 2) == pytest.approx(1 / 3)
    assert mrr_at(["x", "a"], relevant, 10) == 0.5
    ideal = 1 + 1 / 1.5849625007211562 + 0.5
    assert ndcg_at(ranked, relevant, 10) == pytest.approx((1 + 0.5) / ideal)
    assert percentile([1, 2, 3, 4], 0.5) == 2.5


def test_eval_locomo_paraphrases_side_by_side(tmp_path):
    demo = ROOT / "assets" / "demo" / "conversation.json"
    sample = json.loads(demo.read_text(encoding="utf-8"))[0]
    reworded = [{"sample_id": sample["sample_id"], "qa_index": 0, "paraphrase": "What is Maya's pup called?"},
                {"sample_id": sample["sample_id"], "qa_index": 1, "paraphrase": "Which breed is Pepper?"}]
    path = tmp_path / "paraphrases.json"
    path.write_text(json.dumps(reworded), encoding="utf-8")
    result = run_json("eval", "locomo", str(demo), "--paraphrases", str(path), "--strategy", "bm25",
                      "--baseline", "rank_bm25", "--json")
    assert result["n_questions"] == 2  # only the paraphrased questions are asked
    for system in (result, result["baselines"]["rank_bm25"]):
        assert set(system["reworded"]["metrics"]) == set(system["metrics"])
        assert sum(c["n"] for c in system["reworded"]["by_category"].values()) == 2
    assert result["metrics"]["recall@10"] > 0  # each wording is measured on its own
    out = io.StringIO()
    assert main(["eval", "locomo", str(demo), "--paraphrases", str(path), "--strategy", "bm25"], out) == 0
    assert "original → reworded" in out.getvalue() and "category 4" in out.getvalue()


def test_eval_locomo_refuses_an_unknown_conversation(capsys):
    demo = ROOT / "assets" / "demo" / "conversation.json"
    assert main(["eval", "locomo", str(demo), "--samples", "conv-99", "--strategy", "bm25"], io.StringIO()) == 2
    assert "no conversation conv-99" in capsys.readouterr().err


def test_eval_updates_on_one_conversation_of_the_benchmark(tmp_path):
    data = json.loads((ROOT / "bench" / "data" / "knowledge_updates.json").read_text(encoding="utf-8"))
    smallest = min(data, key=lambda s: len(s["qa"]))
    (tmp_path / "one.json").write_text(json.dumps([smallest]), encoding="utf-8")
    result = run_json("eval", "updates", str(tmp_path / "one.json"), "--strategy", "hybrid", "--baseline", "bm25", "--json")
    assert (result["dataset"], result["n_questions"], result["as_of"]) == ("knowledge-updates", len(smallest["qa"]), True)
    assert {"recall@5", "stale_above", "n_stale"} <= result["metrics"].keys() and "bm25" in result["baselines"]
    assert result["metrics"]["n_stale"] > 0 and 0.0 <= result["changes_recognised"]["share"] <= 1.0
    misses = result["misses"]  # the misses to work from, each with its kind and the ranks that make it one
    stale_above = round(result["metrics"]["stale_above"] * result["metrics"]["n_stale"])
    assert misses and sum(m["stale_above"] for m in misses) == stale_above
    for miss in misses:
        best = {side: min((miss["ranks"][k] for k in miss[side] if k in miss["ranks"]), default=99)
                for side in ("stale", "evidence")}
        assert miss["stale_above"] == (best["stale"] < best["evidence"])


@pytest.mark.parametrize("command", ["updates", "locomo"])
def test_eval_data_that_is_not_a_benchmark_is_one_line_naming_it(tmp_path, capsys, command):
    data = json.loads((ROOT / "bench" / "data" / "knowledge_updates.json").read_text(encoding="utf-8"))
    no_answer = [{**data[0], "qa": [{k: v for k, v in data[0]["qa"][0].items() if k != "answer"}]}]
    cases = {"broken.json": ('[{"qa": ', "broken.json:1: malformed JSON"),
             "object.json": ('{"qa": []}', "not a JSON list of conversations"),
             "no-conversation.json": ('[{"qa": []}]', 'sample 0: no "conversation" object')}
    if command == "updates":
        cases["no-answer.json"] = (json.dumps(no_answer), "needs question, answer, reference_time")
    assert cases
    for name, (text, said) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        assert main(["eval", command, str(tmp_path / name), "--strategy", "bm25"], io.StringIO()) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1

"""The LLM extractor against a real HTTP server on 127.0.0.1, through the real openai client."""

import json
import re

import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.knowledge import llm
from mnemoscope.engine.records import Item
from tests.support.cli import new_store
from tests.support.openai_server import Fail, Garbage, Reply, Slow
from tests.support.stores import store_checksum


def good_reply(body):
    """A valid reply naming the first two turns it was sent."""
    keys = re.findall(r"^\[([^\]]+)\]", body["messages"][1]["content"], re.M)
    return {"summary": "Caroline and Melanie catch up.",
            "events": [{"participants": ["Caroline"], "action": "Caroline ran a charity race", "time": "last Saturday",
                        "location": None, "reason": "for mental health", "method": None, "turns": [keys[0]]}],
            "facts": [{"subject": "Caroline", "predicate": "supports", "object": "mental health charities",
                       "time": None, "turns": keys[:2]}]}


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch):
    monkeypatch.setattr(llm, "BACKOFF_SECONDS", 0.01)


@pytest.fixture
def llm_mem(tmp_path, conversation_file, openai_server):
    openai_server.on_chat = good_reply
    m = Memory(tmp_path / "l.db", llm_base_url=openai_server.base_url, llm_model="test-model",
               request_timeout=1.0, max_retries=1)
    m.ingest(conversation_file)
    yield m
    m.close()


def llm_facts(mem):
    return [f for f in mem.knowledge.facts() if f.origin == "llm"]


def test_ingest_queues_items_and_extraction_replaces_events_and_summary(llm_mem, openai_server):
    k = llm_mem.knowledge
    assert k.queue_status() == {"pending": 7}
    assert openai_server.count("chat") == 0  # ingest itself makes no call
    report = k.process_queue()
    assert report == {"items": 7, "done": 7, "failed": 0, "requests": 2}
    assert k.queue_status() == {"done": 7}
    fact = next(f for f in llm_facts(llm_mem) if f.object == "mental health charities")
    assert [llm_mem.item(i).key for i in fact.provenance] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    first = k.episodes()[0]
    assert first.summary == "Caroline and Melanie catch up." and first.origin == "llm"
    event = next(e for e in first.events if e.origin == "llm")
    assert event.time == "2023-05-20" and event.reason == "for mental health"
    assert all(f.origin == "llm" for f in llm_mem.knowledge.facts())  # the rule facts of these items made way
    body = openai_server.requests[0][1]
    assert body["response_format"] == {"type": "json_object"} and body["model"] == "test-model"


def test_a_server_error_is_retried(llm_mem, openai_server):
    openai_server.push("chat", Fail(500))
    report = llm_mem.knowledge.process_queue()
    assert report["failed"] == 0 and openai_server.count("chat") == 3


@pytest.mark.parametrize("step, reason", [
    (Reply("this is not JSON"), "not valid JSON"),
    (Garbage(), "unexpected shape"),
    (Reply({"summary": "x", "events": "none", "facts": []}), "expected a list"),
    (Reply({"summary": "x", "events": [], "facts": [{"subject": "A", "predicate": "b", "object": "c", "turns": ["D9:9"]}]}),
     "turns that were not sent"),
    (Reply("[" * 100_000 + "]" * 100_000), "nested too deep"),
    (Reply({"summary": "x" * 100_000, "events": [], "facts": []}), "reply.summary: 100,000 characters"),
    (Reply({"summary": "x", "events": [], "facts": [{"subject": "A" * 5000, "predicate": "b", "object": "c", "turns": ["D1:1"]}]}),
     "reply.facts[0].subject: more than"),
    (Reply({"summary": "x", "events": [], "facts": [{"subject": "A", "predicate": "b", "object": f"c{n}", "turns": ["D1:1"]}
                                                    for n in range(5000)]}), "reply.facts: 5,000 for 4 turns"),
    (Reply({"summary": "x", "events": [], "facts": [{"subject": "A", "predicate": "b", "object": "c",
                                                     "turns": ["D1:1"] * 5000}]}), "reply.facts[0].turns: more than"),
    *[(Reply({"summary": "x", "events": [], "facts": [{"subject": "A", "predicate": "b", "object": "c", "turns": ["D1:1"]}],
              "replaces": [{"fact": 0, "known": known}]}), "names a fact that is not in the reply or was not offered")
      for known in ("F²", "F" + "9" * 5000)],  # guard's finding: each crashed with a ValueError, not retried
])
def test_bad_replies_fail_the_items_and_keep_the_rule_result(llm_mem, openai_server, step, reason, caplog):
    before = store_checksum(llm_mem.path)
    failing_items = {1, 2, 3, 4}  # the first request: session 1
    kept_for_failed = {f.id for f in llm_mem.knowledge.facts() if set(f.provenance) & failing_items}
    openai_server.push("chat", step, step)  # both attempts of the first request (4 items) fail
    report = llm_mem.knowledge.process_queue()
    assert report["failed"] == 4 and report["done"] == 3
    assert reason in caplog.text
    assert kept_for_failed and kept_for_failed <= {f.id for f in llm_mem.knowledge.facts()}
    assert llm_mem.knowledge.queue_status() == {"done": 3, "failed": 4}
    assert store_checksum(llm_mem.path) != before  # only the queue and the good episode changed
    assert llm_mem.store.integrity_ok()


def test_resume_finishes_failed_items_later(llm_mem, openai_server):
    openai_server.push("chat", Fail(503), Fail(503))
    llm_mem.knowledge.process_queue()
    assert llm_mem.knowledge.queue_status()["failed"] == 4
    assert llm_mem.knowledge.process_queue(retry_failed=False)["items"] == 0
    report = llm_mem.knowledge.process_queue(retry_failed=True)
    assert report["done"] == 4 and llm_mem.knowledge.queue_status() == {"done": 7}


def test_a_slow_endpoint_times_out(tmp_path, conversation_file, openai_server):
    openai_server.on_chat = good_reply
    openai_server.push("chat", Slow(3.0), Slow(3.0))
    with Memory(tmp_path / "s.db", llm_base_url=openai_server.base_url, llm_model="m", request_timeout=0.3,
                max_retries=0) as m:
        m.ingest(conversation_file)
        report = m.knowledge.process_queue(limit=4)
        assert report["failed"] == 4 and report["items"] == 4


def test_an_unreachable_endpoint_loses_nothing(tmp_path, conversation_file):
    with Memory(tmp_path / "u.db", llm_base_url="http://127.0.0.1:9/v1", llm_model="m", request_timeout=0.5,
                max_retries=0) as m:
        m.ingest(conversation_file)
        facts = len(m.knowledge.facts())
        report = m.knowledge.process_queue()
        assert report["failed"] == 7 and len(m.knowledge.facts()) == facts
        assert m.knowledge.queue_status() == {"failed": 7}


def test_cli_extract_resume(tmp_path, conversation_file, openai_server, monkeypatch, capsys):
    from mnemoscope.app.cli import main

    openai_server.on_chat = good_reply
    store = str(new_store(tmp_path / "c.db"))
    capsys.readouterr()
    assert main(["--store", store, "extract"]) == 2
    assert "no LLM endpoint" in capsys.readouterr().err
    monkeypatch.setenv("MNEMOSCOPE_LLM_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("MNEMOSCOPE_LLM_MODEL", "m")
    assert main(["--store", store, "ingest", str(conversation_file)]) == 0
    capsys.readouterr()
    assert main(["--store", store, "extract", "--resume", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["done"] == 7


def test_the_episode_judge_merges_on_strong_and_keeps_weak_apart(tmp_path, openai_server):
    from mnemoscope.engine.records import Item, ParsedSource, Source

    def reply(body):
        prompt = body["messages"][1]["content"]
        if "coherence" in body["messages"][0]["content"]:
            first, second = prompt.split("Memory B:")
            return {"coherence": "STRONG" if "pottery" in first and "pottery" in second else "WEAK"}
        return {**good_reply(body), "summary": prompt.splitlines()[0]}  # the summary echoes the first turn

    openai_server.on_chat = reply
    turns = [("Maya", "I signed up for a pottery class."), ("Daniel", "Pottery sounds fun."),
             ("Maya", "The pottery class starts Monday."), ("Daniel", "Tell me about the pottery."),
             ("Maya", "My car broke down today."), ("Daniel", "Oh no, the car again.")]
    items = [Item(text=t, kind="turn", key=f"D1:{n + 1}", position=n, speaker=who, meta={"session": 1})
             for n, (who, t) in enumerate(turns)]
    with Memory(tmp_path / "j.db", llm_base_url=openai_server.base_url, llm_model="m", episode_window=2,
                episode_judge=True, max_retries=0) as m:
        m.ingest_parsed([ParsedSource(Source(name="chat", kind="conversation", content_hash="j"), items)])
        assert len(m.knowledge.episodes()) == 3
        report = m.knowledge.process_queue()
        assert report["merged"] == 1
        episodes = m.knowledge.episodes()
        assert [len(e.items) for e in episodes] == [4, 2] and episodes[0].merged_from
        m.knowledge.split_episode(episodes[0].id)
        assert len(m.knowledge.episodes()) == 3


def test_export_import_keeps_llm_facts_events_and_summaries(llm_mem, tmp_path):
    llm_mem.knowledge.process_queue()
    path = tmp_path / "export.jsonl"
    llm_mem.export(path)
    with Memory(tmp_path / "copy.db") as copy:
        copy.import_(path)
        fact = next(f for f in copy.knowledge.facts() if f.origin == "llm")
        assert (fact.subject, fact.object) == ("Caroline", "mental health charities")
        assert [copy.item(i).key for i in fact.provenance] == ["D1:1", "D1:2", "D2:1", "D2:2"]
        first = copy.knowledge.episodes()[0]
        assert first.summary == "Caroline and Melanie catch up." and any(e.origin == "llm" for e in first.events)


def test_a_reply_may_name_a_turn_twice_but_replace_no_more_facts_than_it_has():
    turns = {"D1:1": Item(text="I moved to Lyon.", kind="turn", key="D1:1", speaker="Maya", id=1)}
    fact = {"subject": "Maya", "predicate": "moved to", "object": "Lyon", "turns": ["D1:1", "D1:1"]}
    reply = llm.parse_reply(json.dumps({"summary": "x", "events": [], "facts": [fact]}), turns)
    assert len(reply.facts["D1:1"]) == 1  # one draft per turn, however often the reply names it
    replaces = [{"fact": 0, "known": "F7"}, {"fact": 0, "known": "F8"}]
    with pytest.raises(llm.LLMFailure, match="replaces: more entries than the reply has facts"):
        llm.parse_reply(json.dumps({"summary": "x", "events": [], "facts": [fact], "replaces": replaces}), turns, known=[7, 8])


def test_the_names_an_llm_gives_are_labels(llm_mem, openai_server):
    """LLM output is untrusted: a reply (prompted by a hostile turn, say) may name a fact's subject
    or object, or an event's participant, with an escape sequence, a bidi override or text no
    one sees; each is a label the Facts screen and `mnemoscope facts` list alone (fails before:
    stored as sent). Control characters are spaces there and invisible ones dropped, as in any
    name made from text."""
    from mnemoscope.engine.records import label_problem

    def hostile(body):
        reply = good_reply(body)
        reply["facts"][0].update(subject="Caro\u202eline\x1b]0;pwned\x07", object="mental\u200b health charities")
        reply["events"][0]["participants"] = ["Caroline\U000E0041"]
        return reply

    openai_server.on_chat = hostile
    assert llm_mem.knowledge.process_queue()["failed"] == 0
    facts = llm_facts(llm_mem)
    events = [e for ep in llm_mem.knowledge.episodes() for e in ep.events if e.origin == "llm"]
    assert facts and events
    names = [n for f in facts for n in (f.subject, f.predicate, f.object)] + [p for e in events for p in e.participants]
    names += [e.name for e in llm_mem.knowledge.entities(None, 1000)]
    assert [n for n in names if label_problem(n)] == []
    assert {(f.subject, f.object) for f in facts} == {("Caroline ]0;pwned", "mental health charities")}

"""The LLM extraction queue: items wait in the store until an LLM has read them.

Ingest enqueues every item when an LLM endpoint is configured; :meth:`ExtractionQueue.process_queue`
takes them an episode at a time, asks the LLM (:mod:`.llm`: the client, the prompt, the reply's
schema), and writes each validated reply in one transaction (:meth:`ExtractionQueue.apply_llm`).
A failure of any kind marks those items ``failed`` and leaves the rule-based extraction in place;
nothing is lost, and ``mnemoscope extract --resume`` tries them again. With ``episode_judge`` on,
the LLM then judges whether neighbouring episodes are one (a merge that a split undoes).
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from ..errors import KnowledgeError, LLMFailure
from ..records import Item
from .building import Batch
from .curation import KnowledgeCuration
from .extract import Extraction
from .llm import MERGING, LLMClient, LLMExtraction, prompt_for
from .records import Episode, Fact
from .timeline import fact_of_row

log = logging.getLogger(__name__)
KNOWN_FACTS = 40  # facts offered to the LLM per request, to say which a new one replaces


class ExtractionQueue(KnowledgeCuration):
    """The knowledge area's LLM extraction queue."""

    def queue_status(self) -> dict[str, int]:
        return self.store.queue_counts()

    def apply_llm(self, episode_id: int | None, items: list[Item], result: LLMExtraction) -> int:
        """Store a validated LLM reply for these items in one transaction: its events and facts
        replace what the rule extractor (or an earlier LLM run) said about these items — facts
        stated elsewhere too only lose these items — its summary replaces a rule-built one, and
        the items leave the queue. Where the reply says one of its facts replaces a known one,
        that one is superseded (a decision by the ``llm``); the rules then judge the new facts too.
        Items another process deleted while the LLM answered are left out; returns how many were
        stored."""
        batch = self._begin_batch()
        try:
            with self.store.transaction():
                alive = self.store.items([i.id for i in items])  # another process may have deleted some meanwhile
                items = [i for i in items if i.id in alive]
                if items:
                    self._store_reply(episode_id, items, result, batch)
        except BaseException:
            self.registry.rollback()
            self._subject_vectors.clear()
            raise
        finally:
            self._batch = None
        self.load()  # facts may have gone: rebuild rather than patch
        return len(items)

    def _store_reply(self, episode_id: int | None, items: list[Item], result: LLMExtraction, batch: Batch) -> None:
        extractions = as_extractions(items, result)
        item_ids = [i.id for i in items]
        ids = self._register_entities(extractions, batch)
        batch.gone = set(self.store.drop_rule_provenance(item_ids))
        self.store.delete_facts(sorted(batch.gone))
        self.store.delete_events(item_ids, "llm")
        self.store.insert_events((e.item_id, "llm", e.body()) for ex in extractions for e in ex.events)
        stored = self._store_facts(items, extractions, ids, batch, origin="llm")
        for draft, known in result.replaces:  # the LLM's own judgement of what no longer holds
            if id(draft) in stored:  # (not when its item was deleted meanwhile)
                self.timeline.replaced(known, stored[id(draft)], actor="llm")
        self.timeline.apply_rules(sorted(batch.facts.values()))
        if episode_id is not None and result.summary:
            self.store.set_episode_summary(episode_id, result.summary, "llm")
        self.store.mark_extraction(item_ids, "done")
        self.mem.activity.record("facts.llm", f"{len(items)} item(s) read by the LLM", count=len(batch.facts))

    def process_queue(self, *, retry_failed: bool = True, limit: int | None = None,
                      progress: Callable[[int, int, str], None] | None = None) -> dict[str, Any]:
        """Work through the queue an episode at a time; returns counts of done and failed items."""
        if not self.llm_configured:
            raise KnowledgeError("no LLM endpoint is configured (set MNEMOSCOPE_LLM_BASE_URL and MNEMOSCOPE_LLM_MODEL)")
        s = self.settings
        client = LLMClient(s.llm_base_url, s.llm_model, s.llm_api_key, s.request_timeout, s.max_retries)
        store = self.store
        ids = store.queued_items(["pending", "failed"] if retry_failed else ["pending"], limit)
        episode_of = store.episodes_of_items(ids)
        groups: dict[int, list[int]] = {}  # episode id (or -item id for an item without one) → items
        for item_id in ids:
            groups.setdefault(episode_of.get(item_id, -item_id), []).append(item_id)
        report = {"items": len(ids), "done": 0, "failed": 0, "requests": 0}
        for episode_id, members in groups.items():
            for start in range(0, len(members), max(1, s.llm_batch_items)):
                chunk = members[start:start + s.llm_batch_items]
                items = sorted(self.mem.items(chunk).values(), key=lambda i: i.position)
                if not items:
                    continue  # deleted since the queue was read
                report["requests"] += 1
                turns = {i.key: i for i in items}
                known = self._known_facts(items)
                try:
                    result = client.extract(prompt_for(items, known), turns, [f.id for f in known])
                except LLMFailure as exc:
                    log.warning("LLM extraction failed for items %s: %s (rule-based result kept)", chunk, exc)
                    with store.transaction():
                        store.mark_extraction(chunk, "failed", str(exc))
                    report["failed"] += len(chunk)
                else:
                    report["done"] += self.apply_llm(episode_id if episode_id > 0 else None, items, result)
                if progress:
                    progress(report["done"] + report["failed"], len(ids), "extract")
        if s.episode_judge:
            report["merged"] = self._judge_neighbours(client, sorted(e for e in groups if e > 0))
        return report

    def _known_facts(self, items: list[Item]) -> list[Fact]:
        """The facts that hold now about the people and things these items name, stated by other
        items (the newest ``KNOWN_FACTS``): what the LLM may say a new fact replaces."""
        ids = [i.id for i in items]
        named = {eid for _item, eid, _surface, _role in self.store.mentions_of_items(ids)}
        mine = {f for f, _item in self.store.facts_of_items(ids)}
        rows = [r for e in sorted(named) for r in self.store.fact_rows(entity_id=e, latest=KNOWN_FACTS)
                if r[0] not in mine and r[4] in named]
        facts = {f.id: f for f in (fact_of_row(r) for r in rows) if f.state() == "current"}
        return sorted(facts.values(), key=lambda f: f.id)[-KNOWN_FACTS:]

    def _judge_neighbours(self, client: LLMClient, episode_ids: list[int]) -> int:
        """Ask the judge about each episode and the one before it in the same session; merge on
        STRONG or MODERATE (reversibly). A failed judgement merges nothing. Returns the merges."""
        merged = 0
        for episode_id in episode_ids:
            try:
                current = self.episode(episode_id)
            except KnowledgeError:  # merged away by an earlier judgement in this run
                continue
            before = [e for e in self.episodes(source_id=current.source_id)
                      if e.session == current.session and e.id < episode_id]
            if not before:
                continue
            try:
                level = client.judge(_describe(before[-1]), _describe(current))
            except LLMFailure as exc:
                log.warning("episode judge failed for episodes %d and %d: %s (not merged)", before[-1].id, episode_id, exc)
                continue
            if level in MERGING:
                self.merge_episodes(before[-1].id, episode_id)
                merged += 1
        return merged


def as_extractions(items: list[Item], result: LLMExtraction) -> list[Extraction]:
    """The reply as one :class:`Extraction` per item, for the ingest code paths to store."""
    return [Extraction(facts=result.facts.get(i.key, []), events=result.events.get(i.key, [])) for i in items]


def _describe(episode: Episode) -> str:
    events = "; ".join(e.action for e in episode.events[:10])
    return f"Summary: {episode.summary}\nEvents: {events or 'none'}"

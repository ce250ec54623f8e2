"""The LLM extractor: episodes, events and facts from an OpenAI-compatible chat endpoint.

:class:`LLMClient` asks for JSON about a stretch of turns and validates the reply against
:data:`REPLY_SCHEMA` and the turns actually sent; a failure of any kind (timeout, HTTP error,
invalid JSON, wrong schema, a turn that does not exist) is an :class:`engine.errors.LLMFailure`.
The durable queue that feeds it, and what is stored of a reply, are :mod:`.queue`'s.

The request has its own timeout (``request_timeout``) and retries with exponential backoff
(``max_retries``); the SDK's own retries are off, so the count is ours.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..errors import LLMFailure
from ..records import Item, shown_label
from .entities import entity_key
from .records import FactDraft
from .records import EVENT_ROLES, Event, Fact
from .temporal import find_times

log = logging.getLogger(__name__)

SYSTEM_PROMPT = """You turn a stretch of conversation (or document text) into an episodic memory.
Reply with one JSON object and nothing else:
{"summary": "1-3 sentences, active voice",
 "events": [{"participants": ["name"], "action": "subject verb object", "time": "YYYY-MM-DD or null",
             "location": null, "reason": null, "method": null, "turns": ["turn id"]}],
 "facts": [{"subject": "name", "predicate": "verb phrase", "object": "thing", "time": "YYYY-MM-DD or null",
            "turns": ["turn id"]}]}
Rules: use people's names, never "I" or "you"; resolve relative dates ("last Saturday") against the
date given for the turn; invent nothing (prefer null); every event and fact names the turn ids it
comes from, exactly as written in brackets; keep the input's language.
When "Known facts" are listed and one of your facts makes a known fact no longer true (a move, a
new job, a changed plan or preference), add "replaces": [{"fact": <the index of your fact in
"facts", from 0>, "known": "<the known fact's id, such as F12>"}]. Only for a true replacement:
a second hobby or place visited replaces nothing."""

JUDGE_PROMPT = """You decide whether two episodic memories from one conversation should become one.
Reply with one JSON object and nothing else: {"coherence": "STRONG" | "MODERATE" | "WEAK", "reason": "..."}
STRONG: the same event, or its direct follow-up. MODERATE: the same main entity, aspects of one
narrative. WEAK: the same entity but an unrelated subtopic, or nothing in common."""
MERGING = ("STRONG", "MODERATE")

BACKOFF_SECONDS = 0.5
BACKOFF_CAP = 8.0


@dataclass
class LLMExtraction:
    """A validated reply: the summary and, per turn id, its events and fact drafts."""

    summary: str
    events: dict[str, list[Event]] = field(default_factory=dict)
    facts: dict[str, list[FactDraft]] = field(default_factory=dict)
    replaces: list[tuple[FactDraft, int]] = field(default_factory=list)  # (a fact of the reply, the known fact id it ends)


REPLY_SCHEMA: dict[str, Any] = {
    "summary": str,
    "events": [{"participants": [str], "action": str, "time": (str, None), "location": (str, None),
                "reason": (str, None), "method": (str, None), "turns": [str]}],
    "facts": [{"subject": str, "predicate": str, "object": str, "time": (str, None), "turns": [str]}],
    "replaces": ([{"fact": int, "known": str}], None),  # optional: only when known facts were offered
}


MAX_SUMMARY_CHARS = 4000  # an episode's summary is a paragraph
MAX_FIELD_CHARS = 300  # a subject, a predicate, an object, an action or a place is a phrase, not a text
MAX_PER_TURN = 25  # facts, events, names in a list: more than this per turn sent is no reading of them


def _check(value: Any, schema: Any, where: str) -> None:
    """Raise :class:`LLMFailure` unless ``value`` has the shape of ``schema``."""
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise LLMFailure(f"{where}: expected an object")
        for key, sub in schema.items():
            if key not in value and not (isinstance(sub, tuple) and None in sub):
                raise LLMFailure(f"{where}: missing field {key!r}")
            if key in value:
                _check(value[key], sub, f"{where}.{key}")
    elif isinstance(schema, list):
        if not isinstance(value, list):
            raise LLMFailure(f"{where}: expected a list")
        for n, v in enumerate(value):
            _check(v, schema[0], f"{where}[{n}]")
    elif isinstance(schema, tuple):
        shapes = [t for t in schema if t is not None]
        if value is not None and len(shapes) == 1 and not isinstance(shapes[0], type):  # an optional list or object
            _check(value, shapes[0], where)
        elif not (value is None and None in schema) and not isinstance(value, tuple(shapes)):
            raise LLMFailure(f"{where}: expected {' or '.join('null' if t is None else t.__name__ for t in schema)}")
    elif not isinstance(value, schema):
        raise LLMFailure(f"{where}: expected {schema.__name__}")


def parse_reply(content: str, turns: dict[str, Item], known: Sequence[int] = ()) -> LLMExtraction:
    """Validate a reply against the schema, the turns sent and the known facts offered (their
    ids); raise :class:`LLMFailure` if not."""
    data = _json(content, "the reply")
    _check(data, REPLY_SCHEMA, "reply")
    _check_sizes(data, len(turns))
    for kind in ("events", "facts"):
        for n, entry in enumerate(data.get(kind, [])):
            unknown = [t for t in entry["turns"] if t not in turns]
            if unknown or not entry["turns"]:
                raise LLMFailure(f"reply.{kind}[{n}] names turns that were not sent: {unknown or 'none'}")
    out = LLMExtraction(summary=data["summary"].strip())
    for entry in data.get("events", []):
        first = turns[entry["turns"][0]]
        body = {k: entry.get(k) for k in EVENT_ROLES}
        body["participants"] = [name for name in map(_name, body["participants"]) if name]
        body["time"] = _iso(body["time"], first)
        out.events.setdefault(entry["turns"][0], []).append(Event(item_id=first.id or 0, origin="llm", **body))
    first_draft: dict[int, FactDraft] = {}
    for n, entry in enumerate(data.get("facts", [])):
        s, p, o = (_name(entry[k]) for k in ("subject", "predicate", "object"))
        if not (s and p and o):
            continue
        for turn in dict.fromkeys(entry["turns"]):  # a turn named twice is one provenance, one draft
            draft = FactDraft(s, p, o, entity_key(s), entity_key(o), _iso(entry.get("time"), turns[turn]))
            out.facts.setdefault(turn, []).append(draft)
            first_draft.setdefault(n, draft)
    for n, entry in enumerate(data.get("replaces") or []):
        known_id = entry["known"].strip().lstrip("Ff")
        # ASCII digits only, and few: "F²" is a digit to isdigit() and no int, and int() refuses 4,300 digits
        if entry["fact"] not in first_draft or not (known_id.isascii() and known_id.isdigit() and len(known_id) <= 18) \
                or int(known_id) not in known:
            raise LLMFailure(f"reply.replaces[{n}] names a fact that is not in the reply or was not offered: {entry}")
        out.replaces.append((first_draft[entry["fact"]], int(known_id)))
    return out


def _name(value: str) -> str:
    """A name the reply gives (a fact's subject, predicate or object, an event's participant) as a
    label: the reply is untrusted, and a turn it read may have asked it to repeat an escape
    sequence or a bidi override, which every listing of facts and entities would show."""
    return " ".join(shown_label(value).split())


def _json(content: str, what: str) -> Any:
    """The JSON value of ``content``; :class:`LLMFailure` for anything else, nesting too deep for
    the parser included (a RecursionError is no ValueError)."""
    try:
        return json.loads(content)
    except (TypeError, ValueError) as exc:
        raise LLMFailure(f"{what} is not valid JSON ({exc})") from None
    except RecursionError:
        raise LLMFailure(f"{what} is not valid JSON (nested too deep)") from None


def _check_sizes(data: dict[str, Any], turns: int) -> None:
    """Raise :class:`LLMFailure` when a reply of the right shape says more than its turns can: a
    reply is untrusted, and one that pours thousands of facts or megabytes of text into the store
    is a fault, not a reading."""
    if len(data["summary"]) > MAX_SUMMARY_CHARS:
        raise LLMFailure(f"reply.summary: {len(data['summary']):,} characters; at most {MAX_SUMMARY_CHARS:,}")
    most = MAX_PER_TURN * max(1, turns)
    if len(data.get("replaces") or []) > len(data.get("facts", [])):
        raise LLMFailure("reply.replaces: more entries than the reply has facts")
    for kind in ("events", "facts"):
        entries = data.get(kind, [])
        if len(entries) > most:
            raise LLMFailure(f"reply.{kind}: {len(entries):,} for {turns} turns; at most {MAX_PER_TURN} a turn")
        for n, entry in enumerate(entries):
            for key in REPLY_SCHEMA[kind][0]:
                value = entry.get(key)
                texts = value if isinstance(value, list) else [value]
                if len(texts) > most or any(isinstance(t, str) and len(t) > MAX_FIELD_CHARS for t in texts):
                    raise LLMFailure(f"reply.{kind}[{n}].{key}: more than {MAX_FIELD_CHARS} characters or {most} entries")


def parse_judgement(content: str) -> str:
    """The coherence level of a judge's reply; raise :class:`LLMFailure` if there is none."""
    reply = _json(content, "the judge's reply")
    if not isinstance(reply, dict):
        raise LLMFailure("the judge's reply is not a JSON object")
    level = reply.get("coherence")
    if level not in ("STRONG", "MODERATE", "WEAK"):
        raise LLMFailure(f"the judge's coherence is {level!r}, not STRONG, MODERATE or WEAK")
    return level


def _iso(value: str | None, item: Item) -> str | None:
    """An ISO date as given, or a time expression resolved against the turn's date, else None."""
    if not value:
        return None
    times = find_times(value, item.timestamp)
    return times[0].value if times else None


class LLMClient:
    """JSON chat completions with a timeout and our own retries with exponential backoff."""

    def __init__(self, base_url: str, model: str, api_key: str, timeout: float, retries: int,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        from ..net import endpoint_client

        self.model, self.retries, self.sleep = model, retries, sleep
        self.client = endpoint_client(base_url, api_key, timeout=timeout, max_retries=0)

    def extract(self, prompt: str, turns: dict[str, Item], known: Sequence[int] = ()) -> LLMExtraction:
        """The episode, events and facts of these turns, and which ``known`` facts (offered in the
        prompt) they replace (validated; see :func:`parse_reply`)."""
        return self._with_retries(SYSTEM_PROMPT, prompt, lambda content: parse_reply(content, turns, known))

    def judge(self, first: str, second: str) -> str:
        """STRONG, MODERATE or WEAK: how much two episodes belong together."""
        return self._with_retries(JUDGE_PROMPT, f"Memory A:\n{first}\n\nMemory B:\n{second}", parse_judgement)

    def _with_retries(self, system: str, prompt: str, parse: Callable[[str], Any]) -> Any:
        """Ask, validate, and retry on any failure; raise the last :class:`LLMFailure`."""
        last: LLMFailure | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(min(BACKOFF_CAP, BACKOFF_SECONDS * 2 ** (attempt - 1)))
            try:
                return parse(self._ask(system, prompt))
            except LLMFailure as exc:
                last = exc
                log.warning("LLM request attempt %d failed: %s", attempt + 1, exc)
        raise last or LLMFailure("no attempt was made")

    def _ask(self, system: str, prompt: str) -> str:
        from openai import OpenAIError

        try:
            reply = self.client.chat.completions.create(
                model=self.model, temperature=0.1, response_format={"type": "json_object"},
                messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}])
            return reply.choices[0].message.content or ""
        except OpenAIError as exc:
            raise LLMFailure(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
        except (AttributeError, IndexError, TypeError, ValueError) as exc:
            raise LLMFailure(f"the endpoint answered in an unexpected shape: {exc}") from None


def prompt_for(items: list[Item], known: Sequence[Fact] = ()) -> str:
    """The turns as ``[key] (date) Speaker: text [image: caption]`` lines, then the known facts a
    reply may say they replace (``F12: Lena —lives in→ Lyon (since 2023-01-14)``; no brackets,
    which are turn ids)."""
    lines = []
    for item in items:
        when = f" ({item.timestamp[:10]})" if item.timestamp else ""
        who = f"{item.speaker}: " if item.speaker else (f"{item.title}: " if item.title else "")
        caption = f" [image: {item.meta['image_caption']}]" if item.meta.get("image_caption") else ""
        lines.append(f"[{item.key}]{when} {who}{item.text}{caption}")
    if known:
        lines += ["", "Known facts:", *(f"F{f.id}: {f.subject} —{f.predicate}→ {f.object} ({f.validity()})" for f in known)]
    return "\n".join(lines)

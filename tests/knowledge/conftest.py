"""Small conversations and passages for the knowledge tests, written to tmp_path."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from mnemoscope.engine import Memory


def locomo(sample_id: str, speakers: tuple[str, str], *sessions: tuple[str, list[tuple]]) -> dict[str, Any]:
    """A conversation in the LoCoMo layout: each session its date and its turns, each turn
    ``(speaker, text)`` or ``(speaker, text, more fields)``, numbered D<session>:<turn>."""
    conversation: dict[str, Any] = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    for s, (when, turns) in enumerate(sessions, 1):
        conversation[f"session_{s}_date_time"] = when
        conversation[f"session_{s}"] = [{"speaker": turn[0], "dia_id": f"D{s}:{n}", "text": turn[1],
                                         **(turn[2] if len(turn) > 2 else {})} for n, turn in enumerate(turns, 1)]
    return {"sample_id": sample_id, "conversation": conversation}


CONVERSATION = locomo("t1", ("Caroline", "Melanie"),
    ("1:56 pm on 25 May, 2023", [
        ("Caroline", "Hey Mel! I ran a charity race last Saturday."),
        ("Melanie", "Wow Caroline, that is great! I painted a lake sunrise last year."),
        ("Caroline", "I went to an LGBTQ support group yesterday in Boston."),
        ("Melanie", "I love painting. I painted a lake sunrise last year.",
         {"img_url": ["https://example.com/sunrise.jpg"], "blip_caption": "a photo of a painting of a sunrise over a lake"}),
    ]),
    ("10:00 am on 9 June, 2023", [
        ("Melanie", "I signed up for a pottery class with my kids."),
        ("Caroline", "Nice! I am researching adoption agencies in Boston."),
        ("Melanie", "Good luck with the adoption agencies, Caroline."),
    ]),
)

PASSAGES = [
    {"title": "Bubye River", "text": "The Bubye River is a river in southern Zimbabwe. It flows into the Limpopo River."},
    {"title": "Victoria Falls", "text": "Victoria Falls lies between Zambia and Zimbabwe, one of the largest falls on Earth."},
    {"title": "Zambezi River", "text": "The Zambezi River is the fourth-longest river in Africa."},
    {"title": "Limpopo River", "text": "The Limpopo River rises in South Africa and flows to the Indian Ocean."},
    {"title": "Niagara Falls", "text": "Niagara Falls is a group of three waterfalls on the border of Canada and the United States."},
    {"title": "Angel Falls", "text": "Angel Falls is a waterfall in Venezuela, the tallest uninterrupted waterfall in the world."},
]


@pytest.fixture
def conversation_file(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    return path


@pytest.fixture
def mem(tmp_path: Path, conversation_file: Path) -> Memory:
    m = Memory(tmp_path / "k.db")
    m.ingest(conversation_file)
    yield m
    m.close()


@contextmanager
def ingested(tmp_path: Path, name: str, text: str) -> Iterator[Memory]:
    """A fresh store holding one file ``name`` with ``text``, closed afterwards."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with Memory(tmp_path / f"{path.stem}.db") as m:
        m.ingest(path)
        yield m


@contextmanager
def ingested_conversation(tmp_path: Path, conversation: dict[str, Any]) -> Iterator[Memory]:
    """A fresh store holding one LoCoMo file with ``conversation`` (:func:`locomo`), closed afterwards."""
    with ingested(tmp_path, f"{conversation['sample_id']}.json", json.dumps([conversation])) as mem:
        yield mem


def stored(conversation: dict[str, Any]) -> Callable[..., Iterator[Memory]]:
    """A module-scoped fixture (assign it to the name the tests ask for) holding a store with
    ``conversation``: ingested once for every test of the module that names it, since those
    tests only recall from it."""

    @pytest.fixture(scope="module")
    def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
        with ingested_conversation(tmp_path_factory.mktemp("conversation"), conversation) as mem:
            yield mem

    return store

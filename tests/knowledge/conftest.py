"""Small conversations and passages for the knowledge tests, written to tmp_path."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from mnemoscope.engine import Memory

CONVERSATION = {
    "sample_id": "t1",
    "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 25 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! I ran a charity race last Saturday."},
            {"speaker": "Melanie", "dia_id": "D1:2", "text": "Wow Caroline, that is great! I painted a lake sunrise last year."},
            {"speaker": "Caroline", "dia_id": "D1:3", "text": "I went to an LGBTQ support group yesterday in Boston."},
            {"speaker": "Melanie", "dia_id": "D1:4", "text": "I love painting. I painted a lake sunrise last year.",
             "img_url": ["https://example.com/sunrise.jpg"], "blip_caption": "a photo of a painting of a sunrise over a lake"},
        ],
        "session_2_date_time": "10:00 am on 9 June, 2023",
        "session_2": [
            {"speaker": "Melanie", "dia_id": "D2:1", "text": "I signed up for a pottery class with my kids."},
            {"speaker": "Caroline", "dia_id": "D2:2", "text": "Nice! I am researching adoption agencies in Boston."},
            {"speaker": "Melanie", "dia_id": "D2:3", "text": "Good luck with the adoption agencies, Caroline."},
        ],
    },
}

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

"""What an ingest holds while it fits the models: not the items it parsed. A long conversation's
parsed items (about 1 KB each: 270 MB at 300k turns) were held by the caller through the fits
and the inverted lists at the ingest's end, where its peak memory is."""

import json
import weakref
from pathlib import Path

from mnemoscope.engine import Memory
from mnemoscope.engine.index import Index


def test_an_ingest_lets_go_of_the_items_it_parsed_before_it_fits_the_models(tmp_path: Path, monkeypatch):
    chat = tmp_path / "chat.jsonl"
    chat.write_text("".join(json.dumps({"speaker": ("Ana", "Ben")[n % 2], "text": f"turn {n} about the garden and bread"})
                            + "\n" for n in range(300)), encoding="utf-8")
    parsed, held_at_fit = [], []
    parse, fit_words = Memory.parse, Index.fit_words

    def parse_and_watch(mem, paths):
        read = parse(mem, paths)
        parsed.extend(weakref.ref(item) for source in read.parsed for item in source.items)
        return read

    def count_then_fit(index):
        held_at_fit.append(sum(ref() is not None for ref in parsed))
        return fit_words(index)

    monkeypatch.setattr(Memory, "parse", parse_and_watch)
    monkeypatch.setattr(Index, "fit_words", count_then_fit)
    with Memory(tmp_path / "m.db") as mem:
        report = mem.ingest(chat)
        assert report.items == 300 and mem.index.n_items == 300
    assert len(parsed) == 300
    assert held_at_fit == [0]

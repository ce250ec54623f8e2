"""The walk's report (the Trace panel's seeds and nodes reached, at most 20 each) as of a date: the
items said after it are left out before the 20 best are taken, so the report shows 20 nodes when
20 existed then, as many as a recall without a date shows, and none said after the date."""

from .conftest import ingested_conversation, locomo

WINTER = [(who, f"Tomas and I walked the {trail} trail near Bergen today.")
          for who, trail in zip(["Ingrid", "Tomas"] * 8, ["Fjell", "Ulriken", "Floyen", "Lovstakken", "Sandvik",
                                                         "Damsgard", "Kalfaret", "Nordnes", "Fana", "Arna", "Osoyro",
                                                         "Laksevag", "Fyllingsdalen", "Hordvik", "Asane", "Straume"])]
SUMMER = [(who, f"Tomas and I walked the Bergen {hill} trail again, Tomas loves Bergen.")
          for who, hill in zip(["Ingrid", "Tomas"] * 12, ["high", "low", "long", "short", "steep", "flat", "wet", "dry",
                                                          "north", "south", "east", "west", "old", "new", "wide", "narrow",
                                                          "quiet", "busy", "green", "grey", "first", "last", "upper", "lower"])]
HIKES = locomo("hikes", ("Ingrid", "Tomas"), ("10:00 am on 10 January, 2023", WINTER), ("10:00 am on 10 July, 2023", SUMMER))


def test_a_recall_as_of_a_date_shows_as_many_nodes_as_existed_then(tmp_path):
    with ingested_conversation(tmp_path, HIKES) as mem:
        question = "Which trail near Bergen did Tomas walk?"
        every = mem.recall(question, top_k=20, strategy="ppr")
        summer = {h.item.id for h in every.hits if h.item.key.startswith("D2")}
        assert summer & {int(n["node"].split(":")[1]) for n in every.graph["reached"] if n["kind"] == "item"}
        then = mem.recall(question, top_k=20, strategy="ppr", as_of="2023-03-01")
        winter = {i.id for s in mem.sources() for i in mem.source_items(s.id) if i.key.startswith("D1")}
        for part in ("seeds", "reached"):
            assert len(then.graph[part]) == len(every.graph[part]), part
            items = [int(n["node"].split(":")[1]) for n in then.graph[part] if n["kind"] == "item"]
            assert items and set(items) <= winter, part

"""Relative times resolve against the date the turn was said, at the precision the text gives."""

import pytest

from mnemoscope.engine.knowledge.temporal import find_times, resolve

SESSION = "2023-05-25T13:56:00"  # a Thursday


@pytest.mark.parametrize("text, expected", [
    ("I ran a charity race last Saturday.", "2023-05-20"),
    ("We met two weeks ago.", "2023-05-11"),
    ("I went there yesterday.", "2023-05-24"),
    ("It opens next month.", "2023-06"),
    ("We moved in 2019.", "2019"),
    ("The party was on 8 May, 2023.", "2023-05-08"),
    ("May 8th was fun.", "2023-05-08"),
    ("Last year we went camping.", "2022"),
    ("We hiked last weekend.", "2023-05-20"),
    ("Since July 2022 I paint.", "2022-07"),
    ("I ran a charity race on Saturday.", "2023-05-20"),  # "on" alone, no other time word: the last Saturday
])
def test_relative_and_absolute_times(text, expected):
    assert resolve(text, SESSION) == expected


def test_no_reference_date_keeps_only_absolute_times():
    assert resolve("I went there yesterday.", None) is None
    assert resolve("The party was on 8 May, 2023.", None) == "2023-05-08"


def test_no_time_words_means_no_times():
    assert find_times("I love painting sunsets over the lake.", SESSION) == []


def test_mentions_keep_their_words_and_order():
    times = find_times("Yesterday I ran, and next month I swim.", SESSION)
    assert [(t.text.lower(), t.value) for t in times] == [("yesterday", "2023-05-24"), ("next month", "2023-06")]

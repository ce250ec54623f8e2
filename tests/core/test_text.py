"""Tokenisation, particle stripping, sentence splitting and chunking."""

from mnemoscope.engine.ingest import chunk_text
from mnemoscope.engine.text import (STOPWORDS, about_listener, asks_about_listener, lexical_tokens, sentences, stem,
                                    strip_particle, token_count, words)


def test_english_words_are_stemmed_and_stop_words_dropped():
    tokens = lexical_tokens("The runners were running to the stations")
    assert tokens == ["runner", "run", "station"]
    assert not set(tokens) & STOPWORDS


def test_porter_stemmer_matches_the_published_examples():
    examples = {"caresses": "caress", "ponies": "poni", "relational": "relat", "conditional": "condit",
                "generalization": "gener", "sky": "sky",
                "agreed": "agre", "plastered": "plaster", "motoring": "motor", "hopping": "hop"}
    assert {w: stem(w) for w in examples} == examples


def test_possessives_and_curly_quotes_normalise():
    assert words("Caroline’s DOG") == ["caroline", "dog"]


def test_hangul_particles_are_stripped_only_where_the_grammar_allows():
    assert strip_particle("학교에서") == "학교"
    assert strip_particle("사과를") == "사과"      # 를 after a vowel
    assert strip_particle("학교가") == "학교"      # 가 after a vowel
    assert strip_particle("책을") == "책을"        # the stem would be one syllable
    assert strip_particle("우리의") == "우리의"    # a lone 의 is never stripped
    assert strip_particle("사람를") == "사람를"    # 를 after 받침 is not a particle


def test_korean_spacing_changes_share_bigrams():
    spaced = set(lexical_tokens("서울에서 학교를 다녔다"))
    unspaced = set(lexical_tokens("서울에서학교를"))
    assert {"~서울", "~서학", "~학교"} <= spaced & unspaced  # ~서학 crosses the space
    assert {"서울", "학교"} <= spaced  # particle-stripped stems


def test_mixed_script_words_split_at_the_script_boundary():
    assert lexical_tokens("KM인가") == ["km", "인가", "~인가"]


def test_sentences_keep_abbreviations_initials_and_decimals():
    text = "He served in the U.S. Army for 3.5 years. Then Dr. J. R. Smith (e.g. Bob) came! Did he? Yes. 그는 갔다. 그리고 왔다."
    assert sentences(text) == ["He served in the U.S. Army for 3.5 years.", "Then Dr. J. R. Smith (e.g. Bob) came!",
                               "Did he?", "Yes.", "그는 갔다.", "그리고 왔다."]


def test_paragraph_breaks_end_a_sentence():
    assert sentences("first line without stop\n\nsecond paragraph") == ["first line without stop", "second paragraph"]


def test_chunker_never_splits_a_sentence_and_respects_the_budget():
    sent = [f"Sentence number {i} talks about topic {i % 7} at some length." for i in range(60)]
    chunks = chunk_text(" ".join(sent), budget=40)
    assert len(chunks) > 1
    assert all(token_count(c) <= 40 for c in chunks)
    rebuilt = [s for c in chunks for s in sentences(c)]
    assert rebuilt == sent


def test_a_sentence_longer_than_the_budget_is_a_chunk_of_its_own():
    long = "Long " + "word " * 50 + "end."
    chunks = chunk_text(f"Short one. {long} Short two.", budget=10)
    assert chunks == ["Short one.", long, "Short two."]


def test_optional_character_trigrams_let_a_typo_match():
    assert not [t for t in lexical_tokens("photography") if t.startswith("#")]
    plain, typo = set(lexical_tokens("photography", True)), set(lexical_tokens("photgraphy", True))
    assert {"#<ph", "#pho", "#phy", "#hy>"} <= plain & typo
    assert not [t for t in lexical_tokens("the about 서울은", True) if t.startswith("#")]  # stop words, Hangul


ABOUT_THE_LISTENER = ["What are you driving now?", "How's the new house?", "Settled in yet?", "Who's the new boyfriend then?",
                      "Still working those brutal night shifts?", "Can you believe Olu's married now?"]
NOT_ABOUT_THE_LISTENER = ["Can you go back to answering in English?",  # a request: what the speaker wants
                          "Guess who's moving to London?", "Guess what?",  # the speaker's news, to be guessed
                          "Should I take the job?", "Where are we meeting?",  # the speaker's own
                          "I moved to Leeds."]  # no question


def test_a_question_about_the_listener_is_told_from_one_of_the_speakers_own():
    assert ABOUT_THE_LISTENER and NOT_ABOUT_THE_LISTENER
    assert [s for s in ABOUT_THE_LISTENER if not asks_about_listener(s)] == []
    assert [s for s in NOT_ABOUT_THE_LISTENER if asks_about_listener(s)] == []


def test_a_turn_is_about_the_listener_when_most_of_it_asks_about_them_and_none_of_it_is_the_speakers():
    assert about_listener("Maya! It's been way too long. How's life in Portland? Still working those brutal night shifts?")
    assert not about_listener("Bore da from Melbourne! The boys start their new school on Monday, the one by the park."
                              " How's Nain doing?")  # the speaker's news first
    assert not about_listener("How's the new house? I finally sold mine.")  # the speaker's too
    assert not about_listener("Guess who's got a kitchen bigger than a shoebox?")

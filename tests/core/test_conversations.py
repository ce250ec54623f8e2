"""Conversations as agents and chat apps write them: OpenAI chat messages (three shapes) and
ChatGPT's data export, read by `ingest`; a malformed one is one line with file:line, exit 2."""

import io
import json

import pytest

from mnemoscope.app.cli import main
from mnemoscope.engine.ingest import read_path

MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "I adopted a beagle called Biscuit.", "timestamp": "2024-05-06T09:00:00Z"},
    {"role": "assistant", "content": [{"type": "text", "text": "Congratulations!"},
                                      {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                                      {"type": "text", "text": "How old is he?"}]},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
    {"role": "tool", "content": "{\"age\": 2}", "tool_call_id": "c1"},
    {"role": "user", "name": "Maya", "content": "Two years old.", "timestamp": 1715000000},
]


def node(node_id, parent, children, role=None, text="", created=None, **message):
    msg = None if role is None else {"id": node_id, "author": {"role": role}, "create_time": created,
                                     "content": {"content_type": "text", "parts": [text]}, **message}
    return {"id": node_id, "message": msg, "parent": parent, "children": children}


def chatgpt_export():
    """Two conversations; the first was edited, so its mapping holds an abandoned branch."""
    first = {"id": "c-1", "title": "Dogs", "create_time": 1714986000.5, "current_node": "a3", "mapping": {
        "root": node("root", None, ["sys"]),
        "sys": node("sys", "root", ["a1"], "system", "", metadata={"is_visually_hidden_from_conversation": True}),
        "a1": node("a1", "sys", ["old", "a2"], "user", "Which breed sheds the least?", 1714986001),
        "old": node("old", "a1", [], "assistant", "An abandoned answer.", 1714986002),
        "a2": node("a2", "a1", ["a3"], "assistant", "Poodles shed very little.", 1714986003),
        "call": node("call", "a2", [], "assistant", "search('poodle')", 1714986004, recipient="browser"),
        "a3": node("a3", "a2", [], "user", "Thanks, noted.", 1714986005)}}
    second = {"id": "c-2", "title": "Bread", "create_time": 1714990000, "current_node": "b1", "mapping": {
        "b0": node("b0", None, ["b1"]), "b1": node("b1", "b0", [], "user", "How long does sourdough proof?", 1714990001)}}
    return [first, second]


@pytest.mark.parametrize("name,body", [
    ("chat.jsonl", "\n".join(json.dumps(m) for m in MESSAGES) + "\n\n"),
    ("list.json", json.dumps(MESSAGES, indent=1)),
    ("wrapped.json", json.dumps({"messages": MESSAGES})),
])
def test_openai_messages_in_each_shape(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    [parsed] = read_path(path)
    turns = [(i.speaker, i.text, i.timestamp) for i in parsed.items]
    assert turns == [("User", "I adopted a beagle called Biscuit.", "2024-05-06T09:00:00+00:00"),
                     ("Assistant", "Congratulations!\n\nHow old is he?", None),  # text parts joined, the image left out
                     ("Maya", "Two years old.", "2024-05-06T12:53:20+00:00")]  # a name wins over the role
    assert parsed.source.meta["format"] == "openai"
    assert parsed.source.meta["skipped"] == {"system": 1, "assistant": 1, "tool": 1}


def test_chatgpt_export_reads_the_current_branch_of_each_conversation(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chatgpt_export()), encoding="utf-8")
    dogs, bread = read_path(path)
    assert dogs.source.name == f"{path}#c-1" and bread.source.name == f"{path}#c-2"
    assert [(i.key, i.speaker, i.text) for i in dogs.items] == [
        ("a1", "User", "Which breed sheds the least?"), ("a2", "Assistant", "Poodles shed very little."),
        ("a3", "User", "Thanks, noted.")]  # not the abandoned answer, the hidden system turn or the call to a tool
    assert dogs.items[0].timestamp == "2024-05-06T09:00:01+00:00"
    assert dogs.source.meta["create_time"] == "2024-05-06T09:00:00+00:00" and dogs.source.meta["title"] == "Dogs"
    # each conversation has its own hash: editing one leaves the other unchanged
    edited = chatgpt_export()
    edited[1]["mapping"]["b1"]["message"]["content"]["parts"] = ["How long does rye proof?"]
    path.write_text(json.dumps(edited), encoding="utf-8")
    dogs_again, bread_again = read_path(path)
    assert dogs_again.source.content_hash == dogs.source.content_hash
    assert bread_again.source.content_hash != bread.source.content_hash


def test_speaker_text_lines_and_locomo_still_read(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text('{"speaker": "Ann", "text": "Hello"}\n', encoding="utf-8")
    assert read_path(path)[0].source.meta["format"] == "jsonl"


def first_line(export, n):
    """The line on which conversation ``n`` of the export starts, as ``json.dumps(indent=1)`` writes it."""
    return 2 + sum(len(json.dumps(c, indent=1).splitlines()) for c in export[:n])


def bad_chats(tmp_path):
    export = chatgpt_export()
    export[1]["mapping"]["b1"]["parent"] = "nowhere"
    lines = [json.dumps(m) for m in MESSAGES[:2]]
    return {
        "role.jsonl": ("\n".join([*lines, '{"role": "robot", "content": "beep"}']), ":3: 'role' must be one of"),
        "parts.jsonl": ("\n".join([*lines, '{"role": "user", "content": [{"text": "no type"}]}']), ":3: content part 0 must be"),
        "when.jsonl": ("\n".join([*lines, '{"role": "user", "content": "x", "timestamp": "soon"}']), ":3: unreadable timestamp"),
        "broken.jsonl": ("\n".join([*lines, '{"role": "user", "content": ']), ":3: malformed JSON"),
        "list.json": (json.dumps(MESSAGES[:2] + [{"role": "user", "content": 7}], indent=1), ":11: message 2: 'content' must be"),
        "wrapped.json": (json.dumps({"messages": MESSAGES[:1] + [{"role": "user", "name": 3, "content": "x"}]}, indent=2),
                         ":7: message 1: 'name' must be a string"),
        "silent.json": (json.dumps({"messages": MESSAGES[:1]}), ": no user or assistant message"),
        "conversations.json": (json.dumps(export, indent=1), f":{first_line(export, 1)}: conversation 1: node 'nowhere' is named"),
    }


@pytest.mark.parametrize("name", ["role.jsonl", "parts.jsonl", "when.jsonl", "broken.jsonl", "list.json", "wrapped.json",
                                  "silent.json", "conversations.json"])
def test_a_malformed_chat_is_one_line_exit_2_and_the_store_unchanged(tmp_path, name, checksum, capsys):
    store = tmp_path / "s.db"
    ok = tmp_path / "ok.jsonl"
    ok.write_text("\n".join(json.dumps(m) for m in MESSAGES), encoding="utf-8")
    assert main(["--store", str(store), "ingest", str(ok)], io.StringIO()) == 0
    body, expected = bad_chats(tmp_path)[name]
    (tmp_path / name).write_text(body, encoding="utf-8")
    before = checksum(store)
    capsys.readouterr()
    assert main(["--store", str(store), "ingest", str(tmp_path / name)], io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{tmp_path / name}{expected}" in err, err
    assert checksum(store) == before


def test_a_program_s_messages_are_refused_as_a_file_s_are_without_a_line():
    """The MCP ``remember`` tool hands messages over as objects: each bad one is refused with the
    words a ``.json`` file of the same messages gets, the line left out."""
    from mnemoscope.engine.conversations import ChatFormatError, messages_source

    bad = {"list.json": MESSAGES[:2] + [{"role": "user", "content": 7}],
           "wrapped.json": MESSAGES[:1] + [{"role": "user", "name": 3, "content": "x"}],
           "silent.json": MESSAGES[:1]}
    expected = {name: said.split(": ", 1)[1] for name, (_, said) in bad_chats(None).items() if name in bad}
    assert expected
    for name, messages in bad.items():
        with pytest.raises(ChatFormatError) as refused:
            messages_source("handed over", messages)
        assert refused.value.line is None and str(refused.value).startswith(expected[name]), name

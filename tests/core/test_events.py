from __future__ import annotations

import pytest

from core.events import (
    EVENT_TYPES,
    AssistantMessage,
    EventDecodeError,
    HumanQuestion,
    ServerTool,
    ServerToolsListed,
    ToolCall,
    Usage,
    decode,
    encode,
)


def test_every_event_kind_round_trips_through_the_codec():
    samples = {
        "assistant_message": AssistantMessage("hi", (ToolCall("c1", "file_read", '{"path": "ä"'),),
                                              Usage(10, 2, 8, 0.25), "m", 3, {"prefix_reuse": 0.5}),
        "human_question": HumanQuestion("q1", "approval", "Allow?", ("approve", "deny"), {"tool": "shell_run"}),
        "server_tools_listed": ServerToolsListed(
            (ServerTool("db", "query", "mcp_db_query", "[Tool server db] Run SQL.", '{"type":"object"}', True),),
            (("gh", "could not start"),)),
    }
    for kind, cls in EVENT_TYPES.items():
        event = samples.get(kind) or _minimal(cls)
        assert decode(kind, encode(event)) == event


def test_encoding_is_deterministic_and_sorted():
    event = HumanQuestion("q1", "ask_user", "Où?", ("b", "a"), {"z": 1, "a": 2})
    text = encode(event)
    assert text == encode(HumanQuestion("q1", "ask_user", "Où?", ("b", "a"), {"a": 2, "z": 1}))
    assert text.index('"context"') < text.index('"options"') < text.index('"qid"')
    assert "Où?" in text  # readable UTF-8, not \\u escapes


def test_unknown_kind_and_bad_payload_raise_a_decode_error():
    with pytest.raises(EventDecodeError, match="unknown event kind"):
        decode("telepathy", "{}")
    with pytest.raises(EventDecodeError, match="cannot decode"):
        decode("user_message", "not json")


def _minimal(cls):
    import dataclasses
    import typing
    hints = typing.get_type_hints(cls)
    samples = {str: "x", int: 1, bool: True}
    values = {}
    for f in dataclasses.fields(cls):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            hint = hints[f.name]
            values[f.name] = ("x",) if typing.get_origin(hint) is tuple else samples[hint]
    return cls(**values)

"""The one tolerant reader (util/reader.py): limits, numbers, text, schemas."""

from __future__ import annotations

import json

import pytest

from gitimprove.state.records import LINE_SCHEMA, read_line
from gitimprove.util import reader

SCHEMA = {
    "id": "str",
    "n": "int?",
    "x": "num?",
    "flag": "bool?",
    "tags": ["str"],
    "any_list": "list?",
    "obj": {"v": "num?", "samples": ["num"], "name": "str?"},
    "free": "dict?",
    "whatever": "any?",
}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"id":"a","n":"1"}', 'n is "1", not a whole number'),
        ('{"id":"a","n":true}', "n is true, not a whole number"),
        ('{"id":"a","n":1.5}', "n is 1.5, not a whole number"),
        ('{"id":"a","n":' + "9" * 40 + "}", "not a whole number"),
        ('{"id":"a","x":"fast"}', 'x is "fast", not a number between -1e300 and 1e300'),
        ('{"id":"a","x":false}', "x is false, not a number between -1e300 and 1e300"),
        ('{"id":"a","flag":1}', "flag is 1, not true or false"),
        ('{"id":"a","tags":"one"}', 'tags is "one", not a list'),
        ('{"id":"a","tags":["a",2]}', "tags[1] is 2, not text"),
        ('{"id":"a","any_list":{}}', "any_list is {}, not a list"),
        ('{"id":"a","obj":[1]}', "obj is [1], not an object"),
        (
            '{"id":"a","obj":{"samples":[1,"x"]}}',
            'obj.samples[1] is "x", not a number between -1e300 and 1e300',
        ),
        ('{"id":"a","obj":{"v":[]}}', "obj.v is [], not a number between -1e300 and 1e300"),
        ('{"id":"a","free":[]}', "free is [], not an object"),
        ('{"n":1}', "id is missing"),
        ('{"id":null}', "id is null, not text"),
        ('{"id":"a","x":1e999}', "1e999 is too large for a float"),
        ('{"id":"a","x":1e308}', "x is 1e+308, not a number between -1e300 and 1e300"),
        ('{"id":"a","x":NaN}', "NaN is not a number"),
        ('{"id":"a","extra":-Infinity}', "-Infinity is not a number"),
        ('{"id":"a","extra":1e400}', "too large for a float"),
        ('{"id":"a","extra":"\\udc00"}', "not valid Unicode"),
        ('{"id":"a","\\ud800":1}', "not valid Unicode"),
        ('{"id":"a","v":2}', "newer gitimprove"),
        ('{"id":"a","v":"1"}', "version"),
        ("[1]", "a JSON list, not an object"),
        ("7", "a JSON int, not an object"),
        ('{"id":"a",}', "not valid JSON"),
        ("", "not valid JSON"),
        ('{"id":"a","deep":' + "[" * 40 + "]" * 40 + "}", "nested deeper than 32"),
        ('{"id":"a","deep":' + "[" * 5000 + "]" * 5000 + "}", "nested deeper than 32"),
        ('{"id":"' + "a" * (reader.MAX_BYTES + 1) + '"}', "over the"),
    ],
)
def test_unreadable_records_say_why(text: str, why: str) -> None:
    got = reader.load_object(text, SCHEMA)
    assert isinstance(got, reader.Unreadable), got
    assert why in got.reason
    assert len(got.preview) < reader.PREVIEW_CHARS + 60
    assert got.preview.isprintable()


def test_readable_records_keep_unknown_fields_and_accept_null() -> None:
    text = (
        '{"id":"a","n":null,"x":3,"obj":{"v":1.5,"samples":[1,2.5],"extra":{"deep":[[1]]}},'
        '"tags":[],"any_list":[1,"x",null],"whatever":[{"a":1}],"future":{"k":"\\ud83d\\ude00"},'
        '"big":' + "9" * 300 + ',"tiny":1e-300,"huge":1.7e308}'
    )
    got = reader.load_object(text, SCHEMA)
    assert isinstance(got, dict)
    assert got["future"] == {"k": "😀"} and got["obj"]["extra"] == {"deep": [[1]]}
    assert got["big"] == int("9" * 300)
    assert got["huge"] == 1.7e308  # any finite number is kept where no field asks for one


def test_metric_output_may_say_nan_and_payloads_repair_text() -> None:
    assert reader.loads('{"score": NaN}', finite=False)["score"] != 0  # NaN, reported later
    assert isinstance(reader.loads('{"score": NaN}'), reader.Unreadable)
    assert reader.loads('{"e": "boom \\ud800"}', repair_text=True) == {"e": "boom \ufffd"}
    assert reader.scrub("a\ud800b") == "a\ufffdb"
    assert reader.preview(b"\xff\x00abc") == "\ufffd abc"


def test_every_line_gitimprove_writes_is_readable() -> None:
    from gitimprove.state.records import make_line

    fields = {
        "run": "r",
        "iteration": 3,
        "candidate": 1,
        "status": "keep",
        "metric": {"name": "ms", "direction": "lower", "value": 1.5, "samples": [1.5, 1.6]},
        "guard": {"status": "pass", "exit_code": 0, "tail": "ok"},
        "agent": {"name": "command", "exit_code": 0, "seconds": 1.2, "cost_usd": 0.1},
        "decision": {"window_used": 3, "runs": 4, "rule": "adaptive"},
        "options": {"iterations": 5, "goal": "g", "explore": True, "target": 1.0},
        "description": "bad \ud800 text",
        "big": float("inf"),
    }
    line = make_line("create", fields)
    got = read_line(line)
    assert isinstance(got, dict) and got["description"] == "bad \ufffd text" and got["big"] is None
    assert json.loads(line)["v"] == 1 and set(LINE_SCHEMA) >= {"metric", "guard", "agent"}


def test_an_agents_report_after_output_nested_past_reading() -> None:
    from gitimprove.agents.base import last_json_object

    for noise in ("[" * 5000, "[ " * 5000, '{"a":' * 3000, "[" * 3000 + "x" + "]" * 10):
        assert last_json_object(noise + '\n{"description": "ok"}\n') == {"description": "ok"}

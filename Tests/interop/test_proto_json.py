"""Proto3 JSON against an independent implementation, Python protobuf's json_format.

Tests/PushProtoTests/Resources/proto-json-corpus.json holds json_format's output for a set of
messages (with their binary form), other spellings it accepts and documents it refuses; the Swift
suite ProtoJSONCorpusTests checks that Pushgate's generated JSON code decodes each the same way and
that its own output means the same JSON. Here: the committed corpus is what json_format writes for
the current proto/ (scripts/gen-proto-json-corpus.py), and every claim in it holds for json_format."""
import importlib.util
import json
import os

import pytest
from google.protobuf import json_format

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_spec = importlib.util.spec_from_file_location(
    "gen_proto_json_corpus", os.path.join(ROOT, "scripts", "gen-proto-json-corpus.py"))
corpus_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus_script)


@pytest.fixture(scope="module")
def corpus():
    with open(corpus_script.CORPUS, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def message_class():
    return corpus_script.message_classes()


def test_committed_corpus_is_current():
    with open(corpus_script.CORPUS, encoding="utf-8") as fh:
        committed = fh.read()
    assert committed == corpus_script.build(), "run scripts/gen-proto-json-corpus.py and commit the corpus"


def test_json_format_writes_and_reads_each_case(corpus, message_class):
    assert len(corpus["cases"]) >= 10
    for case in corpus["cases"]:
        msg = message_class(case["message"])()
        msg.ParseFromString(bytes.fromhex(case["binary"]))
        written = json_format.MessageToJson(msg, preserving_proto_field_name=False)
        assert json.loads(written) == json.loads(case["json"]), case["name"]
        assert json_format.Parse(case["json"], message_class(case["message"])()) == msg, case["name"]
        for text in case["inputs"]:
            assert json_format.Parse(text, message_class(case["message"])()) == msg, (case["name"], text)


def test_json_format_refuses_each_refusal(corpus, message_class):
    assert len(corpus["refusals"]) >= 10
    for refusal in corpus["refusals"]:
        with pytest.raises(json_format.ParseError):
            json_format.Parse(refusal["json"], message_class(refusal["message"])())


def test_int64_is_a_string_and_field_names_are_lower_camel_case(corpus):
    """The two rules of the mapping most easily got wrong, visible in json_format's own output."""
    message = next(c for c in corpus["cases"] if c["message"] == "pushgate.v1.Message")
    written = json.loads(message["json"])
    assert written["total"] == "9223372036854775807"
    assert "publishedAt" in written and "published_at" not in written

#!/usr/bin/env python3
"""Writes Tests/PushProtoTests/Resources/proto-json-corpus.json: proto3 JSON produced by an independent
implementation, Python protobuf's `google.protobuf.json_format`, for Pushgate's own tests.

For each message below the corpus holds its binary encoding (hex) and `MessageToJson`'s output;
ProtoJSONCorpusTests (Swift) checks that our decoder reads that JSON as the same message as the
binary, and that our encoder's JSON means the same (compared as parsed JSON, member order aside).
`inputs` are other spellings json_format also accepts (proto field names, int64 as numbers, enums
by number, null, ...), which ours must read as the same message; `refusals` are documents that
json_format refuses, which ours must refuse too, at the path given. This script checks both claims
against json_format before writing. Tests/interop/test_proto_json.py fails when the committed
corpus is not what this script writes now.

Usage: gen-proto-json-corpus.py [--check]   (needs the venv's protobuf and grpcio-tools: make venv)
"""
import json
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CORPUS = os.path.join(ROOT, "Tests", "PushProtoTests", "Resources", "proto-json-corpus.json")


def message_classes():
    """Message classes for everything in proto/, built from a descriptor set (no generated stubs)."""
    protos = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "proto")):
        protos += [os.path.relpath(os.path.join(dirpath, f), os.path.join(ROOT, "proto"))
                   for f in files if f.endswith(".proto")]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "descriptors.pb")
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I" + os.path.join(ROOT, "proto"),
                        "--include_imports", "--descriptor_set_out=" + out] + sorted(protos), check=True)
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as fh:
            fds.ParseFromString(fh.read())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return lambda name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def cases(cls):
    """(name, message, other accepted spellings of its JSON)."""
    SendRequest = cls("pushgate.v1.SendRequest")
    send = SendRequest()
    n = send.notifications.add()
    n.app = "demo"
    n.tokens.extend(["ab" * 32, "CD" * 32])
    n.alert.title = "Hi"
    n.alert.subtitle = "there"
    n.alert.body = "Hello ünï \"quoted\" \\ / \n\t\u0001 😀 </script>"
    n.alert.launch_image = "launch.png"
    n.alert.title_loc_key = "T"
    n.alert.title_loc_args.extend(["t1"])
    n.alert.loc_key = "L"
    n.alert.loc_args.extend(["a", "b"])
    n.alert.image = "https://example.com/i.png"
    n.badge = 0
    n.sound = "default"
    n.category = "c"
    n.thread_id = "th"
    n.content_available = True
    n.mutable_content = True
    n.interruption_level = "time-sensitive"
    n.data_json = '{"k":"v"}'
    n.push_type = 3
    n.priority = 5
    n.expiration = 1700000000
    n.collapse_id = "col"
    n.topic = "com.example.app"
    n.id = "123e4567-e89b-12d3-a456-426614174000"
    n.urgency = "high"
    m = send.notifications.add()
    m.tokens.append("ef")
    m.badge = 7
    m.payload_json = '{"aps":{}}'
    m.alert.SetInParent()
    yield "SendRequest, every field", send, [
        json_format.MessageToJson(send, preserving_proto_field_name=True, indent=None),
        json_format.MessageToJson(send, use_integers_for_enums=True, indent=None),
    ]

    small = SendRequest()
    small.notifications.add().tokens.append("ab")
    small.notifications[0].expiration = 42
    small.notifications[0].push_type = 1
    small.notifications[0].priority = 10
    yield "SendRequest, int64, int32 and enum spellings", small, [
        '{"notifications":[{"tokens":["ab"],"expiration":42,"push_type":1,"priority":"10"}]}',
        '{"notifications":[{"tokens":["ab"],"expiration":"42","pushType":"PUSH_TYPE_ALERT","priority":10.0}]}',
        '{"notifications":[{"tokens":["ab"],"expiration":4.2e1,"pushType":1,"priority":1e1,'
        '"alert":null,"badge":null,"app":null,"collapseId":null}]}',
        '{"notifications":[{"tokens":["ab"],"expiration":"42.0","pushType":"1","priority":"1e1"}]}',
        '{"notifications":[{"tokens":["ab"],"expiration":"4.2E+1","pushType":1.0,"priority":"10"}]}',
    ]

    response = cls("pushgate.v1.SendResponse")()
    r = response.results.add()
    r.token = "ab"
    r.status = 1
    r.http_status = 200
    r.id = "id-1"
    r.attempts = 1
    r = response.results.add()
    r.notification_index = 1
    r.token = "cd"
    r.status = 2
    r.http_status = 410
    r.reason = "Unregistered"
    r.unregistered_at = 1700000000123
    r.canonical_token = "new"
    r = response.results.add()
    r.status = 42  # open enum: a value this build does not know is kept, and written as a number
    yield "SendResponse, enums and an unknown enum value", response, [
        json_format.MessageToJson(response, preserving_proto_field_name=True, indent=None),
    ]

    publish = cls("pushgate.v1.PublishRequest")()
    publish.topic = "news"
    publish.message = '{"default":"hi"}'
    publish.message_structure = "json"
    publish.attributes["AWS.SNS.MOBILE.APNS.TTL"] = "60"
    publish.attributes["b"] = ""
    publish.attributes["ü"] = "x"
    yield "PublishRequest, a map", publish, [
        '{"topic":"news","message":"{\\"default\\":\\"hi\\"}","message_structure":"json",'
        '"attributes":{"b":"","ü":"x","AWS.SNS.MOBILE.APNS.TTL":"60"}}',
    ]

    message = cls("pushgate.v1.Message")()
    message.message_id = "m1"
    message.state = 2
    message.total = 9223372036854775807
    message.delivered = -9223372036854775808
    message.failed = 1
    message.published_at = 1700000000000
    message.waiting_for_provider = 3
    yield "Message, int64 extremes", message, [
        '{"messageId":"m1","state":2,"total":9223372036854775807,"delivered":"-9223372036854775808",'
        '"failed":1,"published_at":1700000000000,"waiting_for_provider":"3"}',
    ]

    endpoints = cls("pushgate.v1.ListEndpointsResponse")()
    e = endpoints.endpoints.add()
    e.id = "e1"
    e.app = "ios"
    e.token = "ab"
    e.enabled = True
    e.custom_user_data = "u"
    e.created_at = 1700000000000
    e = endpoints.endpoints.add()
    e.id = "e2"
    e.disabled_reason = "Unregistered"
    endpoints.next_page_token = "p2"
    yield "ListEndpointsResponse, int64 in repeated messages", endpoints, [
        json_format.MessageToJson(endpoints, preserving_proto_field_name=True, indent=None),
    ]

    update = cls("pushgate.v1.UpdateEndpointRequest")()
    update.id = "e1"
    update.enabled = False
    update.custom_user_data = ""
    yield "UpdateEndpointRequest, optionals set to their defaults", update, [
        '{"id":"e1","enabled":false,"custom_user_data":"","token":null}',
    ]

    event = cls("pushgate.v1.DeliveryEvent")()
    event.kind = 4
    event.app = "ios"
    event.token = "ab"
    event.http_status = 410
    event.reason = "Unregistered"
    event.unregistered_at = 1
    event.message_id = "m1"
    event.endpoint_id = "e1"
    event.time = 1700000000000
    event.dropped = 0
    yield "DeliveryEvent, a nested enum", event, [
        '{"kind":"KIND_ENDPOINT_DISABLED","app":"ios","token":"ab","http_status":410,"reason":"Unregistered",'
        '"unregistered_at":"1","message_id":"m1","endpoint_id":"e1","time":"1700000000000","dropped":"0"}',
    ]

    watch = cls("pushgate.v1.WatchEventsRequest")()
    watch.apps.extend(["a", "b"])
    watch.delivered_sample_every = 100
    twice = SendRequest()
    twice.notifications.add().thread_id = "b"
    # ProtoJSON: a field given under both its names keeps the last value.
    yield "SendRequest, a field under both names", twice, [
        '{"notifications":[{"threadId":"a","thread_id":"b"}]}',
        '{"notifications":[{"thread_id":"a","threadId":"b"}]}',
    ]

    yield "WatchEventsRequest", watch, ['{"apps":["a","b"],"delivered_sample_every":"100"}']

    health = cls("grpc.health.v1.HealthCheckResponse")()
    health.status = 1
    yield "HealthCheckResponse", health, ['{"status":1}']

    yield "an empty SendRequest", SendRequest(), ['{"notifications":[]}', '{"notifications":null}']


REFUSALS = [
    # (message, JSON, the path our error names)
    ("pushgate.v1.SendRequest", '{"notifications":[{"tokens":["a"]},{"tokenz":["a"]}]}', "notifications[1].tokenz"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"alert":{"titel":"x"}}]}', "notifications[0].alert.titel"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"tokens":"ab"}]}', "notifications[0].tokens"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"tokens":[1]}]}', "notifications[0].tokens[0]"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"tokens":[null]}]}', "notifications[0].tokens[0]"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"push_type":"PUSH_TYPE_LOUD"}]}', "notifications[0].push_type"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"priority":2147483648}]}', "notifications[0].priority"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"priority":1.5}]}', "notifications[0].priority"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"expiration":"soon"}]}', "notifications[0].expiration"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"badge":true}]}', "notifications[0].badge"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"contentAvailable":"yes"}]}', "notifications[0].contentAvailable"),
    ("pushgate.v1.SendRequest", '{"notifications":[null]}', "notifications[0]"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"priority":" 1"}]}', "notifications[0].priority"),
    ("pushgate.v1.SendRequest", '{"notifications":[{"expiration":1e19}]}', "notifications[0].expiration"),
    ("pushgate.v1.SendRequest", 'null', ""),
    ("pushgate.v1.PublishRequest", '{"attributes":{"k":1}}', 'attributes["k"]'),
    ("pushgate.v1.PublishRequest", '{"attributes":{"k":null}}', 'attributes["k"]'),
    ("pushgate.v1.Message", '{"total":"9223372036854775808"}', "total"),
    ("pushgate.v1.SendRequest", '{"notifications":{}}', "notifications"),
]


def build():
    cls = message_classes()
    corpus = {
        "about": "Generated by scripts/gen-proto-json-corpus.py with Python protobuf %s "
                 "(google.protobuf.json_format); do not edit." % __import__("google.protobuf").protobuf.__version__,
        "cases": [],
        "refusals": [],
    }
    for name, msg, inputs in cases(cls):
        full = msg.DESCRIPTOR.full_name
        for text in inputs:
            parsed = json_format.Parse(text, cls(full)())
            assert parsed == msg, "json_format reads %r as another message than %s" % (text, name)
        corpus["cases"].append({
            "name": name,
            "message": full,
            # Maps come out in hash order otherwise; sorting keeps the corpus the same run to run.
            "binary": msg.SerializeToString(deterministic=True).hex(),
            "json": json_format.MessageToJson(msg, preserving_proto_field_name=False, indent=None, sort_keys=True),
            "inputs": inputs,
        })
    for full, text, path in REFUSALS:
        try:
            json_format.Parse(text, cls(full)())
        except json_format.ParseError:
            pass
        else:
            raise AssertionError("json_format accepts %s %r" % (full, text))
        corpus["refusals"].append({"message": full, "json": text, "path": path})
    return json.dumps(corpus, indent=1, ensure_ascii=False) + "\n"


def main():
    text = build()
    if sys.argv[1:] == ["--check"]:
        with open(CORPUS, encoding="utf-8") as fh:
            if fh.read() != text:
                sys.exit("%s is stale; run scripts/gen-proto-json-corpus.py" % CORPUS)
        return
    os.makedirs(os.path.dirname(CORPUS), exist_ok=True)
    with open(CORPUS, "w", encoding="utf-8") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()

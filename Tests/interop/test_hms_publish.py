"""A Publish's `HMS` key (Pushgate's own per-platform key, like WEBPUSH) to Huawei endpoints on both
APIs, delivered to the independent Huawei look-alike (hms_lookalike.py): the title, body and data of
the `HMS` entry reach v3's payload.notification and v2's android.notification, and `default` alone is
a data message."""
import json

import grpc

from conftest import Server, wait_done
from hms_lookalike import start_hms_lookalike
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc
from test_hms import device_token, hms_v2_app, hms_v3_app


def test_publish_with_the_hms_key_reaches_both_apis(tmp_path):
    (tmp_path / "hms").mkdir()
    hms = start_hms_lookalike(str(tmp_path / "hms"))
    server = Server({"apps": [hms_v3_app("harmony", hms), hms_v2_app("huawei", hms)]}, str(tmp_path))
    try:
        with grpc.insecure_channel(server.address) as channel:
            push, registry = push_pb2_grpc.PushStub(channel), registry_pb2_grpc.RegistryStub(channel)
            registry.CreateTopic(registry_pb2.CreateTopicRequest(name="hms-news"), timeout=10)
            tokens = {"harmony": device_token("v3", "publish"), "huawei": device_token("v2", "publish")}
            for app, token in tokens.items():
                endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app=app, token=token), timeout=10)
                registry.Subscribe(registry_pb2.SubscribeRequest(topic="hms-news", endpoint_id=endpoint.id), timeout=10)
            entry = {"title": "Match day", "body": "Kick-off at 8", "data": {"match": "42"}}
            message = json.dumps({"default": "fallback", "HMS": json.dumps(entry)})
            published = push.Publish(push_pb2.PublishRequest(topic="hms-news", message=message,
                                                             message_structure="json"), timeout=10)
            done = wait_done(push, published.message_id)
            assert (done.total, done.delivered) == (2, 2), done
            v3 = hms.records_for(tokens["harmony"])[0]["body"]["payload"]["notification"]
            assert (v3["title"], v3["body"], v3["clickAction"].get("data")) == ("Match day", "Kick-off at 8",
                                                                                 {"match": "42"}), v3
            v2 = hms.records_for(tokens["huawei"])[0]["body"]["message"]
            assert v2["android"]["notification"]["title"] == "Match day" and json.loads(v2["data"]) == {"match": "42"}
            # `default` alone: a data message ({"default": text}), on v3 a background push (push-type 6).
            published = push.Publish(push_pb2.PublishRequest(topic="hms-news", message="plain text"), timeout=10)
            assert wait_done(push, published.message_id).delivered == 2
            records = hms.records_for(tokens["harmony"])
            assert records[-1]["headers"]["push-type"] == "6"
            assert json.loads(records[-1]["body"]["payload"]["extraData"]) == {"default": "plain text"}
    finally:
        server.stop()
        hms.stop()

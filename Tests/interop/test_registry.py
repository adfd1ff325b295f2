"""The SNS-style registry and Publish, end to end: stock grpcio stubs against `pushgate serve`, which
delivers to the independent APNs look-alike."""
import json
import time
import uuid

import grpc
import pytest

from conftest import wait_done
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc


def token(n):
    return "%064x" % n


@pytest.fixture
def registry(channel):
    return registry_pb2_grpc.RegistryStub(channel)


@pytest.fixture
def push(channel):
    return push_pb2_grpc.PushStub(channel)


def error(call, request):
    with pytest.raises(grpc.RpcError) as info:
        call(request, timeout=10)
    return info.value.code(), info.value.details()




def received_for(lookalike, tokens, since):
    wanted = set(tokens)
    return [(h, b) for h, b in lookalike.requests[since:] if h[":path"][len("/3/device/"):] in wanted]


def test_create_endpoint_is_idempotent_like_sns(registry):
    t = token(0xE0001)
    first = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=t.upper(),
                                                                       custom_user_data="alice"), timeout=10)
    assert first.token == t, "APNs tokens are stored lowercase"
    assert first.enabled and first.created_at > 0 and len(first.id) > 0
    again = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=t, custom_user_data="alice"),
                                    timeout=10)
    assert again.id == first.id
    code, details = error(registry.CreateEndpoint,
                          registry_pb2.CreateEndpointRequest(app="demo", token=t, custom_user_data="bob"))
    assert code == grpc.StatusCode.ALREADY_EXISTS and first.id in details
    # Disabled endpoints are answered too, and not re-enabled.
    registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=first.id, enabled=False), timeout=10)
    disabled = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=t, custom_user_data="alice"),
                                       timeout=10)
    assert disabled.id == first.id and not disabled.enabled
    enabled = registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=first.id, enabled=True), timeout=10)
    assert enabled.enabled and enabled.disabled_reason == ""


@pytest.mark.parametrize("request_fields, code, words", [
    ({"app": "demo", "token": "xyz"}, grpc.StatusCode.INVALID_ARGUMENT, "token: APNs device token"),
    ({"app": "nope", "token": "ab" * 32}, grpc.StatusCode.NOT_FOUND, "app: unknown app"),
    ({"token": "ab" * 32}, grpc.StatusCode.INVALID_ARGUMENT, "app: required"),
    ({"app": "demo", "token": "ab" * 32, "custom_user_data": "x" * 2049}, grpc.StatusCode.INVALID_ARGUMENT,
     "custom_user_data: 2049 bytes"),
])
def test_create_endpoint_errors_name_the_field(registry, request_fields, code, words):
    got, details = error(registry.CreateEndpoint, registry_pb2.CreateEndpointRequest(**request_fields))
    assert got == code and words in details, details


def test_endpoint_lifecycle_and_paging(registry):
    ids = [registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="voipapp", token=token(0xE1000 + i)),
                                   timeout=10).id for i in range(7)]
    seen, page_token = [], ""
    while True:
        page = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(app="voipapp", page_size=3,
                                                                        page_token=page_token), timeout=10)
        seen += [e.id for e in page.endpoints]
        page_token = page.next_page_token
        if not page_token:
            break
    assert [i for i in seen if i in ids] == ids
    code, _ = error(registry.ListEndpoints, registry_pb2.ListEndpointsRequest(page_token="garbage"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    registry.DeleteEndpoint(registry_pb2.DeleteEndpointRequest(id=ids[0]), timeout=10)
    registry.DeleteEndpoint(registry_pb2.DeleteEndpointRequest(id=ids[0]), timeout=10)  # idempotent
    code, details = error(registry.GetEndpoint, registry_pb2.GetEndpointRequest(id=ids[0]))
    assert code == grpc.StatusCode.NOT_FOUND and details.startswith("id:")


def test_topics_and_subscriptions(registry):
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="news"), timeout=10)
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="news"), timeout=10)  # idempotent
    code, details = error(registry.CreateTopic, registry_pb2.CreateTopicRequest(name="bad name!"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith("name:")
    assert "news" in [t.name for t in registry.ListTopics(registry_pb2.ListTopicsRequest(), timeout=10).topics]
    e = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=token(0xE2000)), timeout=10)
    s1 = registry.Subscribe(registry_pb2.SubscribeRequest(topic="news", endpoint_id=e.id), timeout=10)
    s2 = registry.Subscribe(registry_pb2.SubscribeRequest(topic="news", endpoint_id=e.id), timeout=10)
    assert s1.id == s2.id
    code, details = error(registry.Subscribe, registry_pb2.SubscribeRequest(topic="missing", endpoint_id=e.id))
    assert code == grpc.StatusCode.NOT_FOUND
    code, details = error(registry.Subscribe, registry_pb2.SubscribeRequest(topic="news", endpoint_id=e.id,
                                                                           filter_policy_json='{"a": "b"}'))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith("filter_policy_json")
    subs = registry.ListSubscriptions(registry_pb2.ListSubscriptionsRequest(topic="news"), timeout=10).subscriptions
    assert [s.id for s in subs] == [s1.id]
    registry.Unsubscribe(registry_pb2.UnsubscribeRequest(subscription_id=s1.id), timeout=10)
    assert not registry.ListSubscriptions(registry_pb2.ListSubscriptionsRequest(topic="news"), timeout=10).subscriptions


def test_publish_errors(push, registry):
    code, details = error(push.Publish, push_pb2.PublishRequest(message="x"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith("topic, endpoint_id")
    code, details = error(push.Publish, push_pb2.PublishRequest(topic="nosuchtopic", message="x"))
    assert code == grpc.StatusCode.NOT_FOUND
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="errors"), timeout=10)
    for message, structure, words in [
        ('{"APNS": "{}"}', "json", "message: JSON must contain an entry for 'default'"),
        ('{"default": "x", "APNS": 5}', "json", "message"),
        ("{not json", "json", "message"),
        ('{"default": "x", "APNS": "[1]"}', "json", "message"),
        ("x", "xml", "message_structure"),
    ]:
        code, details = error(push.Publish, push_pb2.PublishRequest(topic="errors", message=message,
                                                                    message_structure=structure))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and details.startswith(words), (message, details)
    code, details = error(push.Publish, push_pb2.PublishRequest(
        topic="errors", message="x", attributes={"AWS.SNS.MOBILE.APNS.PRIORITY": "7"}))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "AWS.SNS.MOBILE.APNS.PRIORITY" in details
    code, _ = error(push.GetMessage, push_pb2.GetMessageRequest(message_id=str(uuid.uuid4())))
    assert code == grpc.StatusCode.NOT_FOUND


def test_topic_fan_out_picks_the_payload_per_platform(push, registry, lookalike):
    """1,000 endpoints on two apps (production and sandbox): APNS to production, APNS_SANDBOX to
    sandbox, and default where the message has no key for the platform."""
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="platforms"), timeout=10)
    prod = [token(0xA000000 + i) for i in range(500)]
    sandbox = [token(0xB000000 + i) for i in range(500)]
    for app, tokens in [("demo", prod), ("sandboxapp", sandbox)]:
        futures = [registry.CreateEndpoint.future(registry_pb2.CreateEndpointRequest(app=app, token=t), timeout=30)
                   for t in tokens]
        endpoints = [f.result() for f in futures]
        subs = [registry.Subscribe.future(registry_pb2.SubscribeRequest(topic="platforms", endpoint_id=e.id),
                                          timeout=30) for e in endpoints]
        [f.result() for f in subs]

    def publish(message):
        before = len(lookalike.requests)
        reply = push.Publish(push_pb2.PublishRequest(topic="platforms", message=json.dumps(message),
                                                     message_structure="json"), timeout=10)
        done = wait_done(push, reply.message_id)
        assert done.state == push_pb2.MESSAGE_STATE_COMPLETED
        assert (done.total, done.delivered, done.rejected, done.failed, done.skipped) == (1000, 1000, 0, 0, 0)
        return {h[":path"][len("/3/device/"):]: (h, b) for h, b in lookalike.requests[before:]}

    # Platform payloads go out byte for byte as published (json.dumps puts spaces after colons).
    bodies = publish({"default": "plain text", "APNS": json.dumps({"aps": {"alert": "prod"}}),
                      "APNS_SANDBOX": json.dumps({"aps": {"alert": "sandbox"}})})
    assert len(bodies) == 1000
    assert {bodies[t][1] for t in prod} == {b'{"aps": {"alert": "prod"}}'}
    assert {bodies[t][1] for t in sandbox} == {b'{"aps": {"alert": "sandbox"}}'}
    assert bodies[prod[0]][0]["apns-topic"] == "com.example.demo"
    assert bodies[sandbox[0]][0]["apns-topic"] == "com.example.sandbox"

    bodies = publish({"default": "plain text", "APNS": json.dumps({"aps": {"alert": "prod"}})})
    assert {bodies[t][1] for t in prod} == {b'{"aps": {"alert": "prod"}}'}
    assert {bodies[t][1] for t in sandbox} == {b'{"aps":{"alert":"plain text"}}'}


def test_push_type_is_inferred_like_sns(push, registry, lookalike):
    e = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=token(0xD0001)), timeout=10)
    for aps, expected_type, expected_priority in [({"content-available": 1}, "background", "5"),
                                                  ({"content-available": 1, "badge": 2}, "alert", "10")]:
        before = len(lookalike.requests)
        message = json.dumps({"default": "x", "APNS": json.dumps({"aps": aps, "custom": 1})})
        reply = push.Publish(push_pb2.PublishRequest(endpoint_id=e.id, message=message, message_structure="json"),
                             timeout=10)
        assert wait_done(push, reply.message_id).delivered == 1
        (headers, _), = received_for(lookalike, [token(0xD0001)], before)
        assert headers["apns-push-type"] == expected_type and headers["apns-priority"] == expected_priority


def test_unregistered_token_disables_its_endpoint_and_later_publishes_skip_it(push, registry, lookalike):
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="hygiene"), timeout=10)
    dead = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token="dd" * 32), timeout=10)
    alive = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=token(0xF0001)), timeout=10)
    for e in (dead, alive):
        registry.Subscribe(registry_pb2.SubscribeRequest(topic="hygiene", endpoint_id=e.id), timeout=10)
    first = wait_done(push, push.Publish(push_pb2.PublishRequest(topic="hygiene", message="one"), timeout=10).message_id)
    assert (first.delivered, first.rejected) == (1, 1)
    got = registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=dead.id), timeout=10)
    assert not got.enabled and got.disabled_reason == "Unregistered"
    before = len(lookalike.requests)
    second = wait_done(push, push.Publish(push_pb2.PublishRequest(topic="hygiene", message="two"), timeout=10).message_id)
    assert (second.total, second.delivered, second.skipped) == (2, 1, 1)
    assert not received_for(lookalike, ["dd" * 32], before)
    code, details = error(push.Publish, push_pb2.PublishRequest(endpoint_id=dead.id, message="x"))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "EndpointDisabled" in details


def test_filter_policies_choose_the_subscribers(push, registry, lookalike):
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="filtered"), timeout=10)
    policies = {token(0x1F001): {"sport": ["football"]},
                token(0x1F002): {"sport": [{"prefix": "foot"}], "score": [{"numeric": [">", 2]}]},
                token(0x1F003): {"sport": [{"anything-but": ["football"]}]},
                token(0x1F004): {"vip": [{"exists": False}]},
                token(0x1F005): {}}
    for t, policy in policies.items():
        e = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=t), timeout=10)
        registry.Subscribe(registry_pb2.SubscribeRequest(topic="filtered", endpoint_id=e.id,
                                                         filter_policy_json=json.dumps(policy) if policy else ""),
                           timeout=10)
    before = len(lookalike.requests)
    reply = push.Publish(push_pb2.PublishRequest(topic="filtered", message="goal",
                                                 attributes={"sport": "football", "score": "3"}), timeout=10)
    done = wait_done(push, reply.message_id)
    got = {h[":path"][len("/3/device/"):] for h, _ in received_for(lookalike, list(policies), before)}
    assert got == {token(0x1F001), token(0x1F002), token(0x1F004), token(0x1F005)}
    assert (done.total, done.delivered, done.skipped) == (5, 4, 1)


def test_a_message_body_policy_through_grpc(push, registry, lookalike):
    """filter_policy_scope "MessageBody": the nested policy reads the JSON body; a nested policy
    without it, or another scope name, is INVALID_ARGUMENT naming the field."""
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="bodies"), timeout=10)
    paid, other = token(0x1F101), token(0x1F102)
    nested = json.dumps({"order": {"status": ["paid"]}})
    e = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=paid), timeout=10)
    code, details = error(registry.Subscribe, registry_pb2.SubscribeRequest(
        topic="bodies", endpoint_id=e.id, filter_policy_json=nested))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "MessageBody" in details, details
    code, details = error(registry.Subscribe, registry_pb2.SubscribeRequest(
        topic="bodies", endpoint_id=e.id, filter_policy_json=nested, filter_policy_scope="Body"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "filter_policy_scope" in details, details
    s = registry.Subscribe(registry_pb2.SubscribeRequest(topic="bodies", endpoint_id=e.id, filter_policy_json=nested,
                                                         filter_policy_scope="MessageBody"), timeout=10)
    assert s.filter_policy_scope == "MessageBody"
    listed = registry.ListSubscriptions(registry_pb2.ListSubscriptionsRequest(topic="bodies"), timeout=10)
    assert [x.filter_policy_scope for x in listed.subscriptions] == ["MessageBody"]
    o = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=other), timeout=10)
    plain = registry.Subscribe(registry_pb2.SubscribeRequest(topic="bodies", endpoint_id=o.id), timeout=10)
    assert plain.filter_policy_scope == "MessageAttributes"
    for body, expected in ((json.dumps({"order": {"status": "paid"}}), {paid, other}),
                           (json.dumps({"order": {"status": "open"}}), {other})):
        before = len(lookalike.requests)
        reply = push.Publish(push_pb2.PublishRequest(topic="bodies", message=body), timeout=10)
        done = wait_done(push, reply.message_id)
        got = {h[":path"][len("/3/device/"):] for h, _ in received_for(lookalike, [paid, other], before)}
        assert got == expected and done.delivered == len(expected), (body, got)


def test_the_seed_flow(push, registry, lookalike):
    """create endpoint → subscribe → publish {"default": …, "APNS": "{\\"aps\\":{…}}"} → APNs gets APNS."""
    e = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=token(0x5EED)), timeout=10)
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="seed"), timeout=10)
    registry.Subscribe(registry_pb2.SubscribeRequest(topic="seed", endpoint_id=e.id), timeout=10)
    before = len(lookalike.requests)
    message = '{"default": "Hooray!", "APNS": "{\\"aps\\":{\\"alert\\":\\"Hooray!\\",\\"badge\\":0,\\"sound\\":\\"bingbong.aiff\\"}}"}'
    reply = push.Publish(push_pb2.PublishRequest(topic="seed", message=message, message_structure="json"), timeout=10)
    assert wait_done(push, reply.message_id).delivered == 1
    (_, body), = received_for(lookalike, [token(0x5EED)], before)
    assert json.loads(body) == {"aps": {"alert": "Hooray!", "badge": 0, "sound": "bingbong.aiff"}}


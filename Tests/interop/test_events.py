"""Push/WatchEvents: failures and endpoint-disabled events reach watchers as they happen."""
import queue
import threading
import time

import grpc
import pytest

from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

DEAD = "dd" * 32


def watch(channel, **fields):
    """Collects events on a thread; returns (queue, call)."""
    call = push_pb2_grpc.PushStub(channel).WatchEvents(push_pb2.WatchEventsRequest(**fields), timeout=60)
    events = queue.Queue()

    def pump():
        try:
            for event in call:
                events.put(event)
        except grpc.RpcError:
            pass

    threading.Thread(target=pump, daemon=True).start()
    time.sleep(0.3)  # the watch is registered once the call has started on the server
    return events, call


def next_event(events, kind, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            event = events.get(timeout=max(0.01, deadline - time.time()))
        except queue.Empty:
            break
        if event.kind == kind:
            return event
    raise AssertionError("no %s event" % push_pb2.DeliveryEvent.Kind.Name(kind))


def test_a_410_reaches_watchers_as_a_rejected_event(channel, server):
    events, call = watch(channel)
    push_pb2_grpc.PushStub(channel).Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app="demo", tokens=["ab" * 32, DEAD], alert=push_pb2.Alert(body="x"))]), timeout=30)
    event = next_event(events, push_pb2.DeliveryEvent.KIND_REJECTED)
    assert (event.app, event.token, event.http_status, event.reason) == ("demo", DEAD, 410, "Unregistered")
    assert event.unregistered_at == 1700000000000 and event.time > 0
    call.cancel()
    # The failure is logged with the token masked.
    time.sleep(0.2)
    lines = [l for l in server.log if "notification rejected" in l]
    assert lines and "dddddddd…" in lines[-1] and DEAD not in lines[-1]


def test_sampled_successes_and_app_filter(channel):
    events, call = watch(channel, apps=["voipapp"], delivered_sample_every=1)
    stub = push_pb2_grpc.PushStub(channel)
    stub.Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app="demo", tokens=["ab" * 32], alert=push_pb2.Alert(body="x"))]), timeout=30)
    stub.Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app="voipapp", tokens=["ac" * 32], alert=push_pb2.Alert(body="x"))]), timeout=30)
    event = next_event(events, push_pb2.DeliveryEvent.KIND_DELIVERED)
    assert event.app == "voipapp" and event.token == "ac" * 32 and len(event.id) == 36
    call.cancel()


def test_endpoint_disabled_event_from_a_fan_out(channel):
    registry = registry_pb2_grpc.RegistryStub(channel)
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="events"), timeout=10)
    endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token=DEAD,
                                                                          custom_user_data="events"), timeout=10)
    registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=endpoint.id, enabled=True), timeout=10)
    registry.Subscribe(registry_pb2.SubscribeRequest(topic="events", endpoint_id=endpoint.id), timeout=10)
    events, call = watch(channel)
    reply = push_pb2_grpc.PushStub(channel).Publish(push_pb2.PublishRequest(topic="events", message="hi"), timeout=10)
    event = next_event(events, push_pb2.DeliveryEvent.KIND_ENDPOINT_DISABLED)
    assert (event.endpoint_id, event.reason, event.message_id) == (endpoint.id, "Unregistered", reply.message_id)
    call.cancel()


def test_watch_errors_name_the_field(channel):
    stub = push_pb2_grpc.PushStub(channel)
    with pytest.raises(grpc.RpcError) as info:
        next(stub.WatchEvents(push_pb2.WatchEventsRequest(apps=["nope"]), timeout=10))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND and info.value.details().startswith("apps[0]")
    with pytest.raises(grpc.RpcError) as info:
        next(stub.WatchEvents(push_pb2.WatchEventsRequest(delivered_sample_every=-1), timeout=10))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_cancelled_message_reaches_the_watchers_of_its_apps_with_its_count(channel, server):
    """KIND_MESSAGE_CANCELLED, with the recipients counted cancelled, goes to watchers of every app
    and to those watching an app the message went to: a topic's only to the former, a user
    publish's to watchers of its apps too, never to watchers of other apps. The cancel is logged."""
    registry = registry_pb2_grpc.RegistryStub(channel)
    push = push_pb2_grpc.PushStub(channel)
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="events-cancel"), timeout=10)
    for n in range(3):
        endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(
            app="demo", token="%02x" % (0x40 + n) * 32, user_id="events-user"), timeout=10)
        registry.Subscribe(registry_pb2.SubscribeRequest(topic="events-cancel", endpoint_id=endpoint.id), timeout=10)
    everyone, call_all = watch(channel)
    demo, call_demo = watch(channel, apps=["demo"])
    other, call_other = watch(channel, apps=["voipapp"])
    later = int(time.time() * 1000) + 600_000
    to_topic = push.Publish(push_pb2.PublishRequest(topic="events-cancel", message="later", deliver_at=later),
                            timeout=10)
    to_user = push.Publish(push_pb2.PublishRequest(user_id="events-user", message="later", deliver_at=later),
                           timeout=10)
    for message in (to_topic, to_user):
        push.CancelMessage(push_pb2.CancelMessageRequest(message_id=message.message_id), timeout=10)
    kind = push_pb2.DeliveryEvent.KIND_MESSAGE_CANCELLED
    for message in (to_topic, to_user):
        event = next_event(everyone, kind)
        assert (event.message_id, event.cancelled, event.app) == (message.message_id, 3, "")
    assert next_event(demo, kind).message_id == to_user.message_id
    with pytest.raises(AssertionError):
        next_event(other, kind, timeout=1)
    for call in (call_all, call_demo, call_other):
        call.cancel()
    assert any("message cancelled" in line and to_user.message_id in line for line in server.log)

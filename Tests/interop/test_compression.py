"""gzip for gRPC messages (issue 19, item 4): stock grpcio with `compression=grpc.Compression.Gzip`,
on the channel and per call, gets the same answers from every RPC of Push, Registry, Channels and Health as
without compression; with a raw HTTP/2 client (Python h2): a gzip bomb is RESOURCE_EXHAUSTED without
the gateway's memory growing, an unknown encoding is UNIMPLEMENTED naming what is supported, a
compressed flag without an encoding is INTERNAL, and large answers to a client that accepts gzip
come back compressed."""
import gzip
import os
import queue
import struct
import subprocess
import threading
import time
import uuid

import grpc
import pytest
from grpc.health.v1 import health_pb2, health_pb2_grpc

from conftest import Server, app_config, wait_done
from pushgate.v1 import channels_pb2, channels_pb2_grpc, push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc
from test_hardening import RawClient, rss_kib

DEAD = "dd" * 32  # the look-alike answers 410 Unregistered for it
MiB = 1 << 20
# Compressible, and large enough that grpcio really compresses (it sends a message uncompressed
# when gzip would not make it smaller) and that the gateway's answers carrying it are over 1 KiB.
LONG_TEXT = "compress me, " * 140


@pytest.fixture(scope="module")
def lookalike(tmp_path_factory):
    """An APNs look-alike of this module's own: sends to DEAD are recorded among its `invalid`
    requests, which the session's look-alike must not see (test_delivery asserts it has none)."""
    from apns_lookalike import LookalikeAPNs, make_certificate

    directory = str(tmp_path_factory.mktemp("compression-lookalike"))
    cert, key = make_certificate(directory)
    p8 = os.path.join(directory, "AuthKey_KEY1234567.p8")
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p8],
                   check=True, capture_output=True)
    server = LookalikeAPNs(cert, key, unregistered={DEAD}).start()
    server.ca_file = cert
    server.key_file = key
    server.p8 = p8
    yield server
    server.stop()


@pytest.fixture(scope="module")
def channel_api(lookalike):
    from apns_channels_lookalike import LookalikeChannelAPI

    api = LookalikeChannelAPI(lookalike.ca_file, lookalike.key_file, lookalike.channels).start()
    yield api
    api.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory, lookalike, channel_api):
    s = Server({"apps": [app_config("demo", "com.example.demo", lookalike,
                                    channels_url="https://127.0.0.1:%d" % channel_api.port),
                         app_config("voipapp", "com.example.voip", lookalike)]},
               str(tmp_path_factory.mktemp("compression")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "pushgate exited with %s:\n%s" % (s.proc.returncode, "".join(s.log))


def framed(message, compressed=False):
    return bytes([1 if compressed else 0]) + struct.pack(">I", len(message)) + message


def send_whole(client, stream_id, data):
    """A whole request body with END_STREAM in one DATA frame, once the windows have room for it, so
    the server answering (and resetting) a stream after its message cannot race the client's
    END_STREAM."""
    deadline = time.time() + 10
    while client.conn.local_flow_control_window(stream_id) < len(data):
        assert time.time() < deadline, "no window for %d bytes" % len(data)
        client.pump(0.05)  # takes the server's WINDOW_UPDATEs
    client.conn.send_data(stream_id, data, end_stream=True)
    client.flush()


def unframed(body):
    """(compressed flag, message) of each length-prefixed message in `body`."""
    out = []
    while body:
        flag, length = body[0], struct.unpack(">I", body[1:5])[0]
        out.append((flag, body[5:5 + length]))
        body = body[5 + length:]
    return out


def every_rpc(channel, run, **call):
    """Calls every RPC of Health, Push and Registry once (streaming ones too), with names unique to
    `run`; answers what came back with the run's ids and tokens taken out, to compare across runs."""
    health = health_pb2_grpc.HealthStub(channel)
    push = push_pb2_grpc.PushStub(channel)
    registry = registry_pb2_grpc.RegistryStub(channel)
    base = int(uuid.uuid4().hex[:8], 16) << 16
    tokens = ["%064x" % (base + i) for i in range(4)]
    answers = {}

    answers["Health.Check"] = health.Check(health_pb2.HealthCheckRequest(), timeout=10, **call).status
    watch = health.Watch(health_pb2.HealthCheckRequest(), timeout=10, **call)
    answers["Health.Watch"] = next(watch).status
    watch.cancel()

    events = queue.Queue()
    watcher = push.WatchEvents(push_pb2.WatchEventsRequest(apps=["demo"]), timeout=60, **call)

    def pump():
        try:
            for event in watcher:
                events.put(event)
        except grpc.RpcError:
            pass

    threading.Thread(target=pump, daemon=True).start()
    time.sleep(0.3)  # the watch is registered once its call has started on the server

    def notification(*to):
        return push_pb2.Notification(app="demo", tokens=list(to), alert=push_pb2.Alert(title="t", body=LONG_TEXT))

    sent = push.Send(push_pb2.SendRequest(notifications=[notification(tokens[0], DEAD)]), timeout=30, **call)
    answers["Push.Send"] = [(r.status, r.reason, r.http_status) for r in sent.results]
    event = events.get(timeout=10)
    answers["Push.WatchEvents"] = (event.app, event.token == DEAD, event.reason, event.http_status)
    watcher.cancel()
    stream = push.SendStream(iter([push_pb2.SendRequest(notifications=[notification(t)]) for t in tokens[1:3]]),
                             timeout=30, **call)
    answers["Push.SendStream"] = [[(r.status, r.token in tokens) for r in reply.results] for reply in stream]

    apps = registry.ListApplications(registry_pb2.ListApplicationsRequest(), timeout=10, **call)
    answers["Registry.ListApplications"] = sorted(a.name for a in apps.applications)
    endpoint = registry.CreateEndpoint(
        registry_pb2.CreateEndpointRequest(app="demo", token=tokens[3], custom_user_data=LONG_TEXT), timeout=10, **call)
    answers["Registry.CreateEndpoint"] = (endpoint.app, endpoint.token == tokens[3], endpoint.enabled,
                                          endpoint.custom_user_data == LONG_TEXT)
    got = registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint.id), timeout=10, **call)
    answers["Registry.GetEndpoint"] = (got.id == endpoint.id, got.custom_user_data == LONG_TEXT)
    updated = registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=endpoint.id, custom_user_data="x" + LONG_TEXT),
                                      timeout=10, **call)
    answers["Registry.UpdateEndpoint"] = updated.custom_user_data == "x" + LONG_TEXT
    listed = registry.ListEndpoints(registry_pb2.ListEndpointsRequest(app="demo", page_size=1000), timeout=10, **call)
    answers["Registry.ListEndpoints"] = endpoint.id in [e.id for e in listed.endpoints]
    topic = "gzip-%s-%s" % (run, uuid.uuid4().hex[:8])
    answers["Registry.CreateTopic"] = registry.CreateTopic(registry_pb2.CreateTopicRequest(name=topic), timeout=10,
                                                           **call).name == topic
    topics = registry.ListTopics(registry_pb2.ListTopicsRequest(page_size=1000), timeout=10, **call)
    answers["Registry.ListTopics"] = topic in [t.name for t in topics.topics]
    subscription = registry.Subscribe(registry_pb2.SubscribeRequest(topic=topic, endpoint_id=endpoint.id), timeout=10,
                                      **call)
    answers["Registry.Subscribe"] = (subscription.topic == topic, subscription.endpoint_id == endpoint.id)
    subscriptions = registry.ListSubscriptions(registry_pb2.ListSubscriptionsRequest(topic=topic), timeout=10, **call)
    answers["Registry.ListSubscriptions"] = [s.id == subscription.id for s in subscriptions.subscriptions]
    published = push.Publish(push_pb2.PublishRequest(topic=topic, message=LONG_TEXT), timeout=10, **call)
    done = wait_done(push, published.message_id)
    answers["Push.Publish"] = (done.total, done.delivered)
    message = push.GetMessage(push_pb2.GetMessageRequest(message_id=published.message_id), timeout=10, **call)
    answers["Push.GetMessage"] = (message.message_id == published.message_id, message.state, message.delivered)
    # Delivered, so not in the delivery log (successes are not sampled by default).
    deliveries = push.ListDeliveries(push_pb2.ListDeliveriesRequest(message_id=published.message_id, page_size=5),
                                     timeout=10, **call)
    answers["Push.ListDeliveries"] = (len(deliveries.deliveries), deliveries.next_page_token)
    stats = push.GetStats(push_pb2.GetStatsRequest(), timeout=10, **call)
    answers["Push.GetStats"] = ([a.app for a in stats.apps], stats.key_name, stats.admin)
    later = push.Publish(push_pb2.PublishRequest(
        topic=topic, message=LONG_TEXT, deliver_at=int(time.time() * 1000) + 600_000), timeout=10, **call)
    listed = push.ListMessages(push_pb2.ListMessagesRequest(topic=topic), timeout=10, **call)
    answers["Push.ListMessages"] = [(m.message_id == x, m.state) for m, x in
                                    zip(listed.messages, (later.message_id, published.message_id))]
    cancelled = push.CancelMessage(push_pb2.CancelMessageRequest(message_id=later.message_id), timeout=10, **call)
    answers["Push.CancelMessage"] = (cancelled.state, cancelled.total, cancelled.cancelled)
    answers["Registry.Unsubscribe"] = registry.Unsubscribe(
        registry_pb2.UnsubscribeRequest(subscription_id=subscription.id), timeout=10, **call) is not None
    answers["Registry.DeleteTopic"] = registry.DeleteTopic(registry_pb2.DeleteTopicRequest(name=topic), timeout=10,
                                                           **call) is not None
    answers["Registry.DeleteEndpoint"] = registry.DeleteEndpoint(registry_pb2.DeleteEndpointRequest(id=endpoint.id),
                                                                 timeout=10, **call) is not None

    channels = channels_pb2_grpc.ChannelsStub(channel)
    created = channels.CreateChannel(channels_pb2.CreateChannelRequest(
        app="demo", message_storage_policy=channels_pb2.MESSAGE_STORAGE_POLICY_MOST_RECENT), timeout=10, **call)
    answers["Channels.CreateChannel"] = (created.app, created.message_storage_policy, bool(created.channel_id))
    got = channels.GetChannel(channels_pb2.GetChannelRequest(app="demo", channel_id=created.channel_id), timeout=10,
                              **call)
    answers["Channels.GetChannel"] = got.channel_id == created.channel_id
    listed = channels.ListChannels(channels_pb2.ListChannelsRequest(app="demo", page_size=1000), timeout=10, **call)
    answers["Channels.ListChannels"] = created.channel_id in [c.channel_id for c in listed.channels]
    broadcast = channels.Broadcast(channels_pb2.BroadcastRequest(
        channel_id=created.channel_id, notification=push_pb2.Notification(
            app="demo", alert=push_pb2.Alert(title="t", body=LONG_TEXT[:200]),
            live_activity=push_pb2.LiveActivity(event="update", content_state_json='{"n":1}'))), timeout=30, **call)
    answers["Channels.Broadcast"] = (broadcast.result.status, broadcast.result.token == created.channel_id)
    answers["Channels.DeleteChannel"] = channels.DeleteChannel(channels_pb2.DeleteChannelRequest(
        app="demo", channel_id=created.channel_id), timeout=10, **call) is not None
    return answers


def test_every_rpc_answers_the_same_with_gzip(server):
    with grpc.insecure_channel(server.address) as plain:
        expected = every_rpc(plain, "plain")
    with grpc.insecure_channel(server.address, compression=grpc.Compression.Gzip) as channel:
        assert every_rpc(channel, "channel") == expected
    with grpc.insecure_channel(server.address) as channel:
        assert every_rpc(channel, "per-call", compression=grpc.Compression.Gzip) == expected
    assert expected["Push.Send"][1][1] == "Unregistered" and expected["Push.Publish"] == (1, 1), expected
    assert set(expected) == {"Health.Check", "Health.Watch"} | {
        "%s.%s" % (service, method.name)
        for module, service in [(push_pb2, "Push"), (registry_pb2, "Registry"), (channels_pb2, "Channels")]
        for method in module.DESCRIPTOR.services_by_name[service].methods}, "every RPC was called"


def test_an_unknown_encoding_is_unimplemented_naming_what_is_supported(server):
    with grpc.insecure_channel(server.address) as channel:
        with pytest.raises(grpc.RpcError) as info:
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service="x" * 200), timeout=10,
                                                      compression=grpc.Compression.Deflate)
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "grpc-encoding \"deflate\" is not supported; supported: gzip, identity" in info.value.details()


def test_raw_encodings_and_flags(server):
    """What grpcio cannot be made to send: an encoding it does not know, a compressed flag without
    an encoding, gzip that is not gzip."""
    client = RawClient(server.port)
    check = "/grpc.health.v1.Health/Check"
    request = health_pb2.HealthCheckRequest().SerializeToString()
    # Refused at its headers (and reset), before a byte of its body is read.
    snappy = client.open(check, [("grpc-encoding", "snappy")])
    no_encoding = client.open(check)
    send_whole(client, no_encoding, framed(gzip.compress(request), compressed=True))
    not_gzip = client.open(check, [("grpc-encoding", "gzip")])
    send_whole(client, not_gzip, framed(b"not gzip at all", compressed=True))
    good = client.open(check, [("grpc-encoding", "gzip")])
    send_whole(client, good, framed(gzip.compress(request), compressed=True))
    client.pump(2)
    status = client.status(snappy)
    assert status[0] == 12 and "snappy" in status[1], status
    assert dict(client.responses[snappy]["headers"])["grpc-accept-encoding"] == "gzip"
    assert client.status(no_encoding)[0] == 13 and "compressed flag" in client.status(no_encoding)[1]
    assert client.status(not_gzip)[0] == 13 and "could not be inflated" in client.status(not_gzip)[1]
    assert client.status(good) == (0, "")
    client.close()


def test_large_answers_to_a_gzip_client_come_back_compressed(server):
    with grpc.insecure_channel(server.address) as channel:
        endpoint = registry_pb2_grpc.RegistryStub(channel).CreateEndpoint(registry_pb2.CreateEndpointRequest(
            app="demo", token="%064x" % (int(uuid.uuid4().hex[:8], 16) << 20), custom_user_data=LONG_TEXT), timeout=10)
    request = framed(registry_pb2.GetEndpointRequest(id=endpoint.id).SerializeToString())
    path = "/pushgate.v1.Registry/GetEndpoint"
    client = RawClient(server.port)
    streams = {accept: client.open(path, [("grpc-accept-encoding", accept)] if accept else [])
               for accept in ("identity,deflate,gzip", "identity", None)}
    for stream in streams.values():
        send_whole(client, stream, request)
    small = client.open("/grpc.health.v1.Health/Check", [("grpc-accept-encoding", "gzip")])
    send_whole(client, small, framed(health_pb2.HealthCheckRequest().SerializeToString()))
    client.pump(2)
    assert all(client.status(s) == (0, "") for s in list(streams.values()) + [small])

    gzipped = client.responses[streams["identity,deflate,gzip"]]
    assert dict(gzipped["headers"])["grpc-encoding"] == "gzip"
    [(flag, message)] = unframed(gzipped["data"])
    assert flag == 1 and len(message) < 1024
    answer = registry_pb2.Endpoint.FromString(gzip.decompress(message))
    assert answer.id == endpoint.id and answer.custom_user_data == LONG_TEXT
    for accept in ("identity", None):
        plain = client.responses[streams[accept]]
        assert "grpc-encoding" not in dict(plain["headers"])
        [(flag, message)] = unframed(plain["data"])
        assert flag == 0 and registry_pb2.Endpoint.FromString(message) == answer
    # Under 1 KiB: not worth compressing, even for a client that takes gzip (flag 0).
    assert [flag for flag, _ in unframed(client.responses[small]["data"])] == [0]
    client.close()


@pytest.fixture(scope="module")
def limited(tmp_path_factory, lookalike):
    """A gateway whose messages are limited to 1 MiB (the default, 16 MiB, would take 5 MB whole)."""
    s = Server({"apps": [app_config("demo", "com.example.demo", lookalike)], "max_message_bytes": MiB},
               str(tmp_path_factory.mktemp("compression-limited")))
    yield s
    s.stop()


def test_a_gzip_bomb_is_resource_exhausted_and_memory_does_not_jump(limited):
    """A Send request message of 4.9 KB inflating to 5 MB (deflate's ratio tops out near 1032:1, so
    5 MB cannot come from less), 40 of them at once on one connection: each is RESOURCE_EXHAUSTED
    at the 1 MiB limit, and the gateway's RSS grows by far less than one bomb inflated."""
    bomb = gzip.compress(b"\x00" * 5_000_000, 9)
    assert len(bomb) < 5_000
    send = "/pushgate.v1.Push/Send"
    with grpc.insecure_channel(limited.address) as channel:  # warm up: the gateway's steady state
        push_pb2_grpc.PushStub(channel).Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
            app="demo", tokens=["%064x" % 7], alert=push_pb2.Alert(title="t", body="b"))]), timeout=30)
    before = rss_kib(limited)
    client = RawClient(limited.port)
    streams = [client.open(send, [("grpc-encoding", "gzip")]) for _ in range(40)]
    for stream in streams:
        send_whole(client, stream, framed(bomb, compressed=True))
    deadline = time.time() + 10
    while time.time() < deadline and any(client.status(s) is None for s in streams):
        client.pump(0.2)
    grown = rss_kib(limited) - before
    print("\n40 gzip bombs (5 MB each) against a 1 MiB limit: RSS %d -> %d KiB (VmHWM %d KiB)"
          % (before, before + grown, rss_kib(limited, "VmHWM")))
    statuses = [client.status(s) for s in streams]
    assert all(s is not None and s[0] == 8 for s in statuses), [s for s in statuses if s is None or s[0] != 8]
    assert "inflates past the limit of 1048576 bytes" in statuses[0][1], statuses[0]
    # Inflated whole, the bombs would be 200 MB; bounded, each costs at most the 1 MiB limit while
    # it is inflated, and what the allocator keeps of that.
    assert grown < 16 * 1024, "RSS grew by %d KiB" % grown
    client.close()
    # Nothing stays reserved: a gzip request is still taken afterwards.
    request = push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app="demo", tokens=["%064x" % 8], alert=push_pb2.Alert(title="t", body=LONG_TEXT))])
    with grpc.insecure_channel(limited.address, compression=grpc.Compression.Gzip) as channel:
        reply = push_pb2_grpc.PushStub(channel).Send(request, timeout=30)
    assert [r.status for r in reply.results] == [push_pb2.STATUS_DELIVERED]

"""gRPC server reflection, end to end: grpcio-reflection's own client (ProtoReflectionDescriptorDatabase,
from PyPI) discovers the API of `pushgate serve` with no .proto file, and raw requests on both protocol
versions (v1alpha, what that client and older grpcurl speak, and v1) get the same answers."""
import hashlib
import json
import os
import queue
import signal
import time

import grpc
import pytest
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from conftest import Server
from pushgate.v1 import channels_pb2, push_pb2, registry_pb2

V1 = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
V1ALPHA = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
SERVICES = {
    "grpc.health.v1.Health", "pushgate.v1.Push", "pushgate.v1.Registry", "pushgate.v1.Channels",
    "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection",
}
KEY = "pgk_reflection-test-key"
NOT_FOUND = grpc.StatusCode.NOT_FOUND.value[0]
INVALID_ARGUMENT = grpc.StatusCode.INVALID_ARGUMENT.value[0]


@pytest.fixture(scope="module")
def open_server(tmp_path_factory):
    s = Server(None, str(tmp_path_factory.mktemp("reflection")))
    yield s
    s.stop()


@pytest.fixture
def open_channel(open_server):
    ch = grpc.insecure_channel(open_server.address)
    yield ch
    ch.close()


def wait_log(server, words, since, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if any(words in line for line in server.log[since:]):
            return
        time.sleep(0.05)
    raise AssertionError("no log line with %r:\n%s" % (words, "".join(server.log[since:])))


def ask(channel, path, requests, metadata=()):
    """The responses of one ServerReflectionInfo stream carrying `requests` (v1alpha messages: v1's
    are the same on the wire)."""
    call = channel.stream_stream(path, request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                                 response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)
    return list(call(iter(requests), timeout=10, metadata=metadata))


def shape(message):
    """What a client learns of a message type: its fields' names, numbers, types and oneofs."""
    return [(f.name, f.number, f.type, f.is_repeated, f.message_type.full_name if f.message_type else None,
             f.enum_type.full_name if f.enum_type else None,
             f.containing_oneof.name if f.containing_oneof else None) for f in message.fields]


def published_shape(message, package=None):
    """`shape` of a message compiled on this side; `package` renames the package (v1 is v1alpha's
    protocol under a new name)."""
    rows = shape(message)
    if package is None:
        return rows
    return [tuple(c.replace("grpc.reflection.v1alpha.", package + ".") if isinstance(c, str) else c for c in row)
            for row in rows]


def assert_same_types(got, want, package, seen):
    """`got` (resolved through reflection) and every message type its fields reach have the shape of
    their counterparts on this side."""
    if got.full_name in seen:
        return
    seen.add(got.full_name)
    assert shape(got) == published_shape(want, package), got.full_name
    for field, expected in zip(got.fields, want.fields):
        if field.message_type:
            assert_same_types(field.message_type, expected.message_type, package, seen)


# The services as this side knows them: compiled from proto/ (pushgate), from grpcio-health-checking,
# and from grpcio-reflection's copy of the published reflection.proto.
KNOWN = {
    "pushgate.v1.Push": (push_pb2.DESCRIPTOR.services_by_name["Push"], None),
    "pushgate.v1.Registry": (registry_pb2.DESCRIPTOR.services_by_name["Registry"], None),
    "pushgate.v1.Channels": (channels_pb2.DESCRIPTOR.services_by_name["Channels"], None),
    "grpc.health.v1.Health": (health_pb2.DESCRIPTOR.services_by_name["Health"], None),
    "grpc.reflection.v1alpha.ServerReflection": (reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"], None),
    "grpc.reflection.v1.ServerReflection": (reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"],
                                            "grpc.reflection.v1"),
}

# Pushgate's health.proto has the protocol's Check and Watch, not its newer List.
SERVED_METHODS = {"grpc.health.v1.Health": ["Check", "Watch"]}


def test_an_independent_client_resolves_every_method_without_proto_files(open_channel):
    database = ProtoReflectionDescriptorDatabase(open_channel)
    services = set(database.get_services())
    assert services == SERVICES
    pool = DescriptorPool(database)
    methods = 0
    reached = set()
    for name in sorted(services):
        service = pool.FindServiceByName(name)
        known, package = KNOWN[name]
        assert [m.name for m in service.methods] == SERVED_METHODS.get(name, [m.name for m in known.methods]), name
        for method in service.methods:
            expected = known.methods_by_name[method.name]
            methods += 1
            assert (method.client_streaming, method.server_streaming) == \
                (expected.client_streaming, expected.server_streaming), method.full_name
            for got, want in ((method.input_type, expected.input_type), (method.output_type, expected.output_type)):
                # Found by name in the pool too (what grpcurl's `describe` does), and field for field
                # (nested types included) what the published or compiled .proto says.
                assert pool.FindMessageTypeByName(got.full_name) is got
                assert_same_types(got, want, package, reached)
    assert methods == sum(len(SERVED_METHODS.get(n, k.methods)) for n, (k, _) in KNOWN.items())
    assert {"pushgate.v1.Result", "pushgate.v1.Alert", "grpc.reflection.v1.ExtensionRequest",
            "grpc.reflection.v1alpha.FileDescriptorResponse"} <= reached


def test_raw_requests_on_v1alpha_and_v1_get_the_same_answers(open_channel):
    R = reflection_pb2.ServerReflectionRequest
    requests = [
        R(host="localhost", list_services=""),
        R(file_by_filename="pushgate/v1/push.proto"),
        R(file_containing_symbol="pushgate.v1.Push"),
        R(file_containing_symbol="pushgate.v1.Registry.CreateEndpoint"),
        R(file_containing_symbol="grpc.health.v1.HealthCheckResponse.SERVING"),
        R(file_containing_symbol="pushgate.v1.NoSuchThing"),
        R(file_by_filename="no/such/file.proto"),
        R(file_containing_extension=reflection_pb2.ExtensionRequest(containing_type="pushgate.v1.SendRequest",
                                                                    extension_number=100)),
        R(all_extension_numbers_of_type="pushgate.v1.SendRequest"),
        R(all_extension_numbers_of_type="pushgate.v1.NoSuchType"),
        R(),
    ]
    alpha = ask(open_channel, V1ALPHA, requests)
    v1 = ask(open_channel, V1, requests)
    assert [r.SerializeToString() for r in alpha] == [r.SerializeToString() for r in v1]
    assert len(alpha) == len(requests)
    for request, response in zip(requests, alpha):
        assert response.original_request == request

    listed, by_file, by_service, by_method, by_enum_value = alpha[:5]
    assert listed.valid_host == "localhost"
    assert {s.name for s in listed.list_services_response.service} == SERVICES
    for response in (by_file, by_service, by_method):
        files = [descriptor_pb2.FileDescriptorProto.FromString(b)
                 for b in response.file_descriptor_response.file_descriptor_proto]
        names = [f.name for f in files]
        # The file asked for first, then what it imports, transitively (each once).
        assert names[0] in ("pushgate/v1/push.proto", "pushgate/v1/registry.proto")
        assert len(names) == len(set(names))
        for f in files:
            assert set(f.dependency) <= set(names), (f.name, f.dependency)
    assert descriptor_pb2.FileDescriptorProto.FromString(
        by_file.file_descriptor_response.file_descriptor_proto[0]).package == "pushgate.v1"
    health_file = descriptor_pb2.FileDescriptorProto.FromString(
        by_enum_value.file_descriptor_response.file_descriptor_proto[0])
    assert health_file.name == "grpc/health/v1/health.proto"

    unknown_symbol, unknown_file, unknown_extension, numbers, unknown_type, empty = alpha[5:]
    assert unknown_symbol.error_response.error_code == NOT_FOUND
    assert "file_containing_symbol: unknown symbol" in unknown_symbol.error_response.error_message
    assert unknown_file.error_response.error_code == NOT_FOUND
    assert "file_by_filename: unknown file" in unknown_file.error_response.error_message
    assert unknown_extension.error_response.error_code == NOT_FOUND
    # A known type without extensions has none (not an error); an unknown type is NOT_FOUND.
    assert numbers.WhichOneof("message_response") == "all_extension_numbers_response"
    assert numbers.all_extension_numbers_response.base_type_name == "pushgate.v1.SendRequest"
    assert list(numbers.all_extension_numbers_response.extension_number) == []
    assert unknown_type.error_response.error_code == NOT_FOUND
    assert empty.error_response.error_code == INVALID_ARGUMENT
    assert "message_request: not set" in empty.error_response.error_message


def test_a_request_that_is_not_a_reflection_request_ends_the_stream(open_channel):
    call = open_channel.stream_stream(V1, request_serializer=lambda b: b, response_deserializer=lambda b: b)
    with pytest.raises(grpc.RpcError) as info:
        list(call(iter([b"\x1a\x05ab"]), timeout=10))  # field 3 (a string) cut short
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "ServerReflectionRequest" in info.value.details()
    # The server is fine: the next stream is answered.
    assert ask(open_channel, V1, [reflection_pb2.ServerReflectionRequest(list_services="")])


def test_reflection_false_leaves_the_methods_unimplemented(tmp_path):
    s = Server({"reflection": False}, str(tmp_path))
    try:
        with grpc.insecure_channel(s.address) as ch:
            for path in (V1, V1ALPHA):
                with pytest.raises(grpc.RpcError) as info:
                    ask(ch, path, [reflection_pb2.ServerReflectionRequest(list_services="")])
                assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED, path
    finally:
        s.stop()


class _Metadata(grpc.StreamStreamClientInterceptor):
    def __init__(self, metadata):
        self.metadata = metadata

    def intercept_stream_stream(self, continuation, details, requests):
        details = details._replace(metadata=list(details.metadata or ()) + self.metadata)
        return continuation(details, requests)


def test_with_api_keys_only_a_valid_key_is_answered(tmp_path):
    s = Server({"api_keys": [{"name": "tools", "key_sha256": hashlib.sha256(KEY.encode()).hexdigest(),
                              "apps": ["*"]}]}, str(tmp_path))
    try:
        with grpc.insecure_channel(s.address) as ch:
            request = reflection_pb2.ServerReflectionRequest(list_services="")
            for path in (V1, V1ALPHA):
                for metadata in ((), (("authorization", "Bearer pgk_wrong"),)):
                    with pytest.raises(grpc.RpcError) as info:
                        ask(ch, path, [request], metadata=metadata)
                    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED, (path, metadata)
                    assert "authorization:" in info.value.details()
                answered = ask(ch, path, [request], metadata=(("authorization", "Bearer " + KEY),))
                assert {x.name for x in answered[0].list_services_response.service} == SERVICES
            # The independent client, given the key, discovers the API as before.
            keyed = grpc.intercept_channel(ch, _Metadata([("authorization", "Bearer " + KEY)]))
            pool = DescriptorPool(ProtoReflectionDescriptorDatabase(keyed))
            assert [m.name for m in pool.FindServiceByName("pushgate.v1.Push").methods] == \
                [m.name for m in push_pb2.DESCRIPTOR.services_by_name["Push"].methods]
    finally:
        s.stop()


def test_a_key_removed_by_sighup_ends_a_reflection_stream_opened_before(tmp_path):
    old_key, new_key = KEY + "-old", KEY + "-new"
    config = {"api_keys": [{"name": "old", "key_sha256": hashlib.sha256(old_key.encode()).hexdigest(),
                            "apps": ["*"]}]}
    s = Server(config, str(tmp_path))
    try:
        with grpc.insecure_channel(s.address) as ch:
            requests = queue.Queue()
            call = ch.stream_stream(V1, request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                                    response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)
            replies = call(iter(requests.get, None), timeout=30, metadata=[("authorization", "Bearer " + old_key)])
            request = reflection_pb2.ServerReflectionRequest(list_services="")
            requests.put(request)
            assert next(replies).HasField("list_services_response")

            config["api_keys"][0]["key_sha256"] = hashlib.sha256(new_key.encode()).hexdigest()
            with open(os.path.join(str(tmp_path), "pushgate.json"), "w") as fh:
                json.dump(config, fh)
            mark = len(s.log)
            s.proc.send_signal(signal.SIGHUP)
            wait_log(s, 'msg="configuration reloaded"', mark)
            requests.put(request)
            with pytest.raises(grpc.RpcError) as info:
                next(replies)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
            requests.put(None)
    finally:
        s.stop()

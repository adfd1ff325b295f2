"""SIGHUP reloads apps and API keys without dropping connections."""
import hashlib
import json
import os
import signal
import time

import grpc
import pytest

from conftest import Server, app_config
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc


def wait_log(server, words, since, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if any(words in line for line in server.log[since:]):
            return
        time.sleep(0.05)
    raise AssertionError("no log line with %r:\n%s" % (words, "".join(server.log[since:])))


def send(stub, app, metadata=()):
    return stub.Send(push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app=app, tokens=["ab" * 32], alert=push_pb2.Alert(body="x"))]), timeout=30, metadata=list(metadata))


def test_sighup_adds_an_app_and_keys_without_dropping_connections(tmp_path, lookalike):
    config = {"apps": [app_config("first", "com.example.first", lookalike)]}
    server = Server(config, str(tmp_path))
    path = os.path.join(str(tmp_path), "pushgate.json")
    try:
        channel = grpc.insecure_channel(server.address)
        stub = push_pb2_grpc.PushStub(channel)
        assert send(stub, "first").results[0].status == push_pb2.STATUS_DELIVERED
        with pytest.raises(grpc.RpcError) as info:
            send(stub, "second")
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
        connections_before = lookalike.connections

        config["apps"].append(app_config("second", "com.example.second", lookalike))
        config["max_connections"] = 77  # needs a restart: logged, ignored
        with open(path, "w") as fh:
            json.dump(config, fh)
        mark = len(server.log)
        server.proc.send_signal(signal.SIGHUP)
        wait_log(server, "msg=\"configuration reloaded\"", mark)
        assert any("need a restart" in line and "max_connections" in line for line in server.log[mark:])
        # The same client connection carries on, and the unchanged app keeps its APNs connection.
        assert send(stub, "second").results[0].status == push_pb2.STATUS_DELIVERED
        assert send(stub, "first").results[0].status == push_pb2.STATUS_DELIVERED
        assert lookalike.connections == connections_before + 1, "only the new app opened a connection"
        apps = registry_pb2_grpc.RegistryStub(channel).ListApplications(registry_pb2.ListApplicationsRequest(),
                                                                        timeout=10)
        assert [a.name for a in apps.applications] == ["first", "second"]

        # Keys: from now on every call needs one.
        key = "pgk_test_reload_key_0123456789"
        config["api_keys"] = [{"name": "ops", "key_sha256": hashlib.sha256(key.encode()).hexdigest(),
                               "apps": ["*"], "admin": True}]
        with open(path, "w") as fh:
            json.dump(config, fh)
        mark = len(server.log)
        server.proc.send_signal(signal.SIGHUP)
        wait_log(server, "msg=\"configuration reloaded\"", mark)
        with pytest.raises(grpc.RpcError) as info:
            send(stub, "first")
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert send(stub, "first", [("authorization", "Bearer " + key)]).results[0].status == push_pb2.STATUS_DELIVERED

        # A config that does not check out is refused whole.
        with open(path, "w") as fh:
            fh.write("{not json")
        mark = len(server.log)
        server.proc.send_signal(signal.SIGHUP)
        wait_log(server, "reload refused", mark)
        assert send(stub, "second", [("authorization", "Bearer " + key)]).results[0].status == push_pb2.STATUS_DELIVERED
        channel.close()
    finally:
        server.stop()
    assert server.proc.returncode == 0


def test_a_key_removed_by_sighup_stops_working_on_a_stream_opened_before(tmp_path, lookalike):
    """Before: SendStream (and WatchEvents) checked the key once, when the stream opened, so a key
    removed by SIGHUP kept sending on it for as long as the client kept it open."""
    import queue
    old_key, new_key = "pgk_reload_old_key_0123456789", "pgk_reload_new_key_0123456789"
    config = {"apps": [app_config("first", "com.example.first", lookalike)], "api_keys": [
        {"name": "old", "key_sha256": hashlib.sha256(old_key.encode()).hexdigest(), "apps": ["*"]}]}
    server = Server(config, str(tmp_path))
    path = os.path.join(str(tmp_path), "pushgate.json")
    try:
        channel = grpc.insecure_channel(server.address)
        requests = queue.Queue()
        request = push_pb2.SendRequest(notifications=[push_pb2.Notification(
            app="first", tokens=["ab" * 32], alert=push_pb2.Alert(body="x"))])
        replies = push_pb2_grpc.PushStub(channel).SendStream(
            iter(requests.get, None), timeout=30, metadata=[("authorization", "Bearer " + old_key)])
        requests.put(request)
        assert next(replies).results[0].status == push_pb2.STATUS_DELIVERED

        config["api_keys"] = [{"name": "new", "key_sha256": hashlib.sha256(new_key.encode()).hexdigest(),
                               "apps": ["*"]}]
        with open(path, "w") as fh:
            json.dump(config, fh)
        mark = len(server.log)
        server.proc.send_signal(signal.SIGHUP)
        wait_log(server, "msg=\"configuration reloaded\"", mark)
        requests.put(request)
        with pytest.raises(grpc.RpcError) as info:
            next(replies)
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED, info.value
        assert "not valid" in info.value.details()
        requests.put(None)
        channel.close()
    finally:
        server.stop()

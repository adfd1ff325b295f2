"""API security end to end: TLS and mTLS on the gRPC listener (stock grpcio secure channels, certificates
made with the openssl CLI), API keys (UNAUTHENTICATED / PERMISSION_DENIED), and the refusal to serve
plaintext on a non-loopback address. Every client connects through 127.0.0.1 only."""
import hashlib
import os
import re
import subprocess
import time

import grpc
import pytest

from conftest import Server, app_config
from grpc.health.v1 import health_pb2, health_pb2_grpc
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc

TOKEN = "ab" * 32
SENDER_KEY = "pgk_sender-" + "s" * 32
ADMIN_KEY = "pgk_admin-" + "a" * 32
ALL_APPS_KEY = "pgk_all-" + "x" * 32


def sha256(key):
    return hashlib.sha256(key.encode()).hexdigest()


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate (CN billing), plus an
    unrelated CA and a client certificate it issued."""
    d = str(tmp_path_factory.mktemp("pki"))

    def ca(name):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", name + ".key", "-out", name + ".pem", "-days", "2", "-subj", "/CN=" + name,
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                cwd=d)

    def leaf(name, issuer, cn, extensions):
        with open(os.path.join(d, name + ".ext"), "w") as fh:
            fh.write(extensions)
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", name + ".key",
                "-out", name + ".csr", "-subj", "/CN=" + cn, cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", issuer + ".pem", "-CAkey", issuer + ".key",
                "-CAcreateserial", "-out", name + ".pem", "-days", "2", "-extfile", name + ".ext", cwd=d)

    ca("ca")
    ca("other-ca")
    leaf("server", "ca", "localhost",
         "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    leaf("client", "ca", "billing", "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n")
    leaf("stranger", "other-ca", "stranger", "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n")
    files = {}
    for name in ["ca", "server", "client", "stranger"]:
        files[name] = os.path.join(d, name + ".pem")
        files[name + "_key"] = os.path.join(d, name + ".key")
    return files


def read(path):
    with open(path, "rb") as fh:
        return fh.read()


def credentials(pki, client=None):
    if client is None:
        return grpc.ssl_channel_credentials(root_certificates=read(pki["ca"]))
    return grpc.ssl_channel_credentials(root_certificates=read(pki["ca"]), private_key=read(pki[client + "_key"]),
                                        certificate_chain=read(pki[client]))


def health(channel):
    return health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10).status


def failure(call, request, **kwargs):
    with pytest.raises(grpc.RpcError) as info:
        result = call(request, timeout=10, **kwargs)
        if hasattr(result, "__next__"):
            list(result)
    return info.value.code(), info.value.details()


def apps(lookalike):
    return [app_config("demo", "com.example.demo", lookalike), app_config("voipapp", "com.example.voip", lookalike)]


def start(config, tmp_path):
    return Server(config, str(tmp_path))


# --- TLS and mTLS ---

@pytest.fixture(scope="module")
def tls_server(tmp_path_factory, lookalike, pki):
    s = start({"apps": apps(lookalike), "tls_cert_file": pki["server"], "tls_key_file": pki["server_key"]},
              tmp_path_factory.mktemp("tls"))
    assert any("tls=tls" in line for line in s.log), "".join(s.log)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def mtls_server(tmp_path_factory, lookalike, pki):
    s = start({"apps": apps(lookalike), "tls_cert_file": pki["server"], "tls_key_file": pki["server_key"],
               "client_ca_file": pki["ca"]}, tmp_path_factory.mktemp("mtls"))
    assert any("tls=mtls" in line for line in s.log), "".join(s.log)
    yield s
    s.stop()


def test_tls_calls_work_over_a_secure_channel(tls_server, pki):
    with grpc.secure_channel(tls_server.address, credentials(pki)) as ch:
        assert health(ch) == health_pb2.HealthCheckResponse.SERVING
        reply = push_pb2_grpc.PushStub(ch).Send(push_pb2.SendRequest(notifications=[
            push_pb2.Notification(app="demo", tokens=[TOKEN], alert=push_pb2.Alert(title="Hi", body="TLS"))]),
            timeout=10)
        assert [r.status for r in reply.results] == [push_pb2.STATUS_DELIVERED]
        apps = registry_pb2_grpc.RegistryStub(ch).ListApplications(registry_pb2.ListApplicationsRequest(), timeout=10)
        assert [a.name for a in apps.applications] == ["demo", "voipapp"]


def test_a_plaintext_client_against_the_tls_port_fails(tls_server):
    with grpc.insecure_channel(tls_server.address) as ch:
        code, _ = failure(health_pb2_grpc.HealthStub(ch).Check, health_pb2.HealthCheckRequest())
    assert code == grpc.StatusCode.UNAVAILABLE
    assert tls_server.alive()


def test_a_client_that_does_not_trust_the_server_fails(tls_server, pki):
    creds = grpc.ssl_channel_credentials(root_certificates=read(pki["stranger"]))
    with grpc.secure_channel(tls_server.address, creds) as ch:
        code, _ = failure(health_pb2_grpc.HealthStub(ch).Check, health_pb2.HealthCheckRequest())
    assert code == grpc.StatusCode.UNAVAILABLE


def test_mtls_accepts_a_client_certificate_from_the_client_ca(mtls_server, pki):
    with grpc.secure_channel(mtls_server.address, credentials(pki, client="client")) as ch:
        assert health(ch) == health_pb2.HealthCheckResponse.SERVING
        reply = push_pb2_grpc.PushStub(ch).Send(push_pb2.SendRequest(notifications=[
            push_pb2.Notification(app="demo", tokens=[TOKEN], alert=push_pb2.Alert(title="Hi", body="mTLS"))]),
            timeout=10)
        assert [r.status for r in reply.results] == [push_pb2.STATUS_DELIVERED]


def test_mtls_refuses_a_client_without_a_certificate(mtls_server, pki):
    with grpc.secure_channel(mtls_server.address, credentials(pki)) as ch:
        code, _ = failure(health_pb2_grpc.HealthStub(ch).Check, health_pb2.HealthCheckRequest())
    assert code == grpc.StatusCode.UNAVAILABLE


def test_mtls_refuses_a_certificate_from_another_ca(mtls_server, pki):
    with grpc.secure_channel(mtls_server.address, credentials(pki, client="stranger")) as ch:
        code, _ = failure(health_pb2_grpc.HealthStub(ch).Check, health_pb2.HealthCheckRequest())
    assert code == grpc.StatusCode.UNAVAILABLE
    assert mtls_server.alive()


# --- API keys ---

@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory, lookalike):
    config = {"apps": apps(lookalike), "api_keys": [
        {"name": "sender", "key_sha256": sha256(SENDER_KEY), "apps": ["demo"]},
        {"name": "ops", "key_sha256": sha256(ADMIN_KEY).upper(), "apps": ["*"], "admin": True},
        {"name": "everything", "key_sha256": sha256(ALL_APPS_KEY), "apps": ["*"], "admin": False},
    ]}
    s = start(config, tmp_path_factory.mktemp("keys"))
    assert any("api_keys=3" in line for line in s.log), "".join(s.log)
    yield s
    s.stop()
    assert s.proc.returncode == 0, "".join(s.log)
    log = "".join(s.log)
    for key in (SENDER_KEY, ADMIN_KEY, ALL_APPS_KEY, "pgk_wrong"):
        assert key not in log, "a key reached the log"


@pytest.fixture
def keyed(keyed_server):
    ch = grpc.insecure_channel(keyed_server.address)
    yield push_pb2_grpc.PushStub(ch), registry_pb2_grpc.RegistryStub(ch), ch
    ch.close()


def auth(key):
    return [("authorization", "Bearer " + key)]


def send_request(*apps_):
    return push_pb2.SendRequest(notifications=[
        push_pb2.Notification(app=a, tokens=[TOKEN], alert=push_pb2.Alert(title="Hi", body="key")) for a in apps_])


def test_health_needs_no_key(keyed):
    _, _, ch = keyed
    assert health(ch) == health_pb2.HealthCheckResponse.SERVING


def test_missing_key_is_unauthenticated(keyed):
    push, registry, _ = keyed
    code, details = failure(push.Send, send_request("demo"))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "authorization" in details and "missing" in details
    code, _ = failure(registry.ListTopics, registry_pb2.ListTopicsRequest())
    assert code == grpc.StatusCode.UNAUTHENTICATED


def test_wrong_or_malformed_key_is_unauthenticated_without_echoing_it(keyed):
    push, _, _ = keyed
    code, details = failure(push.Send, send_request("demo"), metadata=auth("pgk_wrong-key-1234"))
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "not valid" in details and "pgk_wrong" not in details
    code, details = failure(push.Send, send_request("demo"), metadata=[("authorization", "Basic " + SENDER_KEY)])
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "Bearer" in details and SENDER_KEY not in details


def test_unauthenticated_comes_before_request_validation(keyed):
    push, _, _ = keyed
    code, _ = failure(push.Send, push_pb2.SendRequest())
    assert code == grpc.StatusCode.UNAUTHENTICATED
    code, _ = failure(push.Send, push_pb2.SendRequest(), metadata=auth(SENDER_KEY))
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def test_a_key_sends_for_its_apps(keyed):
    push, _, _ = keyed
    reply = push.Send(send_request("demo", ""), metadata=auth(SENDER_KEY), timeout=10)
    assert [r.status for r in reply.results] == [push_pb2.STATUS_DELIVERED] * 2
    reply = push.Send(send_request("demo", "voipapp"), metadata=auth(ALL_APPS_KEY), timeout=10)
    assert [r.status for r in reply.results] == [push_pb2.STATUS_DELIVERED] * 2


def test_another_app_is_permission_denied_naming_the_field(keyed):
    push, _, _ = keyed
    code, details = failure(push.Send, send_request("demo", "demo", "voipapp"), metadata=auth(SENDER_KEY))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert details == 'notifications[2].app: key "sender" may not send for app "voipapp"'
    # An app that does not exist is denied too, without listing the configured apps.
    code, details = failure(push.Send, send_request("nope"), metadata=auth(SENDER_KEY))
    assert code == grpc.StatusCode.PERMISSION_DENIED and "voipapp" not in details


def test_send_stream_checks_every_request(keyed):
    push, _, _ = keyed
    replies = push.SendStream(iter([send_request("demo")]), metadata=auth(SENDER_KEY), timeout=10)
    assert [r.status for reply in replies for r in reply.results] == [push_pb2.STATUS_DELIVERED]
    code, details = failure(push.SendStream, iter([send_request("demo"), send_request("voipapp")]),
                            metadata=auth(SENDER_KEY))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert details == 'notifications[0].app: key "sender" may not send for app "voipapp"'
    code, _ = failure(push.SendStream, iter([send_request("demo")]))
    assert code == grpc.StatusCode.UNAUTHENTICATED


def test_registry_writes_need_admin_and_reads_any_key(keyed):
    _, registry, _ = keyed
    for call, request in [
        (registry.CreateTopic, registry_pb2.CreateTopicRequest(name="secured")),
        (registry.DeleteTopic, registry_pb2.DeleteTopicRequest(name="secured")),
        (registry.CreateEndpoint, registry_pb2.CreateEndpointRequest(app="demo", token="cd" * 32)),
        (registry.UpdateEndpoint, registry_pb2.UpdateEndpointRequest(id="x")),
        (registry.DeleteEndpoint, registry_pb2.DeleteEndpointRequest(id="x")),
        (registry.Subscribe, registry_pb2.SubscribeRequest(topic="secured", endpoint_id="x")),
        (registry.Unsubscribe, registry_pb2.UnsubscribeRequest(subscription_id="x")),
    ]:
        code, details = failure(call, request, metadata=auth(ALL_APPS_KEY))
        assert code == grpc.StatusCode.PERMISSION_DENIED, call
        assert 'key "everything" is not an admin key' in details
    topic = registry.CreateTopic(registry_pb2.CreateTopicRequest(name="secured"), metadata=auth(ADMIN_KEY), timeout=10)
    assert topic.name == "secured"
    endpoint = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token="cd" * 32),
                                       metadata=auth(ADMIN_KEY), timeout=10)
    registry.Subscribe(registry_pb2.SubscribeRequest(topic="secured", endpoint_id=endpoint.id),
                       metadata=auth(ADMIN_KEY), timeout=10)
    for key in (SENDER_KEY, ALL_APPS_KEY):
        topics = registry.ListTopics(registry_pb2.ListTopicsRequest(), metadata=auth(key), timeout=10)
        assert "secured" in [t.name for t in topics.topics]
        assert registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint.id), metadata=auth(key),
                                    timeout=10).id == endpoint.id
        registry.ListEndpoints(registry_pb2.ListEndpointsRequest(), metadata=auth(key), timeout=10)
        registry.ListSubscriptions(registry_pb2.ListSubscriptionsRequest(), metadata=auth(key), timeout=10)
        registry.ListApplications(registry_pb2.ListApplicationsRequest(), metadata=auth(key), timeout=10)


def test_publish_rules(keyed):
    push, registry, _ = keyed
    demo = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="demo", token="ce" * 32),
                                   metadata=auth(ADMIN_KEY), timeout=10)
    voip = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="voipapp", token="cf" * 32),
                                   metadata=auth(ADMIN_KEY), timeout=10)
    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="announcements"), metadata=auth(ADMIN_KEY), timeout=10)
    # An endpoint of the key's app: allowed; GetMessage is a read.
    reply = push.Publish(push_pb2.PublishRequest(endpoint_id=demo.id, message="hi"), metadata=auth(SENDER_KEY),
                         timeout=10)
    assert push.GetMessage(push_pb2.GetMessageRequest(message_id=reply.message_id), metadata=auth(SENDER_KEY),
                           timeout=10).message_id == reply.message_id
    code, details = failure(push.Publish, push_pb2.PublishRequest(endpoint_id=voip.id, message="hi"),
                            metadata=auth(SENDER_KEY))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    assert details == 'endpoint_id: key "sender" may not send for app "voipapp"'
    # Topics fan out to any app's endpoints: admin keys only, even for a key with every app.
    for key in (SENDER_KEY, ALL_APPS_KEY):
        code, details = failure(push.Publish, push_pb2.PublishRequest(topic="announcements", message="hi"),
                                metadata=auth(key))
        assert code == grpc.StatusCode.PERMISSION_DENIED and details.startswith("topic: key")
    push.Publish(push_pb2.PublishRequest(topic="announcements", message="hi"), metadata=auth(ADMIN_KEY), timeout=10)


def test_keys_and_mtls_together(tmp_path, lookalike, pki):
    s = start({"apps": apps(lookalike), "tls_cert_file": pki["server"], "tls_key_file": pki["server_key"],
               "client_ca_file": pki["ca"], "api_keys": [{"name": "sender", "key_sha256": sha256(SENDER_KEY),
                                                          "apps": ["demo"]}]}, tmp_path)
    try:
        with grpc.secure_channel(s.address, credentials(pki, client="client")) as ch:
            push = push_pb2_grpc.PushStub(ch)
            code, _ = failure(push.Send, send_request("demo"))
            assert code == grpc.StatusCode.UNAUTHENTICATED, "a client certificate does not replace the key"
            reply = push.Send(send_request("demo"), metadata=auth(SENDER_KEY), timeout=10)
            assert [r.status for r in reply.results] == [push_pb2.STATUS_DELIVERED]
    finally:
        s.stop()


# --- Listening on a non-loopback address ---

def serve(tmp_path, *flags):
    binary = os.environ.get("PUSHGATE_BIN", os.path.join(os.path.dirname(__file__), "..", "..", ".build", "debug",
                                                         "pushgate"))
    args = [binary, "serve", "--loops", "1", "--store", os.path.join(str(tmp_path), "pushgate.db")] + list(flags)
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_plaintext_on_a_non_loopback_address_refuses_to_start(tmp_path):
    proc = serve(tmp_path, "--listen", "0.0.0.0:0")
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 1, out
    assert "listen 0.0.0.0:0 is not a loopback address" in out
    for key in ("tls_cert_file", "tls_key_file", "allow_insecure"):
        assert key in out
    assert "msg=listening" not in out


def test_allow_insecure_serves_h2c_on_a_non_loopback_address(tmp_path):
    proc = serve(tmp_path, "--listen", "0.0.0.0:0", "--allow-insecure", "--no-demo")
    try:
        port, lines, deadline = None, [], time.time() + 20
        while time.time() < deadline and port is None:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"msg=listening address=0\.0\.0\.0:(\d+)", line)
            port = m and int(m.group(1))
        assert port, "".join(lines)
        lines.append(proc.stdout.readline())  # the warning follows the listening line
        # Only ever reached through loopback here; with no api_keys a loopback client is served.
        with grpc.insecure_channel("127.0.0.1:%d" % port) as ch:
            assert health(ch) == health_pb2.HealthCheckResponse.SERVING
            registry_pb2_grpc.RegistryStub(ch).ListTopics(registry_pb2.ListTopicsRequest(), timeout=10)
        assert any("no api_keys configured: only loopback clients are served" in line for line in lines), lines
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_tls_on_a_non_loopback_address_starts(tmp_path, pki):
    proc = serve(tmp_path, "--listen", "0.0.0.0:0", "--no-demo", "--tls-cert-file", pki["server"],
                 "--tls-key-file", pki["server_key"])
    try:
        port, lines, deadline = None, [], time.time() + 20
        while time.time() < deadline and port is None:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"msg=listening address=0\.0\.0\.0:(\d+)", line)
            port = m and int(m.group(1))
        assert port, "".join(lines)
        with grpc.secure_channel("127.0.0.1:%d" % port, credentials(pki)) as ch:
            assert health(ch) == health_pb2.HealthCheckResponse.SERVING
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_bad_tls_files_refuse_to_start_naming_the_keys(tmp_path, pki):
    proc = serve(tmp_path, "--listen", "127.0.0.1:0", "--tls-cert-file", "/nonexistent/cert.pem",
                 "--tls-key-file", pki["server_key"])
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 1 and "tls_cert_file" in out and "/nonexistent/cert.pem" in out, out
    proc = serve(tmp_path, "--listen", "127.0.0.1:0", "--tls-cert-file", pki["server"])
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 1 and "tls_cert_file, tls_key_file: set both" in out, out


def test_api_key_command_prints_a_key_and_its_hash():
    binary = os.environ.get("PUSHGATE_BIN", os.path.join(os.path.dirname(__file__), "..", "..", ".build", "debug",
                                                         "pushgate"))
    out = subprocess.run([binary, "api-key", "--name", "billing", "--apps", "demo"], check=True,
                         capture_output=True, text=True).stdout
    key = re.search(r"^key:\s+(\S+)$", out, re.M).group(1)
    digest = re.search(r"^key_sha256:\s+([0-9a-f]{64})$", out, re.M).group(1)
    assert digest == sha256(key)
    assert '"name": "billing"' in out and '"apps": ["demo"]' in out
    hashed = subprocess.run([binary, "api-key", "--hash"], input=key + "\n", check=True, capture_output=True,
                            text=True).stdout.strip()
    assert hashed == digest

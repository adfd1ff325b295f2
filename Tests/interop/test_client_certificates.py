"""Issue #46: a provider that refuses our client certificate. The refusing provider is Python's own
`ssl` (CERT_REQUIRED, an independent TLS implementation) in front of the APNs look-alike, with client
certificates from another CA and an expired one from the right CA; and `pushgate mock-apns
--client-ca` (plus `--certificate-goaway`, APNs's GOAWAY BadCertificate* way). A Send must answer
FAILED within 5 s naming the refusal, the gateway must back off (little CPU, a handful of
connections over 10 s), and the log must say it once with the certificate's subject. A valid
certificate delivers as before."""
import json
import os
import re
import time
import urllib.request

import grpc
import pytest

from client_cert_lookalike import ClientCertLookalikeAPNs, make_client_pki
from conftest import Server, adm_app_config, wait_metrics_port
from connect_proxy import ConnectProxy
from h2_lookalike import make_certificate
from mock_process import MockProcess
from pushgate.v1 import push_pb2, push_pb2_grpc

TOKEN = "ab" * 32
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("client-pki"))
    paths = make_client_pki(directory)
    paths["server"] = make_certificate(directory)
    return paths


@pytest.fixture
def provider(pki, request):
    server_cert, server_key = pki["server"]
    tls12_only = getattr(request, "param", None) == "TLS 1.2"
    lookalike = ClientCertLookalikeAPNs(server_cert, server_key, pki["ca"], tls12_only=tls12_only).start()
    yield lookalike
    lookalike.stop()


def cert_app(pki, which, port, **extra):
    cert, key = pki[which]
    app = {"name": "certapp", "platform": "apns", "bundle_id": "com.example.cert", "cert_file": cert,
           "key_file": key, "url": "https://127.0.0.1:%d" % port, "ca_file": pki["server"][0]}
    app.update(extra)
    return app


def send(server, timeout=30, app="certapp", token=TOKEN):
    with grpc.insecure_channel(server.address) as channel:
        started = time.monotonic()
        reply = push_pb2_grpc.PushStub(channel).Send(push_pb2.SendRequest(notifications=[
            push_pb2.Notification(app=app, tokens=[token], alert=push_pb2.Alert(title="Hi"))]),
            timeout=timeout)
        return reply.results[0], time.monotonic() - started


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime (fields 14, 15)


def metric(port, name, labels):
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith(name + "{") and all('%s="%s"' % kv in line for kv in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def refusal_lines(server):
    return [line for line in server.log if "level=error" in line and "refused the connection" in line]


@pytest.mark.parametrize("which,alert,via_proxy,provider", [("other", "unknown_ca", False, "TLS 1.3"),
                                                            ("expired", "certificate_expired", False, "TLS 1.3"),
                                                            ("other", "unknown_ca", True, "TLS 1.3"),
                                                            ("other", "unknown_ca", False, "TLS 1.2")],
                         indirect=["provider"])
def test_a_refused_certificate_fails_fast_backs_off_and_is_logged_once(tmp_path, pki, provider, which, alert,
                                                                      via_proxy):
    extra = {"allow_expired_certificate": True} if which == "expired" else {}
    proxy = ConnectProxy().start() if via_proxy else None
    if proxy:
        extra["proxy"] = "http://127.0.0.1:%d" % proxy.port
    server = Server({"apps": [cert_app(pki, which, provider.port, **extra)], "metrics_listen": "127.0.0.1:0"},
                    str(tmp_path))
    try:
        metrics_port = wait_metrics_port(server)
        result, first = send(server)
        reason = "ProviderUnreachable: the provider refused our client certificate (%s)" % alert
        assert result.status == push_pb2.STATUS_FAILED, result
        assert result.reason == reason, result
        assert first < 5, "answered after %.1f s" % first
        # Ten seconds of a Send every second: each FAILS at once, naming the refusal; the gateway
        # backs off (CPU, connections) and logs the error once.
        pid = server.proc.pid
        cpu_before, connections_before = cpu_seconds(pid), provider.tcp_connections
        window_start = time.monotonic()
        slowest = 0.0
        while time.monotonic() - window_start < 10:
            result, seconds = send(server)
            assert result.status == push_pb2.STATUS_FAILED and result.reason == reason, result
            slowest = max(slowest, seconds)
            time.sleep(max(0.0, 1.0 - seconds))
        window = time.monotonic() - window_start
        cpu = cpu_seconds(pid) - cpu_before
        connections = provider.tcp_connections - connections_before
        print("\n#46 %s%s%s: first Send FAILED in %.3f s; over %.1f s: gateway CPU %.2f s, %d connections "
              "(%d refused handshakes in all), slowest Send %.3f s"
              % (which, " via proxy" if via_proxy else "", " TLS 1.2" if provider.tls12_only else "", first, window, cpu, connections,
                 len(provider.refused), slowest))
        assert slowest < 5
        assert cpu < 1.0, "gateway CPU %.2f s over %.1f s" % (cpu, window)
        assert connections <= 10, "%d connections over %.1f s" % (connections, window)
        assert len(provider.refused) >= 1
        lines = refusal_lines(server)
        assert len(lines) == 1, "".join(lines) or "".join(server.log)
        assert "certificate_subject=" in lines[0] and "com.example.%s" % which in lines[0], lines[0]
        assert "certificate_expiry=" in lines[0] and "alert=%s" % alert in lines[0], lines[0]
        labels = {"app": "certapp", "alert": alert}
        deadline = time.time() + 5  # the last connection's refusal may still be on its way
        while (metric(metrics_port, "pushgate_provider_handshake_refusals_total", labels) != provider.tcp_connections
               and time.time() < deadline):
            time.sleep(0.05)
        refusals = metric(metrics_port, "pushgate_provider_handshake_refusals_total", labels)
        assert refusals == provider.tcp_connections, (refusals, provider.tcp_connections)
        if proxy:
            assert proxy.tunnels >= 1
    finally:
        server.stop()
        if proxy:
            proxy.stop()
    assert server.proc.returncode == 0, "".join(server.log)


def test_an_expired_certificate_refuses_to_load_unless_allowed(tmp_path, pki, provider):
    with pytest.raises(RuntimeError) as refused:
        Server({"apps": [cert_app(pki, "expired", provider.port)]}, str(tmp_path))
    message = str(refused.value)
    assert re.search(r"config\.apps\[0\]\.cert_file: the APNs client certificate .*com\.example\.expired expired on "
                     r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", message), message
    assert "allow_expired_certificate" in message, message


def test_a_valid_certificate_delivers_as_before(tmp_path, pki, provider):
    server = Server({"apps": [cert_app(pki, "good", provider.port)]}, str(tmp_path))
    try:
        for _ in range(3):
            result, _ = send(server)
            assert result.status == push_pb2.STATUS_DELIVERED, result
        assert provider.refused == [] and provider.tcp_connections == 1
        assert len(provider.requests) == 3 and all("authorization" not in h for h, _ in provider.requests)
        assert refusal_lines(server) == []
    finally:
        server.stop()


@pytest.mark.parametrize("flags,which,status,reason", [
    ([], "good", push_pb2.STATUS_DELIVERED, ""),
    ([], "other", push_pb2.STATUS_FAILED, "ProviderUnreachable: the provider refused our client certificate (unknown_ca)"),
    (["--certificate-goaway", "BadCertificateEnvironment"], "good", push_pb2.STATUS_FAILED,
     'ProviderUnreachable: the provider refused our client certificate (GOAWAY NO_ERROR {"reason":'
     '"BadCertificateEnvironment"})'),
])
def test_mock_apns_requires_client_certificates_like_apple(tmp_path, pki, flags, which, status, reason):
    mock = MockProcess("mock-apns", str(tmp_path / "mock"), flags=["--client-ca", pki["ca"]] + flags)
    try:
        app = cert_app(pki, which, mock.port)
        app["ca_file"] = mock.ca_file
        server = Server({"apps": [app]}, str(tmp_path))
        try:
            result, seconds = send(server)
            assert (result.status, result.reason) == (status, reason), result
            assert seconds < 5
            if status == push_pb2.STATUS_FAILED:
                result, seconds = send(server)
                assert result.reason == reason and seconds < 1, "during the backoff: at once"
        finally:
            server.stop()
    finally:
        mock.stop()
    stats = json.load(open(mock.stats_file))
    if which == "other":
        assert stats["handshake_failures"] >= 1
    if flags:
        assert stats["goaways_sent"] >= 1


def test_a_certificate_renewed_in_place_takes_effect_on_sighup(tmp_path, pki, provider):
    """The operator's fix: the refused certificate is replaced by a good one at the same path, then
    SIGHUP. The app's config did not change, but its certificate did: it gets a new client."""
    import shutil
    import signal

    cert, key = str(tmp_path / "app.pem"), str(tmp_path / "app.key")
    shutil.copy(pki["other"][0], cert)
    shutil.copy(pki["other"][1], key)
    app = cert_app(pki, "other", provider.port)
    app["cert_file"], app["key_file"] = cert, key
    server = Server({"apps": [app]}, str(tmp_path))
    try:
        result, _ = send(server)
        assert result.reason == "ProviderUnreachable: the provider refused our client certificate (unknown_ca)"
        shutil.copy(pki["good"][0], cert)
        shutil.copy(pki["good"][1], key)
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline and not any("configuration reloaded" in line for line in server.log):
            time.sleep(0.05)
        reloaded = [line for line in server.log if "configuration reloaded" in line]
        assert reloaded and "new_or_changed=certapp" in reloaded[-1], "".join(server.log)
        result, _ = send(server)
        assert result.status == push_pb2.STATUS_DELIVERED, result
    finally:
        server.stop()


def test_an_http1_provider_refusing_the_handshake_backs_off_the_same_way(tmp_path, pki, provider, adm_lookalike):
    """Every provider and transport: an ADM app over HTTP/1.1 (no client certificate; its token
    endpoint is the ADM look-alike) against the same server, whose handshake refuses it with
    certificate_required."""
    ca_file = str(tmp_path / "both-cas.pem")
    with open(ca_file, "w") as fh:
        fh.write(open(adm_lookalike.ca_file).read() + open(pki["server"][0]).read())
    app = adm_app_config("fire", adm_lookalike, url="https://127.0.0.1:%d" % provider.port, ca_file=ca_file,
                         http_version="1.1")
    server = Server({"apps": [app]}, str(tmp_path))
    try:
        before = provider.tcp_connections
        started = time.monotonic()
        results = []
        while time.monotonic() - started < 5:
            results.append(send(server, app="fire", token="amzn1.adm-registration.v3.Y29tLmV4YW1wbGU000001"))
            time.sleep(0.25)
        reason = "ProviderUnreachable: the provider refused our client certificate (certificate_required)"
        assert all(r.status == push_pb2.STATUS_FAILED and r.reason == reason for r, _ in results), results
        assert max(seconds for _, seconds in results) < 5
        print("\n#46 ADM over HTTP/1.1, 4 connections: %d Sends over 5 s, slowest %.3f s; %d TCP connections"
              % (len(results), max(seconds for _, seconds in results), provider.tcp_connections - before))
        assert provider.tcp_connections - before <= 8, provider.tcp_connections - before
        assert len(refusal_lines(server)) == 1, "".join(server.log)
    finally:
        server.stop()


def test_a_certificate_expiring_within_30_days_is_a_warning_at_start_and_on_sighup(tmp_path, pki, provider):
    import signal

    server = Server({"apps": [cert_app(pki, "soon", provider.port)]}, str(tmp_path))
    try:
        def warnings():
            return [line for line in server.log if "level=warning" in line and "certificate expires on" in line]

        assert len(warnings()) == 1, "".join(server.log)
        assert re.search(r"expires on \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", warnings()[0])
        assert "app=certapp" in warnings()[0] and "com.example.soon" in warnings()[0]
        result, _ = send(server)
        assert result.status == push_pb2.STATUS_DELIVERED, "a warning only: it still delivers"
        server.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline and len(warnings()) < 2:
            time.sleep(0.05)
        assert len(warnings()) == 2, "".join(server.log)
    finally:
        server.stop()

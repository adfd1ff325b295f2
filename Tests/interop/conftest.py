"""Interop tests: the real `pushgate` binary on loopback, driven by stock Python grpcio stubs that are
generated from proto/ at test time (so the .proto files alone must be enough), and by nghttp2's own
command-line client as an independent HTTP/2 peer."""
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
GEN = os.path.join(HERE, "gen")


def _generate_stubs():
    from grpc_tools import protoc

    os.makedirs(GEN, exist_ok=True)
    # grpc.health.v1 comes from the grpcio-health-checking package (what stock clients use); stubs
    # generated here under grpc/ would shadow the grpc package.
    protos = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "proto", "pushgate")):
        protos += [os.path.relpath(os.path.join(dirpath, f), os.path.join(ROOT, "proto"))
                   for f in files if f.endswith(".proto")]
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + os.path.join(ROOT, "proto"), "-I" + include,
                      "--python_out=" + GEN, "--grpc_python_out=" + GEN] + sorted(protos))
    assert rc == 0, "grpc_tools.protoc failed"


_generate_stubs()
sys.path.insert(0, GEN)
sys.path.insert(0, HERE)


class Server:
    """A `pushgate serve` child process on an ephemeral port."""

    def __init__(self, config, tmp_path, store=None, env=None, loops=2):
        binary = os.environ.get("PUSHGATE_BIN", os.path.join(ROOT, ".build", "debug", "pushgate"))
        if env is None:
            # Hermetic: a proxy set for this shell must not carry the gateway's loopback traffic.
            env = {k: v for k, v in os.environ.items()
                   if k not in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy")}
        self.store = store or os.path.join(tmp_path, "pushgate.db")
        args = [binary, "serve", "--listen", "127.0.0.1:0", "--loops", str(loops), "--store", self.store]
        if config is not None:
            config_path = os.path.join(tmp_path, "pushgate.json")
            with open(config_path, "w") as fh:
                json.dump(config, fh)
            args += ["--config", config_path]
        self.binary = binary
        self.log = []
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.port = None
        deadline = time.time() + 20
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.log.append(line)
            m = re.search(r"msg=listening address=127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            self.proc.kill()
            raise RuntimeError("pushgate did not start:\n" + "".join(self.log))
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        self.address = "127.0.0.1:%d" % self.port

    def _drain(self):
        for line in self.proc.stdout:
            self.log.append(line)

    def full_log(self, timeout=10):
        """The whole log of a process that has exited: waits for the reader to reach its end (it may
        still be behind when `wait` returns)."""
        self._drainer.join(timeout)
        return self.log

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise AssertionError("pushgate did not stop on SIGTERM within 10 s")


def rss_kib(server, field="VmRSS"):
    """A gateway's memory from /proc/PID/status: VmRSS now, or VmHWM (the peak), in KiB."""
    with open("/proc/%d/status" % server.proc.pid) as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s for pid %d" % (field, server.proc.pid))


def wait_metrics_port(server, timeout=10):
    """The port of a gateway's `metrics_listen` (port 0), from its "metrics listening" log line."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for line in list(server.log):
            m = re.search(r'msg="metrics listening" address=127\.0\.0\.1:(\d+)', line)
            if m:
                return int(m.group(1))
        time.sleep(0.02)
    raise AssertionError("no 'metrics listening' line:\n" + "".join(server.log))


def start_apns_lookalike(directory, kind=None, **options):
    """An APNs look-alike (`kind`: LookalikeAPNs or a subclass) on a new certificate, with a .p8 key
    for the apps' token auth (`server.ca_file`, `server.p8`)."""
    from apns_lookalike import LookalikeAPNs, make_certificate

    cert, key = make_certificate(directory)
    p8 = os.path.join(directory, "AuthKey_KEY1234567.p8")
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p8],
                   check=True, capture_output=True)
    server = (kind or LookalikeAPNs)(cert, key, **options).start()
    server.ca_file, server.p8 = cert, p8
    return server


@pytest.fixture(scope="session")
def lookalike(tmp_path_factory):
    """The independent APNs look-alike (Python ssl + h2), with a certificate and a .p8 key."""
    server = start_apns_lookalike(str(tmp_path_factory.mktemp("lookalike")), unregistered={"dd" * 32})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def fcm_lookalike(tmp_path_factory):
    """The independent FCM look-alike (Python ssl + h2 + PyJWT) with its own service account."""
    from fcm_lookalike import LookalikeFCM, write_service_account
    from h2_lookalike import make_certificate

    directory = str(tmp_path_factory.mktemp("fcm-lookalike"))
    cert, key = make_certificate(directory)
    path, account = write_service_account(directory)
    server = LookalikeFCM(cert, key, account, unregistered={"fcm-unregistered-token"}).start()
    server.ca_file = cert
    server.service_account_file = path
    yield server
    server.stop()


@pytest.fixture(scope="session")
def adm_lookalike(tmp_path_factory):
    """The independent ADM look-alike (Python ssl + http.server, HTTP/1.1 only) with a client id and a
    secret file."""
    from adm_lookalike import LookalikeADM
    from h2_lookalike import make_certificate

    directory = str(tmp_path_factory.mktemp("adm-lookalike"))
    cert, key = make_certificate(directory)
    secret = "secret-" + os.urandom(8).hex()
    server = LookalikeADM(cert, key, "amzn1.application-oa2-client.lookalike", secret).start()
    server.ca_file = cert
    server.client_secret_file = os.path.join(directory, "client-secret")
    with open(server.client_secret_file, "w") as fh:
        fh.write(secret + "\n")
    yield server
    server.stop()


def adm_app_config(name, adm, **extra):
    """An adm app delivering to `adm` (a look-alike or a mock-adm) on loopback."""
    app = {"name": name, "platform": "adm", "client_id": adm.client_id, "client_secret_file": adm.client_secret_file,
           "url": "https://127.0.0.1:%d" % adm.port, "token_url": adm.token_url, "ca_file": adm.ca_file}
    app.update(extra)
    return app


def fcm_app_config(name, fcm, **extra):
    """An fcm app delivering to `fcm` (a look-alike or a mock-fcm) on loopback."""
    app = {"name": name, "platform": "fcm", "service_account_file": fcm.service_account_file,
           "url": "https://127.0.0.1:%d" % fcm.port, "token_url": fcm.token_url, "ca_file": fcm.ca_file}
    app.update(extra)
    return app


def app_config(name, bundle_id, lookalike, **extra):
    app = {"name": name, "platform": "apns", "bundle_id": bundle_id, "team_id": "TEAM123456",
           "key_id": "KEY1234567", "key_file": lookalike.p8, "url": "https://127.0.0.1:%d" % lookalike.port,
           "ca_file": lookalike.ca_file}
    app.update(extra)
    return app


@pytest.fixture(scope="module")
def server(tmp_path_factory, lookalike):
    config = {"apps": [app_config("demo", "com.example.demo", lookalike),
                       app_config("voipapp", "com.example.voip", lookalike),
                       app_config("sandboxapp", "com.example.sandbox", lookalike, sandbox=True)]}
    s = Server(config, str(tmp_path_factory.mktemp("pushgate")))
    yield s
    s.stop()
    assert s.proc.returncode == 0, "pushgate exited with %s:\n%s" % (s.proc.returncode, "".join(s.log))


@pytest.fixture
def channel(server):
    import grpc

    ch = grpc.insecure_channel(server.address)
    yield ch
    ch.close()


def wait_done(push, message_id, timeout=60):
    """Polls GetMessage until the published message is COMPLETED or EXPIRED; answers it."""
    from pushgate.v1 import push_pb2

    deadline = time.time() + timeout
    message = None
    while time.time() < deadline:
        message = push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), timeout=10)
        if message.state in (push_pb2.MESSAGE_STATE_COMPLETED, push_pb2.MESSAGE_STATE_EXPIRED):
            return message
        time.sleep(0.05)
    raise AssertionError("message %s not done: %s" % (message_id, message))


PG_URL = os.environ.get("PUSHGATE_TEST_PG_URL", "")


def bench_token(i):
    """`pushgate load-subscribers`' token i (PushBench's BenchTokens.apns): "b" and i in 63 hex digits."""
    return "b%063x" % i


def load_subscribers(store, topic, app, count, first=0):
    """`pushgate load-subscribers`: `count` endpoints of `app` (tokens `first`...) subscribed to `topic`
    in `store` (a SQLite file or a PostgreSQL URL), in bulk; answers their tokens."""
    binary = os.environ.get("PUSHGATE_BIN", os.path.join(ROOT, ".build", "debug", "pushgate"))
    out = subprocess.run([binary, "load-subscribers", "--store", store, "--topic", topic, "--app", app,
                          "--count", str(count), "--first", str(first)],
                         check=True, capture_output=True, text=True, timeout=300)
    assert int(out.stdout) == count, out.stdout
    return [bench_token(i) for i in range(first, first + count)]


def psql(url, sql):
    """One statement through psql; answers its output rows as text."""
    out = subprocess.run(["psql", "-qAtX", "-v", "ON_ERROR_STOP=1", url, "-c", sql],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


@pytest.fixture
def database():
    """A fresh database on the PostgreSQL test server (PUSHGATE_TEST_PG_URL), dropped afterwards;
    answers its URL."""
    name = "pushgate_%s" % os.urandom(6).hex()
    psql(PG_URL, "CREATE DATABASE %s" % name)
    parts = urllib.parse.urlsplit(PG_URL)
    yield urllib.parse.urlunsplit(parts._replace(path="/" + name))
    psql(PG_URL, "DROP DATABASE %s WITH (FORCE)" % name)


def start_instances(tmp_path, url, configs):
    """One `pushgate serve` per config on the store at `url`, each in a directory of its own; none
    left running if one fails to start."""
    servers = []
    try:
        for index, config in enumerate(configs):
            directory = tmp_path / ("instance%d" % index)
            directory.mkdir()
            servers.append(Server(config, str(directory), store=url))
    except BaseException:
        for s in servers:
            s.stop()
        raise
    return servers

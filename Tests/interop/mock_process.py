"""`pushgate mock-apns` / `mock-fcm` / `mock-adm` / `mock-webpush` as child processes, for the fault suite, the crash
loop, the soak and the provider interop tests: started on an ephemeral port with fault flags, stopped with SIGTERM, and read back
through `--stats-file` (the counters plus 200s per device token)."""
import json
import os
import re
import signal
import ssl
import subprocess
import threading
import time
import urllib.request


def pushgate_binary():
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    return os.environ.get("PUSHGATE_BIN", os.path.join(root, ".build", "debug", "pushgate"))


class MockProcess:
    """A mock provider child process. `kind` is "mock-apns", "mock-fcm", "mock-adm" or "mock-webpush"."""

    def __init__(self, kind, directory, flags=(), binary=None, port=0):
        self.kind = kind
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        self.ca_file = os.path.join(directory, kind + "-ca.pem")
        self.stats_file = os.path.join(directory, kind + "-stats.json")
        args = [binary or pushgate_binary(), kind, "--listen", "127.0.0.1:%d" % port, "--loops", "1",
                "--stats-file", self.stats_file]
        if "--cert" not in flags:  # with --cert the caller knows what to trust
            args += ["--write-ca", self.ca_file]
        if kind == "mock-apns":
            self.p8 = os.path.join(directory, "AuthKey_KEY1234567.p8")
            if not os.path.exists(self.p8):
                subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                                "-out", self.p8], check=True, capture_output=True)
            args += ["--p8", self.p8, "--key-id", "KEY1234567", "--team-id", "TEAM123456"]
        elif kind == "mock-fcm":
            self.service_account_file = os.path.join(directory, "service-account.json")
            args += ["--write-service-account", self.service_account_file]
        elif kind == "mock-webpush":
            pass  # subscriptions are derived from its key seed: see subscriptions()
        else:
            self.client_id = "amzn1.application-oa2-client.interop"
            self.client_secret_file = os.path.join(directory, "adm-client-secret")
            args += ["--client-id", self.client_id, "--write-client-secret", self.client_secret_file]
        self.args = args + list(flags)
        self.log = []
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.port = None
        deadline = time.time() + 20
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.log.append(line)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if m and self.port is None:  # the first listener; mock-apns may name its channel API's next
                self.port = int(m.group(1))
            if self.port and line.startswith(kind + ": loops="):
                break  # the files are written before this line
        if self.port is None:
            self.proc.kill()
            raise RuntimeError("%s did not start:\n%s" % (kind, "".join(self.log)))
        threading.Thread(target=self._drain, daemon=True).start()
        self.url = "https://127.0.0.1:%d" % self.port
        self.token_url = self.url + ("/auth/o2/token" if kind == "mock-adm" else "/token")

    def subscriptions(self, count=1, prefix="", host=None):
        """mock-webpush: `count` new subscriptions from POST /_mock/subscriptions, each
        PushSubscription.toJSON() plus "private_key"; endpoints at `host` (default
        localhost:PORT, a name the generated certificate carries)."""
        body = json.dumps({"count": count, "prefix": prefix, "host": host or "localhost:%d" % self.port}).encode()
        request = urllib.request.Request(self.url + "/_mock/subscriptions", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        context = ssl.create_default_context(cafile=self.ca_file)
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return json.load(response)

    def _drain(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def stop(self):
        """SIGTERM, wait, and return the final stats (a dict)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)
        return self.stats()

    def stats(self):
        with open(self.stats_file) as fh:
            return json.load(fh)

    def apns_app(self, name, url_port=None, **extra):
        """An apns app entry for the gateway's config, delivering to this mock (or to `url_port`,
        e.g. a fault proxy in front of it)."""
        app = {"name": name, "platform": "apns", "bundle_id": "com.example." + name, "team_id": "TEAM123456",
               "key_id": "KEY1234567", "key_file": self.p8, "ca_file": self.ca_file,
               "url": "https://127.0.0.1:%d" % (url_port or self.port)}
        app.update(extra)
        return app

    def fcm_app(self, name, url_port=None, **extra):
        app = {"name": name, "platform": "fcm", "service_account_file": self.service_account_file,
               "ca_file": self.ca_file, "url": "https://127.0.0.1:%d" % (url_port or self.port),
               "token_url": self.token_url}
        app.update(extra)
        return app

    def adm_app(self, name, url_port=None, **extra):
        app = {"name": name, "platform": "adm", "client_id": self.client_id,
               "client_secret_file": self.client_secret_file, "ca_file": self.ca_file,
               "url": "https://127.0.0.1:%d" % (url_port or self.port), "token_url": self.token_url}
        app.update(extra)
        return app

"""An APNs look-alike written independently of Pushgate's own mock: Python's `ssl` for TLS and the
`h2` library (hyper-h2) for HTTP/2. It answers like Apple (a 200 is one HEADERS frame with END_STREAM
and the apns-id; errors are JSON `{"reason": ...}`), checks every request the way APNs would, and
records what it received, so the interop tests can hold Pushgate's requests against a peer that
shares none of its code."""
import asyncio
import json
import re
import ssl
import subprocess
import threading
import uuid

import h2.config
import h2.connection
import h2.events
import h2.settings

TOKEN_RE = re.compile(r"^[0-9a-f]{64,200}$")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
PUSH_TYPES = {"alert", "background", "voip", "complication", "fileprovider", "mdm", "location",
              "liveactivity", "pushtotalk", "widgets", "controls"}


def make_certificate(directory):
    """A self-signed certificate for 127.0.0.1 made with the openssl command line."""
    cert, key = directory + "/lookalike.pem", directory + "/lookalike.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    return cert, key


class LookalikeAPNs:
    """Runs on its own thread with its own asyncio loop."""

    def __init__(self, cert, key, max_streams=1000, unregistered=()):
        self.cert, self.key = cert, key
        self.max_streams = max_streams
        self.unregistered = set(unregistered)
        self.requests = []          # (headers dict, body bytes)
        self.invalid = []           # descriptions of requests APNs would refuse
        self.max_open_streams = 0
        self.connections = 0
        self.port = None
        self._ready = threading.Event()
        self._loop = None
        self._server = None

    def start(self):
        threading.Thread(target=self._run, daemon=True).start()
        if not self._ready.wait(10):
            raise RuntimeError("look-alike APNs did not start")
        return self

    def stop(self):
        if self._loop:
            self._loop.call_soon_threadsafe(self._loop.stop)

    def _run(self):
        self._loop = asyncio.new_event_loop()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        context.set_alpn_protocols(["h2"])
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=context))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, reader, writer):
        self.connections += 1
        conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False,
                                                                           header_encoding="utf-8"))
        conn.initiate_connection()
        conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.max_streams})
        writer.write(conn.data_to_send())
        streams = {}
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        streams[event.stream_id] = (dict(event.headers), bytearray())
                        self.max_open_streams = max(self.max_open_streams, len(streams))
                    elif isinstance(event, h2.events.DataReceived):
                        streams[event.stream_id][1].extend(event.data)
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        headers, body = streams.pop(event.stream_id)
                        self._answer(conn, event.stream_id, headers, bytes(body))
                writer.write(conn.data_to_send())
                await writer.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    def _check(self, headers, body):
        """The reason APNs would refuse the request with, or None."""
        path = headers.get(":path", "")
        if headers.get(":method") != "POST":
            return 405, "MethodNotAllowed"
        if not path.startswith("/3/device/"):
            return 404, "BadPath"
        if not TOKEN_RE.match(path[len("/3/device/"):]):
            return 400, "BadDeviceToken"
        if not headers.get("authorization", "").startswith("bearer "):
            return 403, "MissingProviderToken"
        if not headers.get("apns-topic"):
            return 400, "MissingTopic"
        push_type = headers.get("apns-push-type")
        if push_type is not None and push_type not in PUSH_TYPES:
            return 400, "InvalidPushType"
        if headers.get("apns-priority", "10") not in ("1", "5", "10"):
            return 400, "BadPriority"
        if "apns-id" in headers and not UUID_RE.match(headers["apns-id"]):
            return 400, "BadMessageId"
        if not body:
            return 400, "PayloadEmpty"
        if len(body) > (5120 if push_type == "voip" else 4096):
            return 413, "PayloadTooLarge"
        try:
            if not isinstance(json.loads(body), dict):
                return 400, "PayloadEmpty"
        except ValueError:
            return 400, "PayloadEmpty"
        return None

    def _answer(self, conn, stream_id, headers, body):
        apns_id = headers.get("apns-id") or str(uuid.uuid4())
        problem = self._check(headers, body)
        self.requests.append((headers, body))
        token = headers.get(":path", "")[len("/3/device/"):]
        if problem is None and token in self.unregistered:
            problem = (410, "Unregistered")
        if problem is None:
            conn.send_headers(stream_id, [(":status", "200"), ("apns-id", apns_id)], end_stream=True)
            return
        self.invalid.append((problem, headers.get(":path")))
        status, reason = problem
        payload = {"reason": reason}
        if status == 410:
            payload["timestamp"] = 1700000000000
        data = json.dumps(payload).encode()
        conn.send_headers(stream_id, [(":status", str(status)), ("content-type", "application/json"),
                                      ("apns-id", apns_id)])
        conn.send_data(stream_id, data, end_stream=True)

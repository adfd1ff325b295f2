"""An APNs look-alike written independently of Pushgate's own mock: Python's `ssl` for TLS and the
`h2` library (hyper-h2) for HTTP/2. It answers like Apple (a 200 is one HEADERS frame with END_STREAM
and the apns-id; errors are JSON `{"reason": ...}`), checks every request the way APNs would, and
records what it received, so the interop tests can hold Pushgate's requests against a peer that
shares none of its code."""
import json
import re
import uuid

from h2_lookalike import H2Lookalike, make_certificate  # noqa: F401 (make_certificate is re-exported)

TOKEN_RE = re.compile(r"^[0-9a-f]{64,200}$")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
PUSH_TYPES = {"alert", "background", "voip", "complication", "fileprovider", "mdm", "location",
              "liveactivity", "pushtotalk", "widgets", "controls"}


class LookalikeAPNs(H2Lookalike):
    name = "look-alike APNs"

    def __init__(self, cert, key, max_streams=1000, unregistered=()):
        super().__init__(cert, key, max_streams)
        self.unregistered = set(unregistered)
        self.channels = {}          # bundle id -> {channel id: storage policy} (LookalikeChannelAPI's)
        self.requests = []          # (headers dict, body bytes)
        self.invalid = []           # descriptions of requests APNs would refuse

    def _check(self, headers, body):
        """The reason APNs would refuse the request with, or None."""
        path = headers.get(":path", "")
        if headers.get(":method") != "POST":
            return 405, "MethodNotAllowed"
        if path.startswith("/4/broadcasts/apps/"):
            return self._check_broadcast(path[len("/4/broadcasts/apps/"):], headers, body)
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
        return self._payload_problem(body)

    @staticmethod
    def _payload_problem(body):
        """A body that is not one JSON object: no documented reason; PayloadEmpty as the mock."""
        try:
            if not isinstance(json.loads(body), dict):
                return 400, "PayloadEmpty"
        except ValueError:
            return 400, "PayloadEmpty"
        return None

    def _check_broadcast(self, bundle, headers, body):
        """A broadcast on a channel of `bundle` (docs/providers.md A.10): the channel in
        apns-channel-id, push type liveactivity, no topic, expiration 0 on a channel that stores
        nothing; the reason APNs would refuse it with, or None."""
        if not headers.get("authorization", "").startswith("bearer "):
            return 403, "MissingProviderToken"
        channel = headers.get("apns-channel-id")
        if channel is None:
            return 400, "MissingChannelId"
        policy = self.channels.get(bundle, {}).get(channel)
        if policy is None:
            return 400, "ChannelNotRegistered"  # Apple: 400 (404 is only BadPath)
        if headers.get("apns-push-type") != "liveactivity":
            return 400, "InvalidPushType"
        if headers.get("apns-priority", "10") not in ("1", "5", "10"):
            return 400, "BadPriority"
        if policy == 0 and headers.get("apns-expiration") != "0":
            return 400, "BadExpirationDate"
        return self._payload_problem(body)

    def _answer(self, conn, stream_id, headers, body):
        apns_id = headers.get("apns-id") or str(uuid.uuid4())
        problem = self._check(headers, body)
        self.requests.append((headers, body))
        token = headers.get(":path", "")[len("/3/device/"):]
        if problem is None and headers.get(":path", "").startswith("/3/device/") and token in self.unregistered:
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

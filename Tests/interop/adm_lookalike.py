"""An Amazon Device Messaging look-alike written independently of Pushgate's own mock-adm: Python's
`http.server` behind `ssl`, HTTP/1.1 only (ALPN `http/1.1`, keep-alive), as Amazon's
api.amazon.com is (see h1_lookalike). It plays Login with Amazon's token endpoint (client-credentials
grant) and ADM's send endpoint on one port, checks requests as Amazon documents them, and records
every message it accepted. Registration ids steer it: `adm-dead-…` are unregistered (410),
`adm-bad-…` are refused 400 InvalidRegistrationId,
`adm-old-X` answer the canonical id `adm-new-X`, `adm-slow-…` get one 429 MaxRateExceeded with
Retry-After 1 before they are accepted, `adm-cut-…` get their first answer cut off by a close
(the status line and part of the body)."""
import json
import re
import secrets
import time
import urllib.parse

from h1_lookalike import H1Lookalike

SEND_RE = re.compile(r"^/messaging/registrations/([^/]+)/messages$")
TYPE_VERSION = "com.amazon.device.messaging.ADMMessage@1.0"
ACCEPT_TYPE = "com.amazon.device.messaging.ADMSendResult@1.0"


class LookalikeADM(H1Lookalike):
    name = "look-alike ADM"

    def __init__(self, cert, key, client_id, client_secret, token_lifetime=3600, close_after=None):
        super().__init__(cert, key, close_after=close_after)
        self.client_id, self.client_secret = client_id, client_secret
        self.token_lifetime = token_lifetime
        self.tokens = {}            # access token -> expiry (Unix seconds)
        self.token_requests = 0
        self.messages = []          # (registration id, body dict) accepted
        self.refused = []           # (status, reason)
        self.slowed = set()
        self.cut = set()
        self.huge_cut = False

    @property
    def token_url(self):
        return "https://127.0.0.1:%d/auth/o2/token" % self.port

    def _answer(self, conn, stream_id, headers, body):
        path = headers.get(":path", "")
        if path == "/auth/o2/token":
            return self._token(conn, stream_id, body)
        m = SEND_RE.match(path)
        if headers.get(":method") != "POST" or not m:
            return self._refuse(conn, stream_id, 404, "NotFound")
        registration_id = urllib.parse.unquote(m.group(1))
        auth = headers.get("authorization", "")
        expiry = self.tokens.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
        if expiry is None or expiry < time.time():
            return self._refuse(conn, stream_id, 401, "AccessTokenExpired")
        if headers.get("x-amzn-type-version") != TYPE_VERSION or headers.get("x-amzn-accept-type") != ACCEPT_TYPE:
            return self._refuse(conn, stream_id, 400, "InvalidData")
        if len(body) > 6144:
            return self._refuse(conn, stream_id, 413, "MessageTooLarge")
        try:
            message = json.loads(body)
            data = message.get("data", {})
            assert isinstance(message, dict) and isinstance(data, dict)
            assert all(isinstance(v, str) for v in data.values())
        except (ValueError, AssertionError, AttributeError):
            return self._refuse(conn, stream_id, 400, "InvalidData")
        if "consolidationKey" in message and not isinstance(message["consolidationKey"], str):
            return self._refuse(conn, stream_id, 400, "InvalidConsolidationKey")
        if "expiresAfter" in message and not (isinstance(message["expiresAfter"], int)
                                              and 1 <= message["expiresAfter"] <= 2592000):
            return self._refuse(conn, stream_id, 400, "InvalidExpiration")
        if registration_id.startswith("adm-dead-"):
            return self._refuse(conn, stream_id, 410, "Unregistered")
        if registration_id.startswith("adm-bad-"):
            return self._refuse(conn, stream_id, 400, "InvalidRegistrationId")
        if registration_id.startswith("adm-slow-") and registration_id not in self.slowed:
            self.slowed.add(registration_id)
            return self._refuse(conn, stream_id, 429, "MaxRateExceeded", [("retry-after", "1")])
        if registration_id.startswith("adm-huge-"):
            # A 10 MB error body: the client should stop reading long before its end.
            conn.send_response(400)
            conn.send_header("Content-Type", "application/json")
            conn.send_header("Content-Length", str(10 << 20))
            conn.end_headers()
            try:
                conn.wfile.write(b'{"reason":"InvalidData"' + b" " * ((10 << 20) - 24) + b"}")
                conn.wfile.flush()
            except OSError:
                self.huge_cut = True
            conn.close_connection = True
            return
        if registration_id.startswith("adm-cut-") and registration_id not in self.cut:
            self.cut.add(registration_id)
            conn.send_response(200)
            conn.send_header("Content-Length", "40")
            conn.end_headers()
            conn.wfile.write(b'{"registrationID":')
            conn.wfile.flush()
            conn.close_connection = True
            return
        self.messages.append((registration_id, message))
        answer = registration_id
        if registration_id.startswith("adm-old-"):
            answer = "adm-new-" + registration_id[len("adm-old-"):]
        self.send_json(conn, stream_id, 200, {"registrationID": answer},
                       [("x-amzn-requestid", secrets.token_hex(8))])

    def _token(self, conn, stream_id, body):
        self.token_requests += 1
        form = dict(urllib.parse.parse_qsl(body.decode()))
        if form.get("grant_type") != "client_credentials":
            return self.send_json(conn, stream_id, 400, {"error": "unsupported_grant_type"})
        if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
            return self.send_json(conn, stream_id, 401, {"error": "invalid_client",
                                                         "error_description": "Client authentication failed"})
        if form.get("scope") != "messaging:push":
            return self.send_json(conn, stream_id, 400, {"error": "invalid_scope"})
        token = "Atc|" + secrets.token_urlsafe(24)
        self.tokens[token] = time.time() + self.token_lifetime
        self.send_json(conn, stream_id, 200, {"access_token": token, "expires_in": self.token_lifetime,
                                              "scope": "messaging:push", "token_type": "bearer"})

    def revoke_tokens(self):
        """Forget every access token issued (the next sends get 401 AccessTokenExpired)."""
        self.tokens.clear()

    def _refuse(self, conn, stream_id, status, reason, extra_headers=()):
        self.refused.append((status, reason))
        self.send_json(conn, stream_id, status, {"reason": reason}, extra_headers)

"""A Web Push push-service look-alike written independently of Pushgate's own mock-webpush: Python's
`http.server` behind `ssl` (see h1_lookalike; HTTP/1.1, which every push service speaks), `cryptography`
for the subscriber's keys and the VAPID check, and http_ece (PyPI) to decrypt. It plays both sides a
browser and its push service play:

- `subscriptions(n)` makes n subscriptions as a browser would (a P-256 key pair and a 16-byte auth
  secret each, endpoints at https://localhost:PORT/wpush/<id>) and answers PushSubscription.toJSON()
  for each;
- a POST to an endpoint is checked as RFC 8030/8291/8292 ask (TTL header, `Content-Encoding:
  aes128gcm`, a `vapid t=…, k=…` Authorization whose ES256 JWT verifies with k and names this origin
  as its audience), decrypted with the subscriber's private key, recorded, and answered 201 with a
  Location; anything it cannot accept is answered 400/401/404 and recorded in `refused`.

Tests read `messages` (dicts: subscription id, headers, plaintext bytes) to see exactly what a
browser would have been handed."""
import base64
import json
import os
import re
import threading
import time

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from h1_lookalike import H1Lookalike

PATH_RE = re.compile(r"^/wpush/([A-Za-z0-9_-]+)$")
VAPID_RE = re.compile(r"^vapid\s+(.*)$", re.IGNORECASE)


def b64url_encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class LookalikeWebPush(H1Lookalike):
    name = "look-alike Web Push service"

    def __init__(self, cert, key, host="localhost"):
        super().__init__(cert, key)
        self.host = host
        self.keys = {}              # subscription id -> (private key, auth secret)
        self.messages = []          # {"subscription", "headers", "plaintext"} accepted
        self.refused = []           # (status, why) of refused requests
        self._record_lock = threading.Lock()

    @property
    def origin(self):
        return "https://%s:%d" % (self.host, self.port)

    def subscriptions(self, count=1, prefix="sub-"):
        """`count` new subscriptions, each as PushSubscription.toJSON() gives it."""
        made = []
        for _ in range(count):
            sid = prefix + os.urandom(6).hex()
            private_key = ec.generate_private_key(ec.SECP256R1())
            auth = os.urandom(16)
            self.keys[sid] = (private_key, auth)
            public = private_key.public_key().public_bytes(serialization.Encoding.X962,
                                                           serialization.PublicFormat.UncompressedPoint)
            made.append({"endpoint": "%s/wpush/%s" % (self.origin, sid), "expirationTime": None,
                         "keys": {"p256dh": b64url_encode(public), "auth": b64url_encode(auth)}})
        return made

    def for_subscription(self, subscription):
        """The recorded messages to one subscription (a toJSON() dict)."""
        sid = subscription["endpoint"].rsplit("/", 1)[1]
        return [m for m in list(self.messages) if m["subscription"] == sid]

    def _refuse(self, conn, status, why):
        with self._record_lock:
            self.refused.append((status, why))
        self.send_json(conn, None, status, {"error": why})

    def _vapid_problem(self, authorization):
        """RFC 8292: `vapid t=<JWT>, k=<key>`; the JWT an ES256 one that verifies with k, `aud` this
        push service's origin, `exp` within 24 hours, a `sub`. Answers what is wrong, or None."""
        m = VAPID_RE.match(authorization or "")
        if not m:
            return "no vapid Authorization"
        params = dict(p.strip().split("=", 1) for p in m.group(1).split(",") if "=" in p)
        token, key = params.get("t"), params.get("k")
        if not token or not key:
            return "vapid t= and k= are required"
        try:
            header, claims, signature = token.split(".")
            public_key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64url_decode(key))
            raw = b64url_decode(signature)
            der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
            public_key.verify(der, (header + "." + claims).encode(), ec.ECDSA(hashes.SHA256()))
            if json.loads(b64url_decode(header)).get("alg") != "ES256":
                return "alg is not ES256"
            body = json.loads(b64url_decode(claims))
        except (ValueError, InvalidSignature, KeyError):
            return "the VAPID JWT does not verify"
        if body.get("aud") != self.origin:
            return "aud %r is not %s" % (body.get("aud"), self.origin)
        if not (time.time() < body.get("exp", 0) <= time.time() + 24 * 3600 + 60):
            return "exp out of range"
        if not body.get("sub"):
            return "no sub"
        return None

    def _answer(self, conn, stream_id, headers, body):
        m = PATH_RE.match(headers.get(":path", ""))
        if headers.get(":method") != "POST" or not m:
            return self._refuse(conn, 404, "no such endpoint " + headers.get(":path", ""))
        sid = m.group(1)
        if sid not in self.keys:
            return self._refuse(conn, 404, "unknown subscription " + sid)
        problem = self._vapid_problem(headers.get("authorization"))
        if problem:
            return self._refuse(conn, 401, problem)
        if "ttl" not in headers:
            return self._refuse(conn, 400, "no TTL header")
        if headers.get("content-encoding", "").lower() != "aes128gcm":
            return self._refuse(conn, 400, "Content-Encoding is not aes128gcm")
        private_key, auth = self.keys[sid]
        try:
            plaintext = http_ece.decrypt(body, private_key=private_key, auth_secret=auth, version="aes128gcm")
        except Exception as e:  # http_ece raises several kinds
            return self._refuse(conn, 400, "does not decrypt: %r" % (e,))
        with self._record_lock:
            self.messages.append({"subscription": sid, "headers": headers, "plaintext": plaintext})
            n = len(self.messages)
        conn.send_response(201)
        conn.send_header("Location", "%s/m/%d" % (self.origin, n))
        conn.send_header("Content-Length", "0")
        conn.end_headers()

"""An FCM HTTP v1 look-alike written independently of Pushgate's own mock-fcm: Python `ssl` + `h2`
(see h2_lookalike), PyJWT + cryptography for the OAuth2 side. It plays both Google endpoints on one
port: the token endpoint (checks the RS256 assertion against the service account's public key, as
Google does) and `messages:send` (checks the bearer token and the message, as FCM does). It records
every message it accepted, so tests can hold Pushgate's FCM requests against a peer that shares
none of its code."""
import json
import os
import re
import secrets
import time
import urllib.parse

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from h2_lookalike import H2Lookalike

SEND_RE = re.compile(r"^/v1/projects/([a-z0-9-]+)/messages:send$")
SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def write_service_account(directory, project_id="lookalike-project"):
    """A fresh RSA key and a service-account JSON file for it; answers (path, account dict)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    account = {"type": "service_account", "project_id": project_id, "private_key_id": secrets.token_hex(20),
               "private_key": pem, "client_email": "pushgate@%s.iam.gserviceaccount.com" % project_id,
               "client_id": "1", "token_uri": "https://oauth2.googleapis.com/token"}
    path = os.path.join(directory, "service-account.json")
    with open(path, "w") as fh:
        json.dump(account, fh)
    return path, account


class LookalikeFCM(H2Lookalike):
    name = "look-alike FCM"

    def __init__(self, cert, key, account, unregistered=(), token_lifetime=3600):
        super().__init__(cert, key, max_streams=100)
        self.account = account
        self.public_key = serialization.load_pem_private_key(account["private_key"].encode(), None).public_key()
        self.unregistered = set(unregistered)
        self.token_lifetime = token_lifetime
        self.tokens = {}            # access token -> expiry (Unix seconds)
        self.token_requests = 0
        self.messages = []          # (registration token or FID, message dict) accepted
        self.refused = []           # (status, reason) of refused requests

    @property
    def token_url(self):
        return "https://127.0.0.1:%d/token" % self.port

    def _answer(self, conn, stream_id, headers, body):
        path = headers.get(":path", "")
        if path == "/token":
            self._token(conn, stream_id, headers, body)
            return
        m = SEND_RE.match(path)
        if headers.get(":method") != "POST" or not m:
            return self._error(conn, stream_id, 404, "NOT_FOUND", None, "no such method " + path)
        if m.group(1) != self.account["project_id"]:
            return self._error(conn, stream_id, 403, "PERMISSION_DENIED", None, "wrong project " + m.group(1))
        auth = headers.get("authorization", "")
        expiry = self.tokens.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
        if expiry is None or expiry < time.time():
            return self._error(conn, stream_id, 401, "UNAUTHENTICATED", None,
                               "Request had invalid authentication credentials.")
        try:
            message = json.loads(body)["message"]
            assert isinstance(message, dict)
        except (ValueError, KeyError, TypeError, AssertionError):
            return self._error(conn, stream_id, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "bad JSON")
        # The target is a union (exactly one of them); `fid`, a Firebase Installation ID, joined
        # token, topic and condition in 2026 (firebase-admin's FidMessage; providers_2026.md).
        targets = [k for k in ("token", "fid", "topic", "condition") if k in message]
        if len(targets) != 1:
            return self._error(conn, stream_id, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT",
                               "exactly one of fid, token, topic, condition")
        if "fid" in message and (not isinstance(message["fid"], str) or not message["fid"]):
            return self._error(conn, stream_id, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT",
                               "fid must be a non-empty string")
        data = message.get("data", {})
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            return self._error(conn, stream_id, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT",
                               "data values must be strings")
        # An unregistered FID is answered as an unregistered token is: 404 NOT_FOUND with the
        # FcmError UNREGISTERED (firebase-admin maps either to installation-id-not-registered).
        token = message.get("token", message.get("fid", ""))
        if token in self.unregistered:
            return self._error(conn, stream_id, 404, "NOT_FOUND", "UNREGISTERED", "Requested entity was not found.")
        self.messages.append((token, message))
        name = "projects/%s/messages/0:%d" % (self.account["project_id"], len(self.messages))
        self.send_json(conn, stream_id, 200, {"name": name})

    def _token(self, conn, stream_id, headers, body):
        self.token_requests += 1
        form = dict(urllib.parse.parse_qsl(body.decode()))
        if form.get("grant_type") != GRANT:
            return self.send_json(conn, stream_id, 400, {"error": "unsupported_grant_type"})
        try:
            claims = jwt.decode(form.get("assertion", ""), self.public_key, algorithms=["RS256"],
                                audience=self.token_url)
        except jwt.PyJWTError as e:
            return self.send_json(conn, stream_id, 400, {"error": "invalid_grant", "error_description": str(e)})
        if claims.get("iss") != self.account["client_email"] or SCOPE not in claims.get("scope", "").split():
            return self.send_json(conn, stream_id, 400, {"error": "invalid_scope"})
        if claims["exp"] - claims["iat"] > 3600:
            return self.send_json(conn, stream_id, 400, {"error": "invalid_grant", "error_description": "too long"})
        token = "ya29." + secrets.token_urlsafe(24)
        self.tokens[token] = time.time() + self.token_lifetime
        self.send_json(conn, stream_id, 200,
                       {"access_token": token, "expires_in": self.token_lifetime, "token_type": "Bearer"})

    def revoke_tokens(self):
        """Forget every access token issued (the next sends get 401)."""
        self._loop.call_soon_threadsafe(self.tokens.clear)

    def _error(self, conn, stream_id, status, canonical, code, message):
        self.refused.append((status, code or canonical))
        details = []
        if code:
            details.append({"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code})
        self.send_json(conn, stream_id, status,
                       {"error": {"code": status, "message": message, "status": canonical, "details": details}})

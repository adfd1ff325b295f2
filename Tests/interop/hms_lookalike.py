"""A Huawei Push Kit look-alike written from Huawei's documentation alone, independently of Pushgate's
own code (see hms_lookalike.md for what each behaviour rests on, and what could not be verified).

One TLS port plays three Huawei endpoints:

- `POST /v3/{projectId}/messages:send` (HarmonyOS NEXT "scenario" messages): the `Authorization:
  Bearer <JWT>` is verified on every request as Huawei's "Generating a JWT Based on a Service Account"
  page describes it: header `{"kid": <key_id>, "typ": "JWT", "alg": "PS256"}`, claims `iss` =
  `sub_account`, `aud` = `https://oauth-login.cloud.huawei.com/oauth2/v3/token`, `iat`, `exp`, signed
  SHA256withRSA/PSS (RFC 7518 PS256: MGF1-SHA256, salt = 32 bytes) with the service account's key;
  the path's projectId must be the account's `project_id`; the `push-type` header and the body
  (`payload` / `target` / `pushOptions`) are checked against the request-body reference.
- `POST /oauth2/v3/token`: OAuth 2.0 client credentials (form `grant_type=client_credentials`,
  `client_id`, `client_secret`), answering `{"access_token", "expires_in", "token_type"}` with the
  access token's `/` escaped as `\\/`, as Huawei's own page warns it is.
- `POST /v1/{appId}/messages:send` (HMS Core Push Kit, the OAuth 2.0 API): the bearer must be an
  access token this look-alike issued for that app id and still valid; the body is
  `{"validate_only": …, "message": {…, "token": [...]}}`.

Answers are Huawei's `{"code", "msg", "requestId"}`: 80000000 success, 80100000 partial success,
80300007 all tokens invalid, 80200001/80200003/80200005 credential errors, 80100001/80100003/80300008/
80300010 request errors, and HTTP 503 for flow control. Device tokens steer it (`add_invalid`,
`script`, `fail_next`), and every request is recorded (`requests`, `token_requests`) for the tests.

TLS with ALPN `h2` and `http/1.1` (both; which one Huawei's push-api.cloud.huawei.com offers is not
documented and could not be probed from here): HTTP/2 through `h2_lookalike.H2Lookalike`, HTTP/1.1
(keep-alive, Content-Length or chunked bodies) through a small asyncio parser below."""
import asyncio
import base64
import json
import os
import re
import secrets
import ssl
import threading
import time
import urllib.parse

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from h2_lookalike import H2Lookalike, make_certificate

# Huawei's fixed JWT audience (the `aud` claim) and the URLs of a console-made service-account file.
JWT_AUDIENCE = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"
AUTH_URI = "https://oauth-login.cloud.huawei.com/oauth2/v3/authorize"
CERTS_URI = "https://oauth-login.cloud.huawei.com/oauth2/v3/certs"
X509_URI = "https://oauth-login.cloud.huawei.com/oauth2/v3/x509?client_id="

TOKEN_PATH = "/oauth2/v3/token"
V3_SEND = re.compile(r"^/v3/([^/?]+)/messages:send$")
V1_SEND = re.compile(r"^/v1/([^/?]+)/messages:send$")

PUSH_TYPES = {"0", "1", "2", "6", "7", "10"}
# Notification.category (push-type 0): the documented values.
CATEGORIES = {"IM", "VOIP", "MISS_CALL", "SUBSCRIPTION", "TRAVEL", "HEALTH", "WORK", "ACCOUNT", "EXPRESS",
              "FINANCE", "DEVICE_REMINDER", "MAIL", "PLAY_VOICE", "MARKETING"}
MAX_TOKENS = 1000            # target.token / message.token: 1 to 1000 per request
MAX_TEST_TOKENS = 10         # pushOptions.testMessage true: at most 10 tokens
MAX_MESSAGE_BYTES = 4096     # the message body, Push Tokens not counted
MAX_TTL = 1296000            # pushOptions.ttl: 15 days
MAX_JWT_PERIOD = 86400       # 80300036: "JWT expire period over threshold" (over one day)

# The documented members of each v3 object (anything else is recorded in `unknown`).
V3_KEYS = {
    "": {"payload", "target", "pushOptions"},
    "pushOptions": {"testMessage", "ttl", "biTag", "receiptId", "collapseKey", "backgroundMode"},
    "target": {"token"},
    "payload.notification": {"category", "title", "body", "image", "style", "bigTitle", "bigBody", "notifyId",
                             "appMessageId", "profileId", "inboxContent", "clickAction", "badge", "sound",
                             "soundDuration", "foregroundShow"},
    "payload.notification.clickAction": {"actionType", "action", "uri", "data"},
    "payload.notification.badge": {"addNum", "setNum"},
}
V3_PAYLOAD_KEYS = {"0": {"notification"}, "2": {"notification", "extraData"}, "6": {"extraData", "proxyData"}}
# The v1 message (HMS Core server SDK model: HMS-Core/hms-push-serverdemo-go push/model).
V1_KEYS = {
    "": {"validate_only", "message"},
    "message": {"data", "notification", "android", "apns", "webpush", "token", "topic", "condition"},
    "message.notification": {"title", "body", "image"},
    "message.android": {"collapse_key", "urgency", "category", "ttl", "bi_tag", "receipt_id", "fast_app_target",
                        "data", "notification"},
    "message.android.notification": {
        "title", "body", "icon", "color", "sound", "default_sound", "tag", "click_action", "body_loc_key",
        "body_loc_args", "title_loc_key", "title_loc_args", "multi_lang_key", "channel_id", "notify_summary", "image",
        "style", "big_title", "big_body", "auto_clear", "notify_id", "group", "badge", "ticker", "auto_cancel",
        "when", "importance", "use_default_vibrate", "use_default_light", "vibrate_config", "visibility",
        "light_settings", "foreground_show", "inbox_content", "buttons", "profile_id"},
    "message.android.notification.click_action": {"type", "intent", "action", "url", "rich_resource"},
}
V1_TTL = re.compile(r"^(\d+|\d+[sS]|\d+\.\d{1,9}|\d+\.\d{1,9}[sS])$")

MESSAGES = {
    "80000000": "Success",
    "80100000": "Check Parameter Partial Success.",
    "80100001": "Check Parameter Error.",
    "80100003": "Illegal payload",
    "80200001": "Authentication Error.",
    "80200003": "Access token expired",
    "80200005": "Jwt token expired.",
    "80300002": "No permission to send message to these tmIDs.",
    "80300007": "All the tokens are invalid",
    "80300008": "Push message size is too long.",
    "80300010": "token count should within 1 and 1000.",
    "80300030": "When send test message, token count exceed limit.",
    "80300036": "JWT expire period over threshold.",
    "81000001": "Inner Error.",
}

_KEYS = {}


def _rsa_key(bits):
    """One RSA key per size and process: a 4096-bit key takes a moment to make."""
    if bits not in _KEYS:
        _KEYS[bits] = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    return _KEYS[bits]


def write_service_account(directory, project_id="388421841222199046", bits=4096, name="private.json"):
    """A service-account key file as Huawei's API Console downloads it (the field names and URLs of the
    anonymized sample on Huawei's JWT page; a 4096-bit RSA key in PKCS#8 PEM like the sample's
    `MIIJQgIBADANBg…`). Answers (path, account dict)."""
    pem = _rsa_key(bits).private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()).decode()
    account = {"project_id": project_id, "key_id": secrets.token_hex(16), "private_key": pem,
               "sub_account": "%d" % (10 ** 17 + secrets.randbelow(9 * 10 ** 17)),
               "auth_uri": AUTH_URI, "token_uri": JWT_AUDIENCE, "auth_provider_cert_uri": CERTS_URI,
               "client_cert_uri": X509_URI}
    path = os.path.join(directory, name)
    with open(path, "w") as fh:
        json.dump(account, fh, indent=4)
    return path, account


def _b64url_decode(text):
    text = text.strip()
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _request_id():
    """Like the requestIds Huawei answers (`166921245184434306000109`): digits."""
    return "%d%011d" % (int(time.time() * 1000), secrets.randbelow(10 ** 11))


def _unknown_keys(obj, schema, prefix=""):
    """Members of `obj` (and its documented sub-objects) that Huawei's reference does not list."""
    found = []
    allowed = schema.get(prefix)
    if isinstance(obj, dict) and allowed is not None:
        for key, value in obj.items():
            path = (prefix + "." if prefix else "") + key
            if key not in allowed:
                found.append(path)
            elif path in schema:
                found += _unknown_keys(value, schema, path)
    return found


class _Refusal(Exception):
    def __init__(self, status, code, msg=None, detail=""):
        super().__init__(code)
        self.status, self.code = status, code
        self.msg = msg if msg is not None else MESSAGES.get(code, "Error")
        self.detail = detail


class _H1Connection:
    """One HTTP/1.1 connection's writer, answering in the order requests came."""

    def __init__(self, writer):
        self.writer = writer
        self.close = False

    def respond(self, status, headers, body):
        reason = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
                  413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error",
                  502: "Bad Gateway", 503: "Service Unavailable"}.get(status, "Status")
        head = ["HTTP/1.1 %d %s" % (status, reason)] + ["%s: %s" % h for h in headers]
        head.append("Content-Length: %d" % len(body))
        if self.close:
            head.append("Connection: close")
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)


class LookalikeHMS(H2Lookalike):
    """Huawei Push Kit, v3 (JWT) and v1 (OAuth 2.0) send APIs and the OAuth token endpoint."""

    name = "look-alike Huawei Push Kit"

    def __init__(self, cert, key, account=None, app_id=None, client_secret=None, token_lifetime=3600,
                 alpn=("h2", "http/1.1"), max_streams=100):
        super().__init__(cert, key, max_streams=max_streams)
        self.account = account
        self.public_key = (serialization.load_pem_private_key(account["private_key"].encode(), None).public_key()
                           if account else None)
        self.app_id, self.client_secret = app_id, client_secret
        self.token_lifetime = token_lifetime
        self.alpn_offer = list(alpn)
        self.lock = threading.Lock()
        self.requests = []          # every request to a send endpoint (dicts, see _answer)
        self.token_requests = []    # every request to the token endpoint (dicts)
        self.other_requests = []    # anything else (404)
        self.access_tokens = {}     # access token -> {"app_id", "expires", "expired_status"}
        self.invalid = {}           # device token -> (HTTP status or None for the API's default, reason)
        self.scripts = {}           # device token -> [status, ...] answered before it is accepted
        self.failures_left = []     # statuses for the next requests whatever their tokens
        self.alpn = []              # the protocol of each connection

    # ---- steering, from the tests' thread

    @property
    def base_url(self):
        return "https://127.0.0.1:%d" % self.port

    @property
    def token_url(self):
        return "https://127.0.0.1:%d%s" % (self.port, TOKEN_PATH)

    def add_invalid(self, tokens, status=None, reason="tokenFormatError"):
        """Tokens Huawei refuses (80300007 when every token of a request is one, 80100000 naming them when
        some are). `status`: the HTTP status of an 80300007 (default: 400 on v3, 200 on v1)."""
        with self.lock:
            for token in tokens:
                self.invalid[token] = (status, reason)

    def script(self, token, *statuses):
        """The next requests carrying `token` are answered with these HTTP statuses (429, 500, 502,
        503…), in order, before it is accepted."""
        with self.lock:
            self.scripts.setdefault(token, []).extend(statuses)

    def fail_next(self, count, status=503):
        """The next `count` send requests, whatever their tokens, are answered `status`."""
        with self.lock:
            self.failures_left.extend([status] * count)

    def expire_access_tokens(self, status=401):
        """Every access token issued so far expires now: sends carrying one get 80200003 with `status`."""
        with self.lock:
            for info in self.access_tokens.values():
                info["expires"] = 0
                info["expired_status"] = status

    def records_for(self, token):
        return [r for r in list(self.requests) if token in r["tokens"]]

    def accepted_for(self, token):
        """The requests that carried `token` and were answered 80000000 (or 80100000 without it)."""
        return [r for r in self.records_for(token) if r["delivered"] and token in r["delivered"]]

    def issued_tokens(self):
        return [r["issued"] for r in list(self.token_requests) if r.get("issued")]

    # ---- the server

    def _run(self):
        self._loop = asyncio.new_event_loop()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        context.set_alpn_protocols(self.alpn_offer)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=context))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, reader, writer):
        ssl_object = writer.get_extra_info("ssl_object")
        protocol = ssl_object.selected_alpn_protocol() if ssl_object else None
        self.alpn.append(protocol)
        if protocol == "h2":
            return await super()._serve(reader, writer)
        self.connections += 1
        try:
            await self._serve_h1(reader, writer)
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()

    async def _serve_h1(self, reader, writer):
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return
            lines = head.decode("latin-1").split("\r\n")
            method, target, version = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            if "chunked" in headers.get("transfer-encoding", "").lower():
                body = bytearray()
                while True:
                    size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                    if size == 0:
                        while (await reader.readuntil(b"\r\n")) != b"\r\n":
                            pass
                        break
                    body += await reader.readexactly(size)
                    await reader.readexactly(2)
                body = bytes(body)
            else:
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
            headers[":method"], headers[":path"], headers[":version"] = method, target, version
            conn = _H1Connection(writer)
            conn.close = headers.get("connection", "").lower() == "close" or version == "HTTP/1.0"
            self._answer(conn, None, headers, body)
            await writer.drain()
            if conn.close:
                return

    def _send(self, conn, stream_id, status, body, content_type="application/json;charset=UTF-8"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        headers = [("content-type", content_type)] if body else []
        if isinstance(conn, _H1Connection):
            conn.respond(status, headers, body)
            return
        conn.send_headers(stream_id, [(":status", str(status))] + headers + [("content-length", str(len(body)))],
                          end_stream=not body)
        if body:
            conn.send_data(stream_id, body, end_stream=True)

    # ---- requests

    def _answer(self, conn, stream_id, headers, body):
        protocol = "http/1.1" if isinstance(conn, _H1Connection) else "h2"
        target = headers.get(":path", "")
        path, _, query = target.partition("?")
        if path == TOKEN_PATH:
            return self._token(conn, stream_id, headers, body, query, protocol)
        v3, v1 = V3_SEND.match(path), V1_SEND.match(path)
        if headers.get(":method") != "POST" or not (v3 or v1):
            self.other_requests.append({"method": headers.get(":method"), "path": target, "headers": dict(headers)})
            return self._send(conn, stream_id, 404, {"code": "404", "msg": "no such API: " + target,
                                                     "requestId": _request_id()})
        record = {"api": "v3" if v3 else "v1", "path": path, "path_id": urllib.parse.unquote((v3 or v1).group(1)),
                  "headers": dict(headers), "protocol": protocol, "raw": body, "body": None, "tokens": [],
                  "auth": {}, "unknown": [], "status": None, "code": None, "msg": None, "delivered": [],
                  "time": time.time()}
        with self.lock:
            self.requests.append(record)
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        record["body"] = parsed
        record["tokens"] = self._tokens_of(record["api"], parsed)
        try:
            failure = self._scripted_failure(record["tokens"])
            if failure is not None:
                record["status"], record["code"] = failure, None
                # Flow control and server errors: Huawei documents the statuses, not their bodies.
                failure_body = {500: {"code": "81000001", "msg": "Inner Error.", "requestId": _request_id()},
                                502: b"<html><body>502 Bad Gateway</body></html>"}.get(failure, b"")
                return self._send(conn, stream_id, failure, failure_body,
                                  "text/html" if failure == 502 else "application/json;charset=UTF-8")
            if record["api"] == "v3":
                self._check_v3(record, headers, parsed)
            else:
                self._check_v1(record, headers, parsed)
            self._deliver(conn, stream_id, record)
        except _Refusal as refusal:
            record["status"], record["code"] = refusal.status, refusal.code
            record["msg"] = refusal.msg
            if refusal.detail:  # Huawei's 80100003 reads "Illegal payload, {errorTips}"
                record["msg"] += (", %s" if refusal.code == "80100003" else " (%s)") % refusal.detail
            self._send(conn, stream_id, refusal.status, {"code": refusal.code, "msg": record["msg"],
                                                         "requestId": _request_id()})

    @staticmethod
    def _tokens_of(api, body):
        try:
            tokens = body["target"]["token"] if api == "v3" else body["message"]["token"]
        except (KeyError, TypeError):
            return []
        return [t for t in tokens if isinstance(t, str)] if isinstance(tokens, list) else []

    def _scripted_failure(self, tokens):
        with self.lock:
            if self.failures_left:
                return self.failures_left.pop(0)
            for token in tokens:
                queue = self.scripts.get(token)
                if queue:
                    return queue.pop(0)
        return None

    def _deliver(self, conn, stream_id, record):
        tokens = record["tokens"]
        with self.lock:
            bad = {t: self.invalid[t] for t in tokens if t in self.invalid}
        if bad and len(bad) == len(set(tokens)):
            status = next(iter(bad.values()))[0]
            if status is None:
                status = 400 if record["api"] == "v3" else 200
            if record["api"] == "v3":
                by_reason = {}
                for token, (_, reason) in bad.items():
                    by_reason.setdefault(reason, []).append(token)
                msg = json.dumps({"failure": len(bad), "illegalTokens": by_reason}, separators=(",", ":"))
            else:
                msg = MESSAGES["80300007"]
            raise _Refusal(status, "80300007", msg)
        record["delivered"] = [t for t in tokens if t not in bad]
        if bad:
            good = len(record["delivered"])
            if record["api"] == "v3":
                by_reason = {}
                for token, (_, reason) in bad.items():
                    by_reason.setdefault(reason, []).append(token)
                msg = {"illegalTokens": by_reason, "success": good, "failure": len(bad)}
            else:
                msg = {"success": good, "failure": len(bad), "illegal_tokens": sorted(bad)}
            record["status"], record["code"] = 200, "80100000"
            record["msg"] = json.dumps(msg, separators=(",", ":"))
        else:
            record["status"], record["code"], record["msg"] = 200, "80000000", MESSAGES["80000000"]
        self._send(conn, stream_id, 200, {"code": record["code"], "msg": record["msg"], "requestId": _request_id()})

    # ---- v3: JWT + scenario message

    def _check_v3(self, record, headers, body):
        if self.account is None:
            raise _Refusal(401, "80200001", detail="no service account configured in the look-alike")
        record["auth"] = auth = self._verify_jwt(headers.get("authorization", ""))
        if not auth.get("ok"):
            raise auth["refusal"]
        if record["path_id"] != self.account["project_id"]:
            raise _Refusal(401, "80200001", detail="projectId %s is not the service account's" % record["path_id"])
        push_type = headers.get("push-type")
        record["push_type"] = push_type
        if push_type not in PUSH_TYPES:
            raise _Refusal(400, "80100001", detail="push-type header %r is not one of %s"
                           % (push_type, sorted(PUSH_TYPES, key=int)))
        if not (headers.get("content-type") or "").lower().startswith("application/json"):
            raise _Refusal(400, "80100001", detail="Content-Type must be application/json")
        if not isinstance(body, dict):
            raise _Refusal(400, "80100003", detail="the body is not a JSON object")
        record["unknown"] = _unknown_keys(body, V3_KEYS)
        payload, target, options = body.get("payload"), body.get("target"), body.get("pushOptions", {})
        if not isinstance(payload, dict):
            raise _Refusal(400, "80100003", detail="payload is mandatory")
        allowed = V3_PAYLOAD_KEYS.get(push_type)
        if allowed is not None:
            record["unknown"] += ["payload." + k for k in payload if k not in allowed]
        if not isinstance(target, dict) or not isinstance(target.get("token"), list):
            raise _Refusal(400, "80100001", detail="target.token is mandatory")
        tokens = target["token"]
        if not 1 <= len(tokens) <= MAX_TOKENS or not all(isinstance(t, str) and t for t in tokens):
            raise _Refusal(400, "80300010")
        if not isinstance(options, dict):
            raise _Refusal(400, "80100001", detail="pushOptions must be an object")
        self._check_push_options(options, len(tokens))
        if push_type in ("0", "2"):
            self._check_v3_notification(payload.get("notification"), push_type)
        if push_type in ("2", "6") and not isinstance(payload.get("extraData"), str):
            raise _Refusal(400, "80100003", detail="extraData is mandatory and a String")
        self._check_size(record)

    def _verify_jwt(self, authorization):
        def refuse(code, why, status=401):
            return {"ok": False, "why": why, "refusal": _Refusal(status, code, detail=why)}

        if not authorization.startswith("Bearer "):
            return refuse("80200001", "no Authorization: Bearer <JWT>")
        token = authorization[len("Bearer "):]
        parts = token.split(".")
        if len(parts) != 3:
            return refuse("80200001", "the bearer is not a JWS compact serialization")
        try:
            header, claims = json.loads(_b64url_decode(parts[0])), json.loads(_b64url_decode(parts[1]))
            signature = _b64url_decode(parts[2])
        except (ValueError, TypeError):
            return refuse("80200001", "the JWT's parts are not base64url JSON")
        result = {"ok": False, "jwt": token, "header": header, "claims": claims,
                  "padded": any("=" in p for p in parts)}
        if not isinstance(header, dict) or not isinstance(claims, dict):
            return dict(result, **refuse("80200001", "header and payload must be JSON objects"))
        if header.get("alg") != "PS256":
            return dict(result, **refuse("80200001", "alg %r, not PS256" % header.get("alg")))
        if header.get("typ") != "JWT":
            return dict(result, **refuse("80200001", "typ %r, not JWT" % header.get("typ")))
        if header.get("kid") != self.account["key_id"]:
            return dict(result, **refuse("80200001", "kid %r is not the service account's key_id" % header.get("kid")))
        try:
            self.public_key.verify(signature, (parts[0] + "." + parts[1]).encode("ascii"),
                                   padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32), hashes.SHA256())
        except (InvalidSignature, ValueError):
            return dict(result, **refuse("80200001", "the signature is not SHA256withRSA/PSS (salt 32) by the "
                                                     "service account's key"))
        if claims.get("iss") != self.account["sub_account"]:
            return dict(result, **refuse("80200001", "iss %r is not the service account's sub_account"
                                         % claims.get("iss")))
        audience = claims.get("aud")
        if not (audience == JWT_AUDIENCE or (isinstance(audience, list) and audience == [JWT_AUDIENCE])):
            return dict(result, **refuse("80200001", "aud %r is not %s" % (audience, JWT_AUDIENCE)))
        iat, exp = claims.get("iat"), claims.get("exp")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (iat, exp)):
            return dict(result, **refuse("80200001", "iat and exp must be numbers (Unix seconds)"))
        now = time.time()
        if exp <= now:
            return dict(result, **refuse("80200005", "exp %s has passed" % exp))
        if iat > now + 60:
            return dict(result, **refuse("80200001", "iat %s is in the future" % iat))
        if exp - iat > MAX_JWT_PERIOD:
            return dict(result, **refuse("80300036", "exp - iat = %s s" % (exp - iat)))
        result["ok"] = True
        return result

    @staticmethod
    def _check_push_options(options, count):
        ttl = options.get("ttl")
        if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or not 0 <= ttl <= MAX_TTL):
            raise _Refusal(400, "80100001", detail="pushOptions.ttl must be an Integer up to %d" % MAX_TTL)
        test = options.get("testMessage")
        if test is not None and not isinstance(test, bool):
            raise _Refusal(400, "80100001", detail="pushOptions.testMessage must be a Boolean")
        if test and count > MAX_TEST_TOKENS:
            raise _Refusal(400, "80300030")
        bi_tag = options.get("biTag")
        if bi_tag is not None and (not isinstance(bi_tag, str) or len(bi_tag.encode()) > 64):
            raise _Refusal(400, "80100001", detail="pushOptions.biTag: a String of at most 64 bytes")
        collapse = options.get("collapseKey")
        if collapse is not None and (not isinstance(collapse, int) or not -1 <= collapse <= 100):
            raise _Refusal(400, "80100001", detail="pushOptions.collapseKey: -1 to 100")

    @staticmethod
    def _check_v3_notification(notification, push_type):
        if not isinstance(notification, dict):
            raise _Refusal(400, "80100003", detail="notification is mandatory")
        category = notification.get("category")
        if category not in CATEGORIES or (category == "PLAY_VOICE") != (push_type == "2"):
            raise _Refusal(400, "80100003", detail="notification.category %r" % (category,))
        for field in ("title", "body"):
            if not isinstance(notification.get(field), str) or not notification[field]:
                raise _Refusal(400, "80100003", detail="notification.%s is mandatory" % field)
        action = notification.get("clickAction")
        if not isinstance(action, dict):
            raise _Refusal(400, "80100003", detail="notification.clickAction is mandatory")
        if action.get("actionType") not in (0, 1) or isinstance(action.get("actionType"), bool):
            raise _Refusal(400, "80100003", detail="clickAction.actionType must be 0 or 1")
        if action["actionType"] == 1 and not (action.get("action") or action.get("uri")):
            raise _Refusal(400, "80100003", detail="clickAction.action or uri is mandatory when actionType is 1")
        if "data" in action and not isinstance(action["data"], dict):
            raise _Refusal(400, "80100003", detail="clickAction.data must be a JSON object")
        badge = notification.get("badge")
        if badge is not None:
            if not isinstance(badge, dict):
                raise _Refusal(400, "80100003", detail="badge must be an object")
            add, set_ = badge.get("addNum"), badge.get("setNum")
            if add is not None and (not isinstance(add, int) or not 1 <= add <= 99):
                raise _Refusal(400, "80100003", detail="badge addNum value ranges from 1 to 99")
            if set_ is not None and (not isinstance(set_, int) or not 0 <= set_ <= 99):
                raise _Refusal(400, "80100003", detail="badge setNum value ranges from 0 to 99")
        image = notification.get("image")
        if image is not None and not (isinstance(image, str) and image.startswith("https://")):
            raise _Refusal(400, "80100003", detail="notification.image must be an HTTPS URL")
        if notification.get("style", 0) not in (0, 1, 3):
            raise _Refusal(400, "80100003", detail="notification.style must be 0, 1 or 3")

    @staticmethod
    def _check_size(record):
        tokens = record["tokens"]
        size = len(record["raw"]) - sum(len(t.encode()) + 3 for t in tokens)
        record["size_without_tokens"] = size
        if size > MAX_MESSAGE_BYTES:
            raise _Refusal(400, "80300008")

    # ---- v1: OAuth 2.0 access token + HMS Core message

    def _check_v1(self, record, headers, body):
        authorization = headers.get("authorization", "")
        access = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
        with self.lock:
            info = dict(self.access_tokens[access]) if access in self.access_tokens else None
        record["auth"] = {"access_token": access, "ok": False}
        if info is None:
            raise _Refusal(401, "80200001", "OAuth authentication error.",
                           "no access token this server issued" if access else "no Authorization: Bearer")
        if info["expires"] <= time.time():
            raise _Refusal(info["expired_status"] or 401, "80200003")
        if info["app_id"] != record["path_id"]:
            raise _Refusal(401, "80200001", "OAuth authentication error.",
                           "the access token is app %s's, the path's app is %s" % (info["app_id"], record["path_id"]))
        record["auth"]["ok"] = True
        if not (headers.get("content-type") or "").lower().startswith("application/json"):
            raise _Refusal(400, "80100001", detail="Content-Type must be application/json")
        if not isinstance(body, dict) or not isinstance(body.get("message"), dict):
            # Huawei's FAQ: a misspelt or misplaced message/token is 80300010.
            raise _Refusal(400, "80300010")
        record["unknown"] = _unknown_keys(body, V1_KEYS)
        validate_only = body.get("validate_only", False)
        if not isinstance(validate_only, bool):
            raise _Refusal(400, "80100001", detail="validate_only must be a Boolean")
        record["validate_only"] = validate_only
        message = body["message"]
        if sum(1 for k in ("token", "topic", "condition") if message.get(k)) != 1:
            raise _Refusal(400, "80100001", detail="token, topic or condition: exactly one")
        tokens = message.get("token")
        if tokens is not None and (not isinstance(tokens, list) or not 1 <= len(tokens) <= MAX_TOKENS
                                   or not all(isinstance(t, str) and t for t in tokens)):
            raise _Refusal(400, "80300010")
        for where, holder in (("message.data", message), ("message.android.data", message.get("android") or {})):
            if "data" in holder and not isinstance(holder["data"], str):
                raise _Refusal(400, "80100003", detail="%s must be a String" % where)
        notification = message.get("notification")
        if notification is not None and (not isinstance(notification, dict) or not all(
                isinstance(notification.get(k, ""), str) for k in ("title", "body", "image"))):
            raise _Refusal(400, "80100003", detail="message.notification: title, body, image are Strings")
        android = message.get("android")
        if android is not None:
            self._check_v1_android(android, notification)
        self._check_size(record)

    @staticmethod
    def _check_v1_android(android, notification):
        if not isinstance(android, dict):
            raise _Refusal(400, "80100003", detail="message.android must be an object")
        if android.get("urgency") not in (None, "HIGH", "NORMAL"):
            raise _Refusal(400, "80100001", detail="android.urgency must be HIGH or NORMAL")
        ttl = android.get("ttl")
        if ttl is not None and not (isinstance(ttl, str) and V1_TTL.match(ttl)):
            raise _Refusal(400, "80100001", detail="android.ttl: seconds as a String, e.g. \"86400s\"")
        collapse = android.get("collapse_key")
        if collapse is not None and (not isinstance(collapse, int) or not -1 <= collapse <= 100):
            raise _Refusal(400, "80100013", "The collapse_key message field is invalid.")
        if android.get("fast_app_target") not in (None, 1, 2):
            raise _Refusal(400, "80100001", detail="android.fast_app_target must be 1 or 2")
        an = android.get("notification")
        if an is None:
            return
        if not isinstance(an, dict):
            raise _Refusal(400, "80100003", detail="android.notification must be an object")
        titled = any(isinstance(n, dict) and n.get("title") and n.get("body") for n in (an, notification))
        if not titled:
            raise _Refusal(400, "80100003", "Illegal payload",
                           "No valid android notification payload when sending notification message to android users.")
        action = an.get("click_action")
        if not isinstance(action, dict):
            raise _Refusal(400, "80100003", detail="click_action is mandatory in android.notification")
        kind = action.get("type")
        if kind not in (1, 2, 3, 4) or isinstance(kind, bool):
            raise _Refusal(400, "80100003", detail="click_action.type must be 1 to 4")
        if kind == 1 and not (action.get("intent") or action.get("action")):
            raise _Refusal(400, "80100003", detail="click_action.intent or action is mandatory when type is 1")
        if kind == 2 and not action.get("url"):
            raise _Refusal(400, "80100003", detail="click_action.url is mandatory when type is 2")
        if kind == 4 and not action.get("rich_resource"):
            raise _Refusal(400, "80100003", detail="click_action.rich_resource is mandatory when type is 4")
        if an.get("importance") not in (None, "HIGH", "NORMAL", "LOW"):
            raise _Refusal(400, "80100001", detail="android.notification.importance")
        color = an.get("color")
        if color is not None and not (isinstance(color, str) and re.match(r"^#[0-9a-fA-F]{6}$", color)):
            raise _Refusal(400, "80100001", detail="android.notification.color must be #RRGGBB")

    # ---- the token endpoint

    def _token(self, conn, stream_id, headers, body, query, protocol):
        form = dict(urllib.parse.parse_qsl(query))
        form.update(urllib.parse.parse_qsl(body.decode("utf-8", "replace")))
        record = {"headers": dict(headers), "form": form, "protocol": protocol, "issued": None, "time": time.time()}
        with self.lock:
            self.token_requests.append(record)

        def refuse(sub_error, description, status=400):
            record["error"] = description
            self._send(conn, stream_id, status, {"error": 1101, "sub_error": sub_error,
                                                 "error_description": description})

        if headers.get(":method") != "POST":
            return self._send(conn, stream_id, 405, b"")
        if not (headers.get("content-type") or "").lower().startswith("application/x-www-form-urlencoded"):
            return refuse(20001, "Content-Type must be application/x-www-form-urlencoded")
        if form.get("grant_type") != "client_credentials":
            return refuse(20001, "unsupported grant_type %r" % form.get("grant_type"))
        if not re.match(r"^[0-9]{1,64}$", form.get("client_id", "")):
            return refuse(20002, "the value of client_id is in an invalid format")
        if form.get("client_id") != self.app_id or form.get("client_secret") != self.client_secret:
            return refuse(20068, "invalid client_id or client_secret")
        access = base64.b64encode(os.urandom(90)).decode()
        access = access[:16] + "/" + access[17:40] + "+" + access[41:] + "=="  # Huawei's tokens have / + =
        with self.lock:
            self.access_tokens[access] = {"app_id": self.app_id, "expires": time.time() + self.token_lifetime,
                                          "expired_status": None}
        record["issued"] = access
        text = json.dumps({"access_token": access, "expires_in": self.token_lifetime, "token_type": "Bearer"})
        # Huawei escapes "/" in the JSON it answers ("restore the escape character \/ to /").
        self._send(conn, stream_id, 200, text.replace("/", "\\/").encode())


def start_hms_lookalike(directory, project_id="388421841222199046", app_id="107946981", **options):
    """A look-alike on a new certificate with a service account (v3) and an app id and client secret
    (v1/v2): `server.ca_file`, `server.service_account_file`, `server.account`, `server.app_id`,
    `server.client_secret_file`."""
    cert, key = make_certificate(directory)
    path, account = write_service_account(directory, project_id=project_id)
    secret = secrets.token_hex(32)
    server = LookalikeHMS(cert, key, account=account, app_id=app_id, client_secret=secret, **options).start()
    server.ca_file = cert
    server.service_account_file = path
    server.client_secret_file = os.path.join(directory, "hms-client-secret")
    with open(server.client_secret_file, "w") as fh:
        fh.write(secret + "\n")
    return server


def sign_jwt(account, iat=None, lifetime=3600, **overrides):
    """A JWT as Huawei's page builds it, for self-tests of the look-alike (PyJWT)."""
    import jwt

    iat = int(time.time()) if iat is None else iat
    claims = {"aud": JWT_AUDIENCE, "iss": account["sub_account"], "exp": iat + lifetime, "iat": iat}
    claims.update(overrides)
    return jwt.encode(claims, account["private_key"], algorithm="PS256",
                      headers={"kid": account["key_id"], "typ": "JWT", "alg": "PS256"})


__all__ = ["LookalikeHMS", "start_hms_lookalike", "write_service_account", "sign_jwt", "JWT_AUDIENCE",
           "CATEGORIES"]

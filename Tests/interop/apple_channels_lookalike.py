"""A look-alike of Apple's broadcast channel APIs (iOS 18 Live Activity broadcasts), written from
Apple's documentation alone (Tests/interop/apple_channels_lookalike.md gives each rule its source):

- the channel management API, `api-manage-broadcast[.sandbox].push.apple.com:2196/2195`:
  `POST|GET|DELETE /1/apps/<bundle id>/channels` and `GET /1/apps/<bundle id>/all-channels`;
- the broadcast endpoint on the push host, `api[.sandbox].push.apple.com:443`:
  `POST /4/broadcasts/apps/<bundle id>`.

Two TLS + HTTP/2 servers (h2_lookalike.H2Lookalike) share one `AppleState`, so a test points an
app's `channels_url` at `manage` and its `url` at `push`, and a request sent to the wrong host is
answered 404 BadPath. Every request is checked the way Apple's pages describe (the ES256 provider
token verified with the .p8's public key; required headers; the create body; the 5,120-byte
broadcast limit; `apns-expiration` 0 on a No Message Stored channel; channel existence), answered
with Apple's documented status and `{"reason": …}`, and recorded (`AppleState.records`).

Where Apple names a rule but no error for it, nothing is invented: the request is answered as
valid and the breach is listed in `AppleState.violations`, which the tests require to stay empty.
"""
import base64
import binascii
import json
import os
import re
import subprocess
import threading
import time
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from h2_lookalike import H2Lookalike, make_certificate

# "Canonical UUIDs are 32 lowercase hexadecimal digits, displayed in five groups separated by
# hyphens in the form 8-4-4-4-12" (Sending channel management requests to APNs).
CANONICAL_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
ANY_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
MANAGE_PATH = re.compile(r"^/1/apps/([^/?#]+)/(channels|all-channels)$")
BROADCAST_PATH = re.compile(r"^/4/broadcasts/apps/([^/?#]+)$")

BROADCAST_PAYLOAD_LIMIT = 5120   # "the payload is limited to a maximum size of 5 KB (5,120 bytes)"
CHANNEL_LIMIT = 10000            # "up to 10,000 channels for your app in the development and production environment"
NO_MESSAGE_STORED, MOST_RECENT_MESSAGE_STORED = 0, 1


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_p8(directory, key_id="KEY1234567"):
    """An ES256 signing key in Apple's .p8 form (PKCS#8 PEM, P-256), made with openssl."""
    path = os.path.join(directory, "AuthKey_%s.p8" % key_id)
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path],
                   check=True, capture_output=True)
    return path


def provider_token(p8, team_id, key_id, iat=None):
    """A provider token as "Establishing a token-based connection to APNs" describes it: header
    {alg: ES256, kid}, claims {iss: team id, iat}, ES256-signed; for the look-alike's own tests."""
    with open(p8, "rb") as fh:
        key = serialization.load_pem_private_key(fh.read(), None)
    header = b64url(json.dumps({"alg": "ES256", "kid": key_id}).encode())
    claims = b64url(json.dumps({"iss": team_id, "iat": int(time.time()) if iat is None else iat}).encode())
    r, s = decode_dss_signature(key.sign(("%s.%s" % (header, claims)).encode(), ec.ECDSA(hashes.SHA256())))
    return "%s.%s.%s" % (header, claims, b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big")))


def is_base64(text):
    """`apns-channel-id` is "a base64-encoded string"; BadChannelId: "isn't properly encoded"."""
    if not text or len(text) % 4:
        return False
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


class AppleState:
    """What the two hosts share: the team's key, its bundles, their channels, and every request."""

    def __init__(self, p8, team_id, key_id, bundles, broadcast_bundles=None):
        with open(p8, "rb") as fh:
            self.public_key = serialization.load_pem_private_key(fh.read(), None).public_key()
        self.team_id, self.key_id = team_id, key_id
        self.bundles = set(bundles)                      # the team's bundle ids (else 403 TopicMismatch)
        self.broadcast_bundles = set(bundles if broadcast_bundles is None else broadcast_bundles)
        self.channels = {}                               # bundle id -> {channel id: storage policy}
        self.forgotten = set()                           # (bundle, channel id) deleted or forgotten
        # The answer to a DELETE of a channel APNs no longer has. Apple's table: 400
        # ChannelNotRegistered ("The apns-channel-id header used in the request doesn't exist").
        self.forgotten_delete_answer = (400, "ChannelNotRegistered")
        self.records = []                                # every request, answered, in order
        self.violations = []                             # breaches of documented rules Apple gives no error for
        self.lock = threading.Lock()

    # -- for tests ----------------------------------------------------------------------------

    def forget(self, bundle, channel_id):
        """Deletes a channel behind the gateway's back (as another client or the developer portal
        would: "Once you delete the capability, APNs deletes all channels")."""
        with self.lock:
            self.channels.get(bundle, {}).pop(channel_id, None)
            self.forgotten.add((bundle, channel_id))

    def knows(self, bundle, channel_id):
        with self.lock:
            return channel_id in self.channels.get(bundle, {})

    def policy(self, bundle, channel_id):
        with self.lock:
            return self.channels.get(bundle, {}).get(channel_id)

    def mark(self):
        return len(self.records)

    def since(self, mark, host=None, method=None, path=None):
        return [r for r in self.records[mark:]
                if (host is None or r["host"] == host) and (method is None or r["method"] == method)
                and (path is None or r["path"] == path)]

    # -- checks shared by both hosts ----------------------------------------------------------

    def check_token(self, headers):
        """The provider token (Establishing a token-based connection to APNs; the 403 rows of
        Handling error responses): None, or (status, reason)."""
        value = headers.get("authorization")
        if value is None:
            return 403, "MissingProviderToken"
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return 403, "InvalidProviderToken"
        parts = token.split(".")
        if len(parts) != 3:
            return 403, "InvalidProviderToken"
        try:
            header, claims, signature = json.loads(b64url_decode(parts[0])), json.loads(b64url_decode(parts[1])), \
                b64url_decode(parts[2])
        except (ValueError, binascii.Error):
            return 403, "InvalidProviderToken"
        if not isinstance(header, dict) or not isinstance(claims, dict):
            return 403, "InvalidProviderToken"
        # "APNs supports only the ES256 algorithm"; kid: "The 10-character Key ID"; iss: "the
        # 10-character Team ID"; iat: "the number of seconds since Epoch, in UTC".
        if header.get("alg") != "ES256" or header.get("kid") != self.key_id or claims.get("iss") != self.team_id:
            return 403, "InvalidProviderToken"
        iat = claims.get("iat")
        if not isinstance(iat, int) or isinstance(iat, bool):
            return 403, "InvalidProviderToken"
        if len(signature) != 64:
            return 403, "InvalidProviderToken"
        try:
            self.public_key.verify(encode_dss_signature(int.from_bytes(signature[:32], "big"),
                                                        int.from_bytes(signature[32:], "big")),
                                   ("%s.%s" % (parts[0], parts[1])).encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return 403, "InvalidProviderToken"
        now = time.time()
        # "If the value in the iat field is more than one hour old, APNs rejects any notifications
        # containing the token, returning an ExpiredProviderToken (403) error."
        if now - iat > 3600:
            return 403, "ExpiredProviderToken"
        if iat - now > 3600:   # "The value must be no more than one hour from the current time."
            return 403, "InvalidProviderToken"
        return None

    def check_bundle(self, bundle):
        if ".push-type." in bundle:
            return 400, "TopicDisallowed"     # "Ensure that no push type suffix is added to the bundle ID."
        if bundle not in self.bundles:
            return 403, "TopicMismatch"       # "The bundle IDs parsed from your token … don't include the topic present in the path."
        if bundle not in self.broadcast_bundles:
            return 400, "FeatureNotEnabled"   # "The feature isn't enabled for this topic."
        return None

    def check_request_id(self, headers, where):
        request_id = headers.get("apns-request-id")
        if request_id is not None and not CANONICAL_UUID.match(request_id):
            self.violations.append("%s: apns-request-id %r is not a canonical (lowercase 8-4-4-4-12) UUID"
                                   % (where, request_id))

    def channel_of(self, headers, bundle):
        """(status, reason) for a request naming a channel that does not do, or (None, channel id)."""
        channel = headers.get("apns-channel-id")
        if channel is None:
            return (400, "MissingChannelId"), None
        if not is_base64(channel):
            return (400, "BadChannelId"), None
        if channel not in self.channels.get(bundle, {}):
            return (400, "ChannelNotRegistered"), channel
        return None, channel


class _AppleHost(H2Lookalike):
    host = "?"

    def __init__(self, state, cert, key):
        super().__init__(cert, key)
        self.state = state

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port

    def _answer(self, conn, stream_id, headers, body):
        state = self.state
        response_headers = {"apns-request-id": headers.get("apns-request-id") or str(uuid.uuid4())}
        record = {"host": self.host, "method": headers.get(":method"), "path": headers.get(":path"),
                  "headers": headers, "body": body, "time": time.time()}
        with state.lock:
            status, reason, payload = self._handle(headers, body, response_headers)
        record.update(status=status, reason=reason, response_headers=dict(response_headers), response_body=payload)
        state.records.append(record)
        out = [(":status", str(status))] + list(response_headers.items())
        if reason is not None:
            data = json.dumps({"reason": reason}).encode()
            conn.send_headers(stream_id, out + [("content-type", "application/json")])
            conn.send_data(stream_id, data, end_stream=True)
        elif payload is not None:
            conn.send_headers(stream_id, out + [("content-type", "application/json")])
            conn.send_data(stream_id, json.dumps(payload).encode(), end_stream=True)
        else:
            conn.send_headers(stream_id, out, end_stream=True)

    def _handle(self, headers, body, response_headers):
        raise NotImplementedError


class AppleChannelManagement(_AppleHost):
    """api-manage-broadcast.push.apple.com:2196 (sandbox …:2195): Sending channel management
    requests to APNs."""

    name = "look-alike Apple channel management"
    host = "manage"

    def _handle(self, headers, body, response_headers):
        state = self.state
        method, path = headers.get(":method"), headers.get(":path", "")
        m = MANAGE_PATH.match(path)
        if m is None:
            return 404, "BadPath", None
        bundle, resource = m.group(1), m.group(2)
        allowed = ("POST", "GET", "DELETE") if resource == "channels" else ("GET",)
        if method not in allowed:
            return 405, "MethodNotAllowed", None
        problem = state.check_token(headers) or state.check_bundle(bundle)
        if problem:
            return problem + (None,)
        state.check_request_id(headers, "%s %s" % (method, path))
        if resource == "all-channels":
            # "channels: List of all the base64-encoded channel identifiers for the topic."
            return 200, None, {"channels": sorted(state.channels.get(bundle, {}))}
        if method == "POST":
            return self._create(bundle, body, response_headers)
        problem, channel = state.channel_of(headers, bundle)
        if method == "GET":
            if problem:
                return problem + (None,)
            return 200, None, {"message-storage-policy": state.channels[bundle][channel], "push-type": "LiveActivity"}
        if problem:
            if problem[1] == "ChannelNotRegistered":
                problem = state.forgotten_delete_answer
            return problem + (None,)
        del state.channels[bundle][channel]            # "Deleting a channel is an irreversible action."
        state.forgotten.add((bundle, channel))
        return 204, None, None

    def _create(self, bundle, body, response_headers):
        state = self.state
        if not body:
            return 400, "PayloadEmpty", None
        try:
            fields = json.loads(body)
        except ValueError:
            return 400, "BadRequestPayload", None   # "The JSON Request payload is unparseable."
        if not isinstance(fields, dict):
            return 400, "BadRequestPayload", None
        # Both fields are Required; anything else is "an unrecognizable attribute".
        if set(fields) != {"message-storage-policy", "push-type"}:
            return 400, "BadRequestParams", None
        if fields["push-type"] != "LiveActivity":     # "Allowed value is LiveActivity."
            return 400, "InvalidPushType", None
        policy = fields["message-storage-policy"]
        if isinstance(policy, bool) or policy not in (NO_MESSAGE_STORED, MOST_RECENT_MESSAGE_STORED):
            return 400, "BadRequestParams", None   # "Specify 0 for No Message Stored. Specify 1 for Most Recent Message Stored."
        channels = state.channels.setdefault(bundle, {})
        if len(channels) >= CHANNEL_LIMIT:
            return 400, "CannotCreateChannelConfig", None
        channel = base64.b64encode(os.urandom(16)).decode()   # random; "you can't request a channel with a specific ID"
        while channel in channels or (bundle, channel) in state.forgotten:
            channel = base64.b64encode(os.urandom(16)).decode()
        channels[channel] = policy
        response_headers["apns-channel-id"] = channel
        return 201, None, None


class AppleBroadcast(_AppleHost):
    """api.push.apple.com:443 (sandbox api.sandbox.push.apple.com:443): Sending broadcast push
    notification requests to APNs."""

    name = "look-alike Apple broadcast"
    host = "push"

    def _handle(self, headers, body, response_headers):
        state = self.state
        method, path = headers.get(":method"), headers.get(":path", "")
        m = BROADCAST_PATH.match(path)
        if m is None:
            return 404, "BadPath", None
        if method != "POST":
            return 405, "MethodNotAllowed", None
        bundle = m.group(1)
        problem = state.check_token(headers) or state.check_bundle(bundle)
        if problem:
            return problem + (None,)
        where = "POST %s" % path
        state.check_request_id(headers, where)
        if "apns-id" in headers and not ANY_UUID.match(headers["apns-id"]):
            return 400, "BadMessageId", None
        problem, channel = state.channel_of(headers, bundle)
        if problem and problem[1] != "ChannelNotRegistered":
            return problem + (None,)
        push_type = headers.get("apns-push-type")
        if push_type is None:
            return 400, "MissingPushType", None
        # The header table says "Liveactivity", Apple's sample request `liveactivity`: either case.
        if push_type.lower() != "liveactivity":
            return 400, "InvalidPushType", None
        expiration = headers.get("apns-expiration")
        if expiration is None or not re.fullmatch(r"[0-9]+", expiration):
            return 400, "BadExpirationDate", None   # Required; "an invalid epoch timestamp"
        if headers.get("apns-priority") not in ("10", "5", "1"):
            return 400, "BadPriority", None          # Required; 10, 5 or 1
        if problem:                                   # "APNs then validates the channel ID"
            return problem + (None,)
        if state.channels[bundle][channel] == NO_MESSAGE_STORED and int(expiration) != 0:
            # "Providing a nonzero expiration for a channel created with the No Message Stored
            # storage policy results in message rejection."
            return 400, "BadExpirationDate", None
        if not body:
            return 400, "PayloadEmpty", None
        if len(body) > BROADCAST_PAYLOAD_LIMIT:
            return 413, "PayloadTooLarge", None
        if headers.get("content-encoding", "identity") != "identity":
            state.violations.append("%s: content-encoding %s (\"Don't use a compressed JSON payload\")"
                                    % (where, headers["content-encoding"]))
        try:
            payload = json.loads(body)
        except ValueError:
            return 400, "BadRequestPayload", None
        if not isinstance(payload, dict):
            return 400, "BadRequestPayload", None
        aps = payload.get("aps")
        event = aps.get("event") if isinstance(aps, dict) else None
        if event not in ("update", "end"):
            # ActivityKit: "You can't use broadcast push notifications to start a Live Activity."
            state.violations.append("%s: aps.event %r is not update or end" % (where, event))
        response_headers["apns-unique-id"] = str(uuid.uuid4())
        return 200, None, None


class AppleLookalike:
    """Both hosts on one certificate (`ca_file`), one .p8 key (`p8`) and one `state`."""

    def __init__(self, directory, bundles, team_id="TEAM123456", key_id="KEY1234567", broadcast_bundles=None):
        self.cert, self.key = make_certificate(directory)
        self.ca_file = self.cert
        self.p8 = make_p8(directory, key_id)
        self.team_id, self.key_id = team_id, key_id
        self.state = AppleState(self.p8, team_id, key_id, bundles, broadcast_bundles)
        self.manage = AppleChannelManagement(self.state, self.cert, self.key)
        self.push = AppleBroadcast(self.state, self.cert, self.key)

    def start(self):
        self.manage.start()
        self.push.start()
        return self

    def stop(self):
        self.manage.stop()
        self.push.stop()

    def app_config(self, name, bundle_id, **extra):
        """A Pushgate apns app (docs/configuration.md) whose pushes and broadcasts go to `push`
        (`url`) and whose channel requests go to `manage` (`channels_url`)."""
        app = {"name": name, "platform": "apns", "bundle_id": bundle_id, "team_id": self.team_id,
               "key_id": self.key_id, "key_file": self.p8, "url": self.push.url, "ca_file": self.ca_file,
               "channels_url": self.manage.url}
        app.update(extra)
        return app

    def token(self, iat=None):
        return provider_token(self.p8, self.team_id, self.key_id, iat)

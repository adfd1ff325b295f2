"""Apple's channel management API (Live Activity broadcast channels), played independently of
Pushgate's own mock with Python's `ssl` and `h2`: `POST /1/apps/<bundle>/channels` creates a channel
(201 with `apns-channel-id`), `GET` and `DELETE` of the same path name it in `apns-channel-id`, and
`GET /1/apps/<bundle>/all-channels` lists them (docs/providers.md A.9). It shares its channels with a
`LookalikeAPNs`, whose broadcasts (`POST /4/broadcasts/apps/<bundle>`) are checked against them, and
records every request so tests can hold Pushgate's against it."""
import base64
import json
import os
import re
import uuid

from h2_lookalike import H2Lookalike

CHANNEL_RE = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


class LookalikeChannelAPI(H2Lookalike):
    name = "look-alike APNs channel management"

    def __init__(self, cert, key, channels):
        super().__init__(cert, key)
        self.channels = channels    # bundle id -> {channel id: storage policy}, shared with LookalikeAPNs
        self.requests = []          # (headers dict, body bytes)

    def _answer(self, conn, stream_id, headers, body):
        self.requests.append((headers, body))
        request_id = headers.get("apns-request-id") or str(uuid.uuid4())
        status, payload, extra = self._route(headers, body)
        extra = [("apns-request-id", request_id)] + extra
        if payload is None:
            conn.send_headers(stream_id, [(":status", str(status))] + extra, end_stream=True)
        else:
            self.send_json(conn, stream_id, status, payload, extra)

    def _route(self, headers, body):
        match = re.match(r"^/1/apps/([^/]+)/(channels|all-channels)$", headers.get(":path", ""))
        if not match:
            return 404, {"reason": "BadPath"}, []
        bundle, resource = match.groups()
        if not headers.get("authorization", "").startswith("bearer "):
            return 403, {"reason": "MissingProviderToken"}, []
        method = headers.get(":method")
        channels = self.channels.setdefault(bundle, {})
        if resource == "all-channels":
            if method != "GET":
                return 405, {"reason": "MethodNotAllowed"}, []
            return 200, {"channels": sorted(channels)}, []
        if method == "POST":
            try:
                request = json.loads(body)
            except ValueError:
                return 400, {"reason": "BadRequest"}, []
            if request.get("message-storage-policy") not in (0, 1):
                return 400, {"reason": "BadMessageStoragePolicy"}, []
            if request.get("push-type") != "LiveActivity":
                return 400, {"reason": "InvalidPushType"}, []
            channel = base64.b64encode(os.urandom(16)).decode()
            channels[channel] = request["message-storage-policy"]
            return 201, None, [("apns-channel-id", channel)]
        if method not in ("GET", "DELETE"):
            return 405, {"reason": "MethodNotAllowed"}, []
        channel = headers.get("apns-channel-id")
        if channel is None:
            return 400, {"reason": "MissingChannelId"}, []
        if not CHANNEL_RE.match(channel):
            return 400, {"reason": "BadChannelId"}, []
        if channel not in channels:
            return 400, {"reason": "ChannelNotRegistered"}, []  # Apple: 400 (404 is only BadPath)
        if method == "DELETE":
            del channels[channel]
            return 204, None, []
        return 200, {"message-storage-policy": channels[channel], "push-type": "LiveActivity"}, []

#!/usr/bin/env python3
"""The peer row of `make bench`: Python's aioapns (pinned in scripts/requirements.txt) pushing the same
notification as the other rows to the same mock APNs on 127.0.0.1, with its best settings: one
HTTP/2 connection (max_connections=1, the mock allows 1,000 streams on it) and many requests in
flight. Token auth with the bench's generated .p8. Prints one JSON object.

aioapns has no host/port option: they are class attributes of aioapns.connection's protocol classes,
patched here to 127.0.0.1:PORT. The mock's CA is trusted, and ALPN h2 offered, through the SSL context."""
import argparse
import asyncio
import json
import ssl
import sys
import time

from aioapns import APNs, NotificationRequest, PushType
from aioapns import connection as apns_connection


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--p8", required=True)
    parser.add_argument("--key-id", default="BENCHKEY01")
    parser.add_argument("--team-id", default="BENCHTEAM1")
    parser.add_argument("--topic", default="com.example.bench")
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=1000)
    parser.add_argument("--max-connections", type=int, default=1)
    parser.add_argument("--duration", type=float, default=60.0, help="stop sending after this many seconds")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args))))


async def run(args):
    for cls in (apns_connection.APNsProductionClientProtocol, apns_connection.APNsDevelopmentClientProtocol):
        cls.APNS_SERVER = "127.0.0.1"
        cls.APNS_PORT = args.port
    context = ssl.create_default_context(cafile=args.ca)
    # aioapns's own default context offers no ALPN; APNs (and the mock, like any h2-over-TLS server
    # that follows RFC 9113) agree on h2 through ALPN.
    context.set_alpn_protocols(["h2"])
    with open(args.p8) as fh:
        key = fh.read()
    client = APNs(key=key, key_id=args.key_id, team_id=args.team_id, topic=args.topic, use_sandbox=False,
                  max_connections=args.max_connections, ssl_context=context, err_func=_ignore)
    message = {"aps": {"alert": {"title": "Bench", "body": "Hello from pushgate bench"}}}
    tokens = ["b" * (64 - len("%x" % i)) + "%x" % i for i in range(1000)]
    outcome = {"sent": 0, "delivered": 0, "errors": {}}
    # Warm-up: one request opens the connection and signs the token.
    await client.send_notification(NotificationRequest(device_token=tokens[0], message=message,
                                                       push_type=PushType.ALERT))
    start = time.monotonic()
    deadline = start + args.duration
    next_index = 0

    async def worker():
        nonlocal next_index
        while next_index < args.count and time.monotonic() < deadline:
            i = next_index
            next_index += 1
            request = NotificationRequest(device_token=tokens[i % len(tokens)], message=message,
                                          push_type=PushType.ALERT)
            try:
                result = await client.send_notification(request)
                if result.is_successful:
                    outcome["delivered"] += 1
                else:
                    key = "%s %s" % (result.status, result.description)
                    outcome["errors"][key] = outcome["errors"].get(key, 0) + 1
            except Exception as error:  # noqa: BLE001 - counted, not hidden
                key = type(error).__name__
                outcome["errors"][key] = outcome["errors"].get(key, 0) + 1
            outcome["sent"] += 1

    await asyncio.gather(*(worker() for _ in range(args.concurrency)))
    elapsed = time.monotonic() - start
    return {"client": "aioapns", "max_connections": args.max_connections, "concurrency": args.concurrency,
            "notifications": outcome["sent"], "delivered": outcome["delivered"], "errors": outcome["errors"],
            "elapsed_s": round(elapsed, 3), "notifications_per_s": round(outcome["sent"] / elapsed, 1)}


async def _ignore(request, result):
    pass


if __name__ == "__main__":
    sys.exit(main())

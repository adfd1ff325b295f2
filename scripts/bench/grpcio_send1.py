#!/usr/bin/env python3
"""1-token Sends from a stock gRPC client (grpcio's asyncio API, Python), for the bench table's
"what your client costs" figure: --concurrency calls in flight on one channel to --target for
--duration seconds after a 1 s warm-up; prints one JSON line {"rpcs_per_s", "rpcs", "errors"}.
The stubs are generated from proto/ into a temp dir (as the interop tests do)."""
import argparse
import asyncio
import json
import os
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def stubs():
    from grpc_tools import protoc
    out = tempfile.mkdtemp(prefix="pushgate-grpcio.")
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + os.path.join(ROOT, "proto"), "-I" + include, "--python_out=" + out,
                      "--grpc_python_out=" + out, "pushgate/v1/push.proto"])
    assert rc == 0, "grpc_tools.protoc failed"
    sys.path.insert(0, out)


async def run(args):
    import grpc
    from pushgate.v1 import push_pb2, push_pb2_grpc
    request = push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app=args.app, tokens=["%064x" % 1], alert=push_pb2.Alert(title="Bench", body="Hello from pushgate bench"))])
    async with grpc.aio.insecure_channel(args.target) as channel:
        stub = push_pb2_grpc.PushStub(channel)
        counts = {"rpcs": 0, "errors": 0}
        codes = {}
        measuring = False
        stop_at = time.monotonic() + 1 + args.duration

        async def worker():
            while time.monotonic() < stop_at:
                try:
                    await stub.Send(request, timeout=30)
                    ok = True
                except grpc.aio.AioRpcError as error:
                    ok = False
                    if measuring:
                        key = "%s: %s" % (error.code().name, (error.details() or "")[:80])
                        codes[key] = codes.get(key, 0) + 1
                if measuring:
                    counts["rpcs" if ok else "errors"] += 1

        tasks = [asyncio.create_task(worker()) for _ in range(args.concurrency)]
        await asyncio.sleep(1)
        measuring = True
        started = time.monotonic()
        await asyncio.gather(*tasks)
        elapsed = time.monotonic() - started
    print(json.dumps({"rpcs_per_s": counts["rpcs"] / elapsed, "rpcs": counts["rpcs"], "errors": counts["errors"],
                      "concurrency": args.concurrency, "error_codes": codes}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", required=True)
    parser.add_argument("--app", default="")
    parser.add_argument("--concurrency", type=int, default=1000)
    parser.add_argument("--duration", type=float, default=10)
    args = parser.parse_args()
    stubs()
    asyncio.run(run(args))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Crash loop (issue 8): kill -9 `pushgate serve` at random points during Publish fan-outs and
SendStream batches, start it again on the same store, and reconcile from what `pushgate mock-apns`
received that every accepted Publish reached every subscriber at least once.

Each round publishes one message to a topic of its own (its own subscribers, so the mock's count of
200s per token is a count per message), runs a SendStream of batches at the same time, sleeps a
random time and kills the gateway with SIGKILL. After the last round the gateway is started once
more and left to finish every fan-out. Then:

- every subscriber of every accepted Publish (one answered with a message_id) was delivered at
  least once, and the message is COMPLETED with every subscriber delivered;
- duplicates are counted (the documented window: the uncommitted pages of the chunks being worked
  when the process died, at most a chunk each, 2 workers × 2 chunks);
- every SendStream result that was answered DELIVERED was received by the mock, and no Send token
  was received twice (a Send is not durable: what was not answered before the kill is lost, and
  counted as such, never retried by the gateway).

Usage: PUSHGATE_BIN=.build/debug/pushgate .venv/bin/python scripts/crash-loop.py [--kills N]
       [--subscribers N] [--seed N] [--json FILE]
Exit status 0 when the reconciliation holds.
"""
import argparse
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
INTEROP = os.path.join(HERE, "..", "Tests", "interop")
sys.path.insert(0, INTEROP)

import grpc  # noqa: E402

import conftest  # noqa: E402  (generates the stubs and puts them on sys.path)
from mock_process import MockProcess  # noqa: E402
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc  # noqa: E402

# The gateway's chunks (fanout.chunk_size, smaller than the default 5,000 so a round's fan-out has
# several): a kill can repeat the uncommitted part of each chunk being worked, at most a chunk each,
# and 2 workers work at most 2 chunks each (docs/operations.md).
CHUNK = 1000
WINDOW_PER_KILL = 2 * 2 * CHUNK


def log(*parts):
    print("crash-loop:", *parts, flush=True)


def token(round_index, kind, i):
    # kind 0: subscribers of round_index's topic; kind 1: SendStream tokens of that round.
    return "%064x" % ((round_index + 1) << 40 | kind << 32 | i)


class Gateway:
    def __init__(self, config, directory, store):
        self.config, self.directory, self.store = config, directory, store
        self.server = None
        self.starts = 0

    def start(self):
        self.server = conftest.Server(self.config, self.directory, store=self.store)
        self.starts += 1
        self.channel = grpc.insecure_channel(self.server.address)
        self.push = push_pb2_grpc.PushStub(self.channel)
        self.registry = registry_pb2_grpc.RegistryStub(self.channel)

    def kill(self):
        os.kill(self.server.proc.pid, signal.SIGKILL)
        self.server.proc.wait(timeout=30)
        self.channel.close()

    def stop(self):
        self.channel.close()
        self.server.stop()
        return self.server.proc.returncode


def subscribe(gateway, topic, tokens, app):
    gateway.registry.CreateTopic(registry_pb2.CreateTopicRequest(name=topic), timeout=30)
    for start in range(0, len(tokens), 500):
        endpoints = [f.result() for f in [
            gateway.registry.CreateEndpoint.future(registry_pb2.CreateEndpointRequest(app=app, token=t), timeout=120)
            for t in tokens[start:start + 500]]]
        [f.result() for f in [
            gateway.registry.Subscribe.future(registry_pb2.SubscribeRequest(topic=topic, endpoint_id=e.id), timeout=120)
            for e in endpoints]]


def send_stream(gateway, app, tokens, per_request, answered):
    """Runs a SendStream of `tokens` in requests of `per_request`; records answered results into
    `answered` (token -> status) until the stream ends or the gateway dies."""
    batches = [tokens[i:i + per_request] for i in range(0, len(tokens), per_request)]
    requests = iter([push_pb2.SendRequest(notifications=[push_pb2.Notification(
        app=app, tokens=b, alert=push_pb2.Alert(body="crash loop"))]) for b in batches])
    try:
        for reply in gateway.push.SendStream(requests, timeout=300):
            for r in reply.results:
                answered[r.token] = r.status
    except grpc.RpcError:
        pass  # the kill


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=8)
    parser.add_argument("--subscribers", type=int, default=5000, help="per round's topic")
    parser.add_argument("--stream-tokens", type=int, default=5000, help="SendStream tokens per round")
    parser.add_argument("--max-kill-delay", type=float, default=3.0, help="seconds; each kill waits U(0.2, this)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    workdir = args.workdir or tempfile.mkdtemp(prefix="pushgate-crash-loop.")
    log("seed=%d workdir=%s kills=%d subscribers/round=%d stream tokens/round=%d"
        % (seed, workdir, args.kills, args.subscribers, args.stream_tokens))

    # Answers after 20 ms, 100 streams at a time: a page of 1000 takes a few hundred ms, so kills
    # land in the middle of fan-outs. The stats file is rewritten every second.
    mock = MockProcess("mock-apns", os.path.join(workdir, "mock"),
                       ["--delay-ms", "20", "--max-streams", "100", "--stats-interval", "1"])
    app = "crash"
    config = {"apps": [mock.apns_app(app)], "fanout": {"workers": 2, "chunk_size": CHUNK}}
    gateway = Gateway(config, workdir, os.path.join(workdir, "crash.db"))
    accepted = {}        # message_id -> (round, topic)
    send_answered = {}   # token -> status, SendStream results answered before a kill
    send_tokens = 0
    kill_log = []
    try:
        gateway.start()
        for k in range(args.kills):
            topic = "crash-%d" % k
            subscribers = [token(k, 0, i) for i in range(args.subscribers)]
            subscribe(gateway, topic, subscribers, app)
            stream = [token(k, 1, i) for i in range(args.stream_tokens)]
            send_tokens += len(stream)
            try:
                reply = gateway.push.Publish(push_pb2.PublishRequest(topic=topic, message="crash %d" % k), timeout=30)
                accepted[reply.message_id] = (k, topic)
            except grpc.RpcError as error:
                log("round %d: Publish not accepted (%s)" % (k, error.code()))
            sender = threading.Thread(target=send_stream, args=(gateway, app, stream, 500, send_answered), daemon=True)
            sender.start()
            delay = rng.uniform(0.2, args.max_kill_delay)
            time.sleep(delay)
            answered_before = len(send_answered)
            gateway.kill()
            sender.join(timeout=30)
            # Where the kill landed: the mock rewrites its stats every second and nothing sends now.
            time.sleep(1.3)
            received = mock.stats()["delivered_per_token"]
            progress = sum(1 for t in subscribers if t in received)
            mid = 0 < progress < len(subscribers)
            gateway.start()
            kill_log.append({"round": k, "after_seconds": round(delay, 3), "fan_out_progress": progress,
                             "mid_fan_out": mid, "send_results_answered": len(send_answered) - answered_before,
                             "restart": gateway.server})
            log("round %d: kill -9 after %.2f s: this round's fan-out at %d/%d, %d Send results answered; restarted"
                % (k, delay, progress, len(subscribers), len(send_answered) - answered_before))
        # The last start: let every fan-out finish.
        states = {}
        deadline = time.time() + 600
        for message_id in accepted:
            while time.time() < deadline:
                state = gateway.push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), timeout=30)
                if state.state == push_pb2.MESSAGE_STATE_COMPLETED:
                    break
                time.sleep(0.2)
            states[message_id] = state
        rc = gateway.stop()
        if rc != 0:
            log("the gateway exited with %s on SIGTERM" % rc)
    finally:
        if gateway.server and gateway.server.alive():
            gateway.server.proc.kill()
        stats = mock.stop()

    for entry in kill_log:
        # Whether the start after this kill resumed unfinished fan-outs (read now: the log line may
        # come after the listening line the start waited for).
        entry["resumed"] = any("resuming fan-outs" in line for line in entry.pop("restart").log)
    per_token = stats["delivered_per_token"]
    failures = []
    missing = duplicates = 0
    per_message = []
    for message_id, (k, topic) in sorted(accepted.items(), key=lambda item: item[1][0]):
        subscribers = [token(k, 0, i) for i in range(args.subscribers)]
        counts = [per_token.get(t, 0) for t in subscribers]
        lost = sum(1 for c in counts if c == 0)
        dup = sum(c - 1 for c in counts if c > 1)
        missing += lost
        duplicates += dup
        state = states.get(message_id)
        per_message.append({"round": k, "lost": lost, "duplicates": dup,
                            "state": push_pb2.MessageState.Name(state.state) if state else "?",
                            "delivered": state.delivered if state else 0})
        if lost:
            failures.append("round %d: %d of %d subscribers never received the message" % (k, lost, len(subscribers)))
        if state is None or state.state != push_pb2.MESSAGE_STATE_COMPLETED:
            failures.append("round %d: message not COMPLETED: %s" % (k, state))
        elif state.delivered < len(subscribers):
            failures.append("round %d: GetMessage counts %d delivered of %d" % (k, state.delivered, len(subscribers)))
    # Each kill can repeat at most the uncommitted chunks being worked then, of whichever fan-outs.
    window = WINDOW_PER_KILL * args.kills
    if duplicates > window:
        failures.append("%d duplicates, over the window of %d" % (duplicates, window))
    send_lost_delivered = [t for t, s in send_answered.items() if s == push_pb2.STATUS_DELIVERED and not per_token.get(t)]
    if send_lost_delivered:
        failures.append("%d Send tokens answered DELIVERED but never received" % len(send_lost_delivered))
    send_twice = [t for k in range(args.kills) for t in (token(k, 1, i) for i in range(args.stream_tokens))
                  if per_token.get(t, 0) > 1]
    if send_twice:
        failures.append("%d Send tokens received twice (a Send is never retried by a restart)" % len(send_twice))
    not_delivered = sum(1 for s in send_answered.values() if s != push_pb2.STATUS_DELIVERED)

    figures = {
        "seed": seed, "kills": args.kills, "gateway_starts": gateway.starts,
        "publishes_accepted": len(accepted), "subscribers_per_publish": args.subscribers,
        "publish_notifications_expected": len(accepted) * args.subscribers,
        "publish_notifications_lost": missing, "publish_duplicates": duplicates, "duplicate_window": window,
        "send_tokens": send_tokens, "send_results_answered": len(send_answered),
        "send_results_not_delivered": not_delivered,
        "send_unanswered_at_kill": send_tokens - len(send_answered),
        "kills_mid_fan_out": sum(1 for entry in kill_log if entry["mid_fan_out"]),
        "mock_requests": stats["requests"], "per_message": per_message, "kills_detail": kill_log,
        "ok": not failures,
    }
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=1)
    log("kills=%d (%d mid-fan-out) publishes accepted=%d notifications expected=%d lost=%d duplicates=%d (window %d); "
        "SendStream: %d tokens, %d answered before kills (%d not DELIVERED), %d unanswered (not accepted)"
        % (args.kills, figures["kills_mid_fan_out"], len(accepted), figures["publish_notifications_expected"], missing, duplicates, window,
           send_tokens, len(send_answered), not_delivered, figures["send_unanswered_at_kill"]))
    for failure in failures:
        log("FAIL:", failure)
    log("OK" if not failures else "FAILED")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())

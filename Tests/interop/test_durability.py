"""Durable Publish: kill -9 the gateway in the middle of a fan-out, start it again on the same store,
and every endpoint has received the message at least once, with no more sent twice than the chunks
the dead instance was working: with small chunks (20,000 subscribers), and with the default `fanout`
settings (40,000 subscribers; chunks and pages of 5,000). The subscribers are bulk-loaded
(`pushgate load-subscribers`) before the gateway starts."""
import collections
import os
import signal
import time

import grpc

from conftest import Server, app_config, load_subscribers
from pushgate.v1 import push_pb2, push_pb2_grpc

SUBSCRIBERS = 20_000
# Chunks smaller than the default (5,000) so that the duplicate window is smaller than the topic:
# the recipients a dead instance may have sent without committing are at most a chunk (or 3 pages
# of 5,000) for each chunk it was working, and each of its 2 workers works 2 chunks at most.
CHUNK = 2_000
WINDOW = 2 * 2 * min(CHUNK, 3 * 5_000)


def publish_kill_resume(tmp_path, lookalike, config, store, topic, kill_after):
    """Starts the gateway on `store`, publishes to `topic`, kills it with SIGKILL once `kill_after`
    requests of the message reached the look-alike, starts it again on the same store and waits for
    the fan-out to complete. Answers the message as the second instance reports it, how many
    requests had arrived at the kill, and the provider's requests by token."""
    first = Server(config, str(tmp_path), store=store)
    try:
        with grpc.insecure_channel(first.address) as channel:
            before = len(lookalike.requests)
            reply = push_pb2_grpc.PushStub(channel).Publish(
                push_pb2.PublishRequest(topic=topic, message="survive"), timeout=10)
        # Let the fan-out get going, then kill the process without warning.
        deadline = time.time() + 60
        while len(lookalike.requests) - before < kill_after and time.time() < deadline:
            time.sleep(0.01)
        sent_before_kill = len(lookalike.requests) - before
        os.kill(first.proc.pid, signal.SIGKILL)
        first.proc.wait(timeout=10)
    finally:
        if first.alive():
            first.proc.kill()

    second = Server(config, str(tmp_path), store=store)
    try:
        with grpc.insecure_channel(second.address) as channel:
            push = push_pb2_grpc.PushStub(channel)
            deadline = time.time() + 120
            while time.time() < deadline:
                message = push.GetMessage(push_pb2.GetMessageRequest(message_id=reply.message_id), timeout=10)
                if message.state == push_pb2.MESSAGE_STATE_COMPLETED:
                    break
                time.sleep(0.1)
        assert message.state == push_pb2.MESSAGE_STATE_COMPLETED, message
        assert any("resuming fan-outs" in line for line in second.log)
    finally:
        second.stop()
    counts = collections.Counter(h[":path"][len("/3/device/"):] for h, _ in lookalike.requests[before:])
    return message, sent_before_kill, counts


def test_kill_9_mid_fan_out_then_restart_delivers_to_everyone(tmp_path, lookalike):
    config = {"apps": [app_config("durable", "com.example.durable", lookalike)],
              "fanout": {"workers": 2, "chunk_size": CHUNK}}
    store = str(tmp_path / "durable.db")
    tokens = load_subscribers(store, "durable", "durable", SUBSCRIBERS)
    message, sent_before_kill, counts = publish_kill_resume(tmp_path, lookalike, config, store, "durable", 3000)
    assert 0 < sent_before_kill < SUBSCRIBERS, "the kill must land mid-fan-out (%d sent)" % sent_before_kill
    missing = [t for t in tokens if counts[t] == 0]
    assert not missing, "%d endpoints never received the message" % len(missing)
    duplicates = sum(c - 1 for c in counts.values() if c > 1)
    # At-least-once: the duplicate window is the pages that were in flight when the process died.
    assert duplicates <= WINDOW, duplicates
    assert message.total >= SUBSCRIBERS and message.delivered >= SUBSCRIBERS - duplicates


# The default `fanout` settings: 2 workers, chunks of 5,000 read as one page each, so a dead instance
# may have sent up to 2 workers x 2 chunks x 5,000 without committing: fewer than the topic.
DEFAULT_SUBSCRIBERS = 40_000
DEFAULT_WINDOW = 2 * 2 * 5_000


def test_kill_9_mid_fan_out_with_the_default_chunks_and_pages_delivers_to_everyone(tmp_path, lookalike):
    store = str(tmp_path / "durable-defaults.db")
    tokens = load_subscribers(store, "defaults", "durable", DEFAULT_SUBSCRIBERS)
    config = {"apps": [app_config("durable", "com.example.durable", lookalike)]}
    message, sent_before_kill, counts = publish_kill_resume(tmp_path, lookalike, config, store, "defaults", 5000)
    assert 5000 <= sent_before_kill < DEFAULT_SUBSCRIBERS - DEFAULT_WINDOW, \
        "the kill must land early in the fan-out (%d sent)" % sent_before_kill
    missing = [t for t in tokens if counts[t] == 0]
    assert not missing, "%d endpoints never received the message" % len(missing)
    assert len(counts) == DEFAULT_SUBSCRIBERS, "requests only to the topic's endpoints"
    duplicates = sum(c - 1 for c in counts.values() if c > 1)
    assert duplicates <= DEFAULT_WINDOW, duplicates
    assert message.total >= DEFAULT_SUBSCRIBERS and message.delivered >= DEFAULT_SUBSCRIBERS - duplicates, message
    print("kill -9 with the default fanout settings: %d sent before the kill, %d sent twice"
          % (sent_before_kill, duplicates))

"""The README's quick start: `pushgate serve` with no config runs a demo app wired to a mock APNs
that it starts itself, so the next command, a `pushgate send`, shows a real delivery result."""
import subprocess

import pytest

from conftest import Server


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory):
    s = Server(None, str(tmp_path_factory.mktemp("demo")))
    yield s
    s.stop()


def test_demo_mode_is_logged_loudly(demo_server):
    assert any("DEMO MODE" in line and "MOCK APNs" in line for line in demo_server.log), "".join(demo_server.log)


def test_pushgate_send_to_the_demo_app_is_delivered(demo_server):
    out = subprocess.run([demo_server.binary, "send", "--server", demo_server.address, "--app", "demo",
                          "--token", "ab" * 32, "--title", "Hi", "--body", "Hello"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("DELIVERED token=" + "ab" * 32 + " http=200 apns-id=")


def test_the_demo_shows_a_live_activity_walkthrough(demo_server):
    """The walkthrough of docs/api.md on the demo: push-to-start naming a channel, updates on the channel
    with `pushgate send --channel`, the end, the channel deleted (the demo's mock serves the channel
    API as well)."""
    import grpc
    from pushgate.v1 import channels_pb2, channels_pb2_grpc

    def send(*args):
        return subprocess.run([demo_server.binary, "send", "--server", demo_server.address, "--app", "demo"]
                              + list(args), capture_output=True, text=True, timeout=60)

    with grpc.insecure_channel(demo_server.address) as ch:
        channels = channels_pb2_grpc.ChannelsStub(ch)
        match = channels.CreateChannel(channels_pb2.CreateChannelRequest(
            app="demo", message_storage_policy=channels_pb2.MESSAGE_STORAGE_POLICY_MOST_RECENT), timeout=10)
        started = send("--token", "cd" * 32, "--title", "Kick-off", "--live-activity", "start",
                       "--attributes-type", "MatchAttributes", "--attributes", '{"home":"A","away":"B"}',
                       "--content-state", '{"home":0,"away":0}', "--input-push-channel", match.channel_id)
        assert started.returncode == 0 and started.stdout.startswith("DELIVERED"), started.stdout + started.stderr
        updated = send("--channel", match.channel_id, "--title", "Goal!", "--live-activity", "update",
                       "--content-state", '{"home":1,"away":0}')
        assert updated.returncode == 0, updated.stdout + updated.stderr
        assert updated.stdout.startswith("DELIVERED token=%s http=200" % match.channel_id)
        ended = send("--channel", match.channel_id, "--live-activity", "end", "--content-state", '{"home":2,"away":1}')
        assert ended.returncode == 0, ended.stdout + ended.stderr
        channels.DeleteChannel(channels_pb2.DeleteChannelRequest(app="demo", channel_id=match.channel_id), timeout=10)
        gone = send("--channel", match.channel_id, "--live-activity", "update", "--content-state", "{}")
        assert gone.returncode == 3 and "NOT_FOUND" in gone.stderr.upper().replace(" ", "_"), gone.stderr
        misuse = send("--channel", match.channel_id, "--token", "ab" * 32, "--live-activity", "update")
        assert misuse.returncode == 2 and "--channel: a broadcast goes to the channel" in misuse.stderr


def test_pushgate_send_reports_bad_input_clearly(demo_server):
    out = subprocess.run([demo_server.binary, "send", "--server", demo_server.address, "--token", "12", "--body", "x"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 3
    assert "notifications[0].tokens[0]: APNs device token must be 64-200 hex digits" in out.stderr


@pytest.mark.parametrize("config, words", [
    ('{"listn": "x"}', 'config: unknown key "listn"'),
    ('{"apps": [{"name": "a", "bundle_id": "b"}]}', "config.apps[0]: set team_id, key_id and key_file"),
    ('{"apps": [{"name": "a", "team_id": "T", "key_id": "K", "key_file": "/nonexistent.p8"}]}', "/nonexistent.p8"),
    ('{"apps": [{"name": "a", "team_id": "T", "key_id": "K", "key_file": "k", "url": "http://x"}]}',
     "config.apps[0].url"),
    ("{not json", "config: not valid JSON"),
])
def test_a_bad_config_stops_serve_with_a_message_naming_the_key(tmp_path, config, words):
    import os
    path = tmp_path / "bad.json"
    path.write_text(config)
    binary = os.environ.get("PUSHGATE_BIN")
    out = subprocess.run([binary, "serve", "--config", str(path), "--listen", "127.0.0.1:0",
                          "--store", str(tmp_path / "pushgate.db")],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    assert words in out.stdout + out.stderr, out.stdout + out.stderr

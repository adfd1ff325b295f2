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

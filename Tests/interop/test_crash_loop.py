"""The crash loop's short form (scripts/crash-loop.py; `make crash-loop` runs the long one): three
kill -9s of `pushgate serve` during Publish fan-outs and SendStream batches, restarts on the same
store, and the reconciliation from what mock-apns received (every accepted Publish reached every
subscriber at least once; duplicates within the window; no Send token twice)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "crash-loop.py")


def test_crash_loop_short_form(tmp_path):
    figures_file = str(tmp_path / "crash.json")
    run = subprocess.run([sys.executable, SCRIPT, "--kills", "3", "--subscribers", "1500", "--stream-tokens", "1500",
                          "--max-kill-delay", "2.5", "--workdir", str(tmp_path), "--json", figures_file],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    figures = json.load(open(figures_file))
    assert figures["ok"] and figures["kills"] == 3 and figures["gateway_starts"] == 4
    assert figures["publishes_accepted"] == 3
    assert figures["publish_notifications_lost"] == 0
    assert figures["publish_duplicates"] <= figures["duplicate_window"]

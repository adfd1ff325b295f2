"""`pushgate bench` smoke test: a 3-second run (it starts its own mock-apns and gateway as children on
127.0.0.1) completes and prints the table with a non-zero rate. Not a speed assertion."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT


def _binary():
    return os.environ.get("PUSHGATE_BIN", os.path.join(ROOT, ".build", "debug", "pushgate"))


def test_bench_runs_and_prints_the_table():
    proc = subprocess.run([_binary(), "bench", "--duration", "3", "--tokens-per-send", "100"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for row in ("notifications/s", "RPC latency (ms)", "provider requests (ms)", "errors", "gateway RSS",
                "gateway CPU"):
        assert row in out, out
    rate = re.search(r"notifications/s\s+\|\s+([\d,]+)", out)
    assert rate and int(rate.group(1).replace(",", "")) > 0, out
    assert re.search(r"errors\s+\|\s+none", out), out
    # A progress line per second went to standard error.
    assert re.search(r"bench: 1s\s+notifications/s", proc.stderr), proc.stderr


def test_bench_json_is_one_object():
    proc = subprocess.run([_binary(), "bench", "--duration", "1", "--tokens-per-send", "10", "--json", "--quiet"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert result["delivered"] > 0 and result["notifications_per_s"] > 0
    assert result["latency_ms"]["p99"] >= result["latency_ms"]["p50"] > 0
    assert result["gateway"]["rss_idle_kib"] > 0
    assert result["errors"] == {}
    # The gateway's provider-request histogram over the measured run: one APNs request per token
    # (the warm-up's are before the first scrape), each shorter than its RPC on average.
    provider = result["provider_request_ms"]
    assert provider["requests"] == result["results"]
    assert 0 < provider["mean"] < result["latency_ms"]["mean"]
    assert 0 < provider["p50"] <= provider["p90"] <= provider["p99"]


def test_bench_rate_splits_latency_by_machine_stalls():
    """--rate runs the stall probe; every RPC is counted either among those in flight while the
    machine stalled or in the latency of the others, and the split appears in the table too."""
    proc = subprocess.run([_binary(), "bench", "--tokens-per-send", "1", "--rate", "200", "--duration", "2",
                           "--grpc-connections", "1", "--json", "--quiet"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    clean = result["latency_outside_stalls_ms"]
    assert clean["samples"] + clean["in_stalls"] == result["rpcs"] > 0
    assert result["stall_probe"]["p50_us"] > 0
    if clean["samples"]:
        assert 0 < clean["p50"] <= clean["p99"]
    table = subprocess.run([_binary(), "bench", "--tokens-per-send", "1", "--rate", "200", "--duration", "1",
                            "--grpc-connections", "1"], capture_output=True, text=True, timeout=60)
    assert table.returncode == 0 and "outside stalls (ms)" in table.stdout, table.stdout + table.stderr


def test_bench_gateway_metrics_flag():
    """--gateway-metrics names a --target gateway's metrics address; a bad one is a usage error, and
    without a running gateway the bench says it cannot connect."""
    proc = subprocess.run([_binary(), "bench", "--target", "127.0.0.1:1", "--gateway-metrics", "nope"],
                          capture_output=True, text=True, timeout=10)
    assert proc.returncode == 2 and "--gateway-metrics: expected HOST:PORT" in proc.stderr


def test_bench_help():
    proc = subprocess.run([_binary(), "bench", "--help"], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 0 and "--tokens-per-send" in proc.stdout


def test_bench_fcm_runs_against_mock_fcm():
    """--provider fcm: bench starts mock-fcm (service account written by the mock) and an FCM app;
    the gateway gets an access token and delivers every FCM token."""
    proc = subprocess.run([_binary(), "bench", "--provider", "fcm", "--duration", "5", "--tokens-per-send", "100",
                           "--json", "--quiet"], capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert result["provider"] == "fcm"
    assert "mock-fcm" in result["setup"] and "FCM connection" in result["setup"]
    assert result["delivered"] > 0 and result["delivered"] == result["results"]
    assert result["errors"] == {}
    assert result["mock"]["requests"] >= result["delivered"]


@pytest.mark.parametrize("provider,http_version,speaks", [("adm", None, "1.1"), ("fcm", "1.1", "1.1"), ("adm", "2", "2")])
def test_bench_http_versions(provider, http_version, speaks):
    """--provider adm (mock-adm, HTTP/1.1 as Amazon) and --http-version: the app's http_version, and
    the mock bench starts speaks it; every token is delivered."""
    argv = [_binary(), "bench", "--provider", provider, "--duration", "3", "--tokens-per-send", "50",
            "--connections", "2", "--json", "--quiet", "--keep-files"]
    if http_version:
        argv += ["--http-version", http_version]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert result["provider"] == provider and "mock-%s" % provider in result["setup"]
    assert result["delivered"] > 0 and result["delivered"] == result["results"] and result["errors"] == {}
    kept = re.search(r"kept (\S+)", proc.stderr).group(1)
    try:
        with open(os.path.join(kept, "mock-%s.log" % provider)) as fh:
            assert "http=%s" % speaks in fh.read()
    finally:
        shutil.rmtree(kept, ignore_errors=True)


def test_bench_provider_flag_is_checked():
    proc = subprocess.run([_binary(), "bench", "--provider", "gcm"], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 2 and "--provider: apns, fcm, adm, webpush or hms" in proc.stderr
    proc = subprocess.run([_binary(), "bench", "--http-version", "1.1"], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 2 and "--http-version: only with --provider fcm, adm, webpush or hms" in proc.stderr
    proc = subprocess.run([_binary(), "bench", "--provider", "fcm", "--verify-tokens"], capture_output=True,
                          text=True, timeout=10)
    assert proc.returncode == 2 and "--verify-tokens" in proc.stderr

"""The Grafana dashboard (docs/grafana/pushgate-dashboard.json, docs/grafana.md) against what a running
gateway serves: scripts/check-grafana.py checks its structure and that every metric and label its
queries name is on /metrics, after a Send has given the per-app families their series. The checker
is also shown to fail on a dashboard that names a metric or a label the gateway does not serve."""
import json
import os
import subprocess
import sys
import urllib.request

import grpc
import pytest

from conftest import ROOT, Server, app_config, wait_metrics_port
from pushgate.v1 import push_pb2, push_pb2_grpc

DASHBOARD = os.path.join(ROOT, "docs", "grafana", "pushgate-dashboard.json")
CHECKER = os.path.join(ROOT, "scripts", "check-grafana.py")
TOPIC = "com.example.grafana"
DEAD = "dd" * 32  # the look-alike answers 410 Unregistered for it


@pytest.fixture(scope="module")
def exposition(tmp_path_factory, lookalike):
    """/metrics of a gateway that has delivered, rejected and answered gRPC calls: (file, URL)."""
    directory = tmp_path_factory.mktemp("grafana")
    config = {"metrics_listen": "127.0.0.1:0", "apps": [app_config("grafanaapp", TOPIC, lookalike)]}
    server = Server(config, str(directory))
    try:
        url = "http://127.0.0.1:%d/metrics" % wait_metrics_port(server)
        with grpc.insecure_channel(server.address) as channel:
            reply = push_pb2_grpc.PushStub(channel).Send(push_pb2.SendRequest(notifications=[
                push_pb2.Notification(app="grafanaapp", tokens=["%064x" % 0x6A7000, DEAD],
                                      alert=push_pb2.Alert(body="dashboard"))]), timeout=30)
        assert sorted(r.status for r in reply.results) == sorted([push_pb2.STATUS_DELIVERED, push_pb2.STATUS_REJECTED])
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
        path = directory / "metrics.txt"
        path.write_text(body)
        yield str(path), url
    finally:
        server.stop()
    assert server.proc.returncode == 0, "pushgate exited with %s:\n%s" % (server.proc.returncode, "".join(server.log))


def check(dashboard, metrics):
    return subprocess.run([sys.executable, CHECKER, dashboard, "--metrics", metrics],
                          capture_output=True, text=True, timeout=60)


def test_every_query_names_metrics_and_labels_the_gateway_serves(exposition):
    path, url = exposition
    for metrics in (path, url):
        result = check(DASHBOARD, metrics)
        assert result.returncode == 0, result.stdout + result.stderr
        assert ": ok: " in result.stdout


@pytest.mark.parametrize("old, new, named", [
    ("pushgate_queue_depth{", "pushgate_no_such_metric{", "pushgate_no_such_metric is not a metric family"),
    ("sum by (method, code)", "sum by (method, no_such_label)", "label 'no_such_label' is on none of"),
    ('pushgate_rpc_total{instance=~"$instance", code!="OK"}', 'pushgate_rpc_total{instance=~"$instance", cod!="OK"}',
     "pushgate_rpc_total has no label 'cod'"),
])
def test_the_check_fails_on_a_metric_or_label_the_gateway_does_not_serve(exposition, tmp_path, old, new, named):
    with open(DASHBOARD) as fh:
        dashboard = json.load(fh)
    changed = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            if old in target["expr"] and not changed:
                target["expr"] = target["expr"].replace(old, new, 1)
                changed.append(panel["title"])
    assert changed, "no expr contains %r" % old
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(dashboard))
    result = check(str(broken), exposition[0])
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if named in line]
    assert lines, result.stdout
    assert repr(changed[0]) in lines[0], result.stdout

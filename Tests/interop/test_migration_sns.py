"""The migration path from Amazon SNS (issue 45, part 3; docs/migration.md): scripts/sns-to-pushgate.py
lists a platform application's endpoints and subscriptions with Debian's aws CLI, here against the
gateway's own SNS API standing in for SNS, and its JSON Lines go through `pushgate import` into a
fresh store, read back through `pushgate export` and through the SNS API of a gateway on that store.

Expectations come from the import contract (issue 45, part 3), AWS's SNS API reference and the AWS CLI's
documentation (ListEndpointsByPlatformApplication's Endpoints[].Attributes Token / Enabled /
CustomUserData, "Enabled" as the strings "true"/"false", iOS tokens answered lowercase,
ListSubscriptions' Protocol / Endpoint / TopicArn, --max-items / --starting-token), not from the
gateway's sources. The SNS side is built partly with the aws CLI, partly with boto3 (faster: each CLI
run costs about half a second)."""
import concurrent.futures
import json
import os
import re
import subprocess

import pytest

from conftest import ROOT, app_config
from mock_process import pushgate_binary
from sns_support import Credential, SNSGateway, apns_token, app_arn, arn, hermetic_env

AWS_CLI = "/usr/bin/aws"  # Debian's awscli (v2); the script finds it as `aws` on the PATH below
SCRIPT = os.path.join(ROOT, "scripts", "sns-to-pushgate.py")
PYTHON = "/usr/bin/python3"  # with -S: no site-packages, so the script runs on the standard library alone
PROD = app_arn("APNS", "prod")
SANDY = app_arn("APNS_SANDBOX", "sandy")
MEMBERS = {"app", "token", "user_id", "custom_user_data", "enabled", "topics"}  # the contract's JSON Lines


@pytest.fixture(scope="module")
def source(tmp_path_factory, lookalike):
    """A gateway with the SNS API standing in for SNS: an APNs app `prod` and a sandbox app `sandy`."""
    if not os.path.exists(AWS_CLI):
        pytest.skip("Debian's aws CLI is not installed (%s; apt-get install awscli)" % AWS_CLI)
    directory = str(tmp_path_factory.mktemp("migration-sns"))
    admin = Credential(directory, "admin", ["*"], True)
    apps = [app_config("prod", "com.example.prod", lookalike),
            app_config("sandy", "com.example.sandy", lookalike, sandbox=True)]
    gateway = SNSGateway(directory, apps, [admin])
    gateway.admin, gateway.sns, gateway.apps = admin, gateway.client(admin), apps
    gateway.env = hermetic_env(directory, admin)
    yield gateway
    gateway.stop()


def aws(gw, *args):
    out = subprocess.run([AWS_CLI, "--endpoint-url", gw.url, "sns"] + list(args), env=gw.env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, "aws sns %s: %s" % (args[0], out.stderr)
    return json.loads(out.stdout) if out.stdout.strip() else {}


@pytest.fixture(scope="module")
def fleet(source):
    """prod: seven endpoints (one created with an upper-case token, one disabled, CustomUserData on some,
    one of them non-ASCII), subscribed to `news` and `sport` (one subscription with a filter policy);
    sandy: one endpoint subscribed to `news`, which must not be exported with prod."""
    sns = source.sns
    tokens = {n: apns_token(0x3160A0 + n) for n in range(1, 8)}
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        first = pool.submit(aws, source, "create-platform-endpoint", "--platform-application-arn", PROD,
                            "--token", tokens[1].upper(), "--custom-user-data", "user-1 \u2713")
        second = pool.submit(aws, source, "create-platform-endpoint", "--platform-application-arn", PROD,
                             "--token", tokens[2], "--custom-user-data", "user-2",
                             "--attributes", json.dumps({"Enabled": "false"}))
        news = pool.submit(aws, source, "create-topic", "--name", "news")
        endpoints = {1: first.result()["EndpointArn"], 2: second.result()["EndpointArn"]}
        news = news.result()["TopicArn"]
    for n in range(3, 8):
        extra = {"CustomUserData": "user-%d" % n} if n % 2 == 0 else {}
        endpoints[n] = sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=tokens[n],
                                                    **extra)["EndpointArn"]
    sport = sns.create_topic(Name="sport")["TopicArn"]
    aws(source, "subscribe", "--topic-arn", news, "--protocol", "application",
        "--notification-endpoint", endpoints[1])
    sns.subscribe(TopicArn=sport, Protocol="application", Endpoint=endpoints[1],
                  Attributes={"FilterPolicy": json.dumps({"league": ["premier"]})})
    sns.subscribe(TopicArn=news, Protocol="application", Endpoint=endpoints[2])
    sns.subscribe(TopicArn=sport, Protocol="application", Endpoint=endpoints[4])
    other_token = apns_token(0x3160FF)
    other = sns.create_platform_endpoint(PlatformApplicationArn=SANDY, Token=other_token)["EndpointArn"]
    sns.subscribe(TopicArn=news, Protocol="application", Endpoint=other)
    assert news == arn("news") and sport == arn("sport")
    return {"tokens": tokens, "endpoints": endpoints, "other_token": other_token,
            "topics": {1: ["news", "sport"], 2: ["news"], 4: ["sport"]}}


def run_script(gw, *args, env=None):
    return subprocess.run([PYTHON, "-S", SCRIPT, "--endpoint-url", gw.url] + list(args), env=env or gw.env,
                          capture_output=True, text=True, timeout=60)


def lines_by_token(stdout):
    rows = [json.loads(line) for line in stdout.splitlines()]
    by_token = {row["token"]: row for row in rows}
    assert len(by_token) == len(rows), "one line per endpoint"
    return by_token


@pytest.fixture(scope="module")
def exported(source, fleet):
    """The script's output for prod, mapped to the Pushgate app `prod`."""
    out = run_script(source, "--application-arn", PROD, "--app", "prod")
    assert out.returncode == 0, out.stderr
    return out


def test_script_writes_each_endpoint_with_its_state_data_and_topics(fleet, exported):
    rows = lines_by_token(exported.stdout)
    tokens = fleet["tokens"]
    # Every prod endpoint, none of sandy's; tokens as SNS answers them (iOS tokens lowercase).
    assert set(rows) == set(tokens.values())
    for n, token in tokens.items():
        row = rows[token]
        assert set(row) <= MEMBERS, row
        assert row["app"] == "prod"
        assert row["enabled"] is (n != 2), row  # "true"/"false" strings became JSON booleans
        assert sorted(row["topics"]) == fleet["topics"].get(n, []), row
    assert rows[tokens[1]]["custom_user_data"] == "user-1 \u2713"
    assert rows[tokens[2]]["custom_user_data"] == "user-2"
    assert "custom_user_data" not in rows[tokens[3]], "no CustomUserData: no member (not an empty one)"
    assert "user_id" not in rows[tokens[1]], "user_id only with --user-id-from-custom-user-data"
    # JSON Lines in UTF-8, non-ASCII as itself.
    assert "user-1 \u2713" in exported.stdout
    assert "7 endpoints" in exported.stderr and "1 disabled" in exported.stderr, exported.stderr
    assert "4 subscriptions" in exported.stderr, exported.stderr


def test_script_pages_across_cli_runs_and_copies_user_ids(source, fleet, exported):
    # --items-per-call 4: two CLI runs joined by --starting-token; --no-topics: no ListSubscriptions.
    out = run_script(source, "--application-arn", PROD, "--app", "ios", "--items-per-call", "4", "--no-topics",
                     "--user-id-from-custom-user-data")
    assert out.returncode == 0, out.stderr
    rows = lines_by_token(out.stdout)
    assert set(rows) == set(fleet["tokens"].values())
    for row in rows.values():
        assert row["app"] == "ios" and "topics" not in row
        assert row.get("user_id") == row.get("custom_user_data"), row


def test_script_errors_are_clear(source, tmp_path):
    # A well-formed ARN naming no application: the CLI's error, with its text.
    out = run_script(source, "--application-arn", app_arn("APNS", "no-such-app"), "--app", "x", "--no-topics")
    assert out.returncode == 1 and out.stdout == ""
    assert "list-endpoints-by-platform-application failed" in out.stderr and "NotFound" in out.stderr, out.stderr
    # Not an application ARN; a platform Pushgate has no provider for: usage errors, no CLI run.
    out = run_script(source, "--application-arn", arn("endpoint/APNS/prod/x"), "--app", "x")
    assert out.returncode == 2 and "not a platform application ARN" in out.stderr, out.stderr
    out = run_script(source, "--application-arn", app_arn("BAIDU", "b"), "--app", "x")
    assert out.returncode == 2 and "no Pushgate equivalent" in out.stderr, out.stderr
    # No aws on the PATH.
    out = run_script(source, "--application-arn", PROD, "--app", "x", env=dict(source.env, PATH=str(tmp_path)))
    assert out.returncode == 2 and "AWS CLI" in out.stderr and "not on PATH" in out.stderr, out.stderr


# --- into Pushgate: `pushgate import` (issue 45, part 3's contract) ------------------------------------

SUMMARY = re.compile(r"^imported (\d+) rows? \((\d+) endpoints? created, (\d+) existing, (\d+) subscriptions? created\), "
                     r"(\d+) bad rows?, in [0-9.]+ s \([0-9.,]+ rows/s\)$")


@pytest.fixture(scope="module")
def import_command():
    binary = pushgate_binary()
    probe = subprocess.run([binary, "import", "--help"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        said = ((probe.stderr or probe.stdout).strip().splitlines() or [""])[0]
        pytest.skip("`pushgate import` is not in %s yet (`import --help` exited %d: %s)"
                    % (binary, probe.returncode, said))
    return binary


def pushgate(binary, *args):
    return subprocess.run([binary] + list(args), capture_output=True, text=True, timeout=60)


def summary(out):
    match = SUMMARY.match(out.stdout.strip().splitlines()[-1])
    assert match, out.stdout
    return tuple(int(g) for g in match.groups())


def test_import_into_a_fresh_store_keeps_endpoints_states_data_and_subscriptions(
        source, fleet, exported, import_command, tmp_path):
    tokens = fleet["tokens"]
    lines = exported.stdout
    # One more line as a team's own database might hold it: an upper-case APNs token of an endpoint
    # already in the file (the import normalises it to the same endpoint) with one more topic.
    lines += json.dumps({"app": "prod", "token": tokens[3].upper(), "topics": ["extra"]}) + "\n"
    path = tmp_path / "prod.jsonl"
    path.write_text(lines, encoding="utf-8")
    target = tmp_path / "target"
    target.mkdir()
    config = tmp_path / "import.json"
    config.write_text(json.dumps({"store": str(target / "pushgate.db"), "apps": [source.apps[0]]}))

    out = pushgate(import_command, "import", "--config", str(config), str(path))
    assert out.returncode == 0, out.stdout + out.stderr
    first = summary(out)
    # 8 rows, 7 endpoints created; subscriptions news+sport, news, sport, extra; nothing bad.
    assert (first[0], first[1], first[3], first[4]) == (8, 7, 5, 0), out.stdout
    # Resumable: the same input again creates nothing.
    out = pushgate(import_command, "import", "--config", str(config), str(path))
    assert out.returncode == 0, out.stdout + out.stderr
    again = summary(out)
    assert (again[0], again[1], again[3], again[4]) == (8, 0, 0, 0), out.stdout

    expected_topics = {tokens[n]: sorted(fleet["topics"].get(n, []) + (["extra"] if n == 3 else []))
                       for n in tokens}
    expected_data = {tokens[n]: d for n, d in ((1, "user-1 \u2713"), (2, "user-2"), (4, "user-4"), (6, "user-6"))}

    # Read back by `pushgate export`.
    out = pushgate(import_command, "export", "--config", str(config), "--format", "jsonl", "--app", "prod")
    assert out.returncode == 0, out.stderr
    rows = lines_by_token(out.stdout)
    assert set(rows) == set(tokens.values())
    for token, row in rows.items():
        assert row["app"] == "prod" and row["enabled"] is (token != tokens[2]), row
        assert (row.get("custom_user_data") or None) == expected_data.get(token), row
        assert sorted(row.get("topics") or []) == expected_topics[token], row

    # Read back by a gateway serving that store, through its SNS API.
    directory = str(tmp_path / "target")
    gateway = SNSGateway(directory, [source.apps[0]], [source.admin])
    try:
        sns = gateway.client(source.admin)
        endpoints = {}
        for page in sns.get_paginator("list_endpoints_by_platform_application").paginate(PlatformApplicationArn=PROD):
            for endpoint in page["Endpoints"]:
                endpoints[endpoint["Attributes"]["Token"]] = endpoint
        assert set(endpoints) == set(tokens.values())
        for token, endpoint in endpoints.items():
            attributes = endpoint["Attributes"]
            assert attributes["Enabled"] == ("false" if token == tokens[2] else "true"), attributes
            assert attributes.get("CustomUserData") == expected_data.get(token), attributes
        arn_token = {e["EndpointArn"]: t for t, e in endpoints.items()}
        subscribed = {t: [] for t in tokens.values()}
        for page in sns.get_paginator("list_subscriptions").paginate():
            for subscription in page["Subscriptions"]:
                assert subscription["Protocol"] == "application"
                subscribed[arn_token[subscription["Endpoint"]]].append(subscription["TopicArn"].rsplit(":", 1)[1])
                # The import format has no filter policy: endpoint 1's `sport` subscription arrives without
                # the one it had (docs/migration.md says so).
                attributes = sns.get_subscription_attributes(
                    SubscriptionArn=subscription["SubscriptionArn"])["Attributes"]
                assert "FilterPolicy" not in attributes, attributes
        assert {t: sorted(v) for t, v in subscribed.items()} == expected_topics
    finally:
        gateway.stop()
    # Last, as the data above does not depend on it: each imported row either created its endpoint or
    # found an existing one, the upper-case line (endpoint 3 again, in the same batch) included.
    assert (first[1] + first[2], again[1] + again[2]) == (8, 8), \
        "created + existing should be the 8 rows: first run %s, second %s" % (first, again)

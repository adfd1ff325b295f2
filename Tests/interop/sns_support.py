"""What the SNS interop tests share (test_sns.py, test_sns_sdks.py): a `pushgate serve` with an `sns`
section and SNS credentials, boto3 clients that read nothing of the host's AWS set-up, the ARNs the
issue (39) fixes, and waiting for what the APNs look-alike received.

Every expectation here comes from issue 39, botocore's SNS service model and AWS's SNS API Reference,
not from the gateway's sources."""
import base64
import collections
import hashlib
import json
import os
import secrets
import signal
import string
import time

import boto3
import botocore
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from conftest import Server

REGION = "us-east-1"
ACCOUNT = "123456789012"
GRPC_ADMIN_KEY = "pgk_sns-interop-admin-" + "k" * 24


def arn(resource):
    """`arn:aws:sns:{region}:{account}:{resource}` (the issue's ARN shapes)."""
    return "arn:aws:sns:%s:%s:%s" % (REGION, ACCOUNT, resource)


def app_arn(platform, app):
    return arn("app/%s/%s" % (platform, app))


def apns_token(n):
    return "%064x" % n


class Credential:
    """An SNS access key pair, its secret in a 0600 file, and its `sns.credentials` entry."""

    def __init__(self, directory, name, apps, admin):
        # An access key id as AWS shapes them (AKIA + 16 of A-Z2-7); a 40-character secret.
        self.access_key_id = "AKIA" + "".join(secrets.choice(string.ascii_uppercase + "234567") for _ in range(16))
        self.secret = base64.b64encode(os.urandom(30)).decode()
        self.secret_file = os.path.join(directory, "%s.secret" % name)
        with open(os.open(self.secret_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as fh:
            fh.write(self.secret + "\n")
        self.entry = {"access_key_id": self.access_key_id, "secret_access_key_file": self.secret_file,
                      "apps": list(apps), "admin": admin}


def sns_client(url, access_key_id, secret, region=REGION, **config):
    """An unmodified boto3 SNS client for `url`: explicit credentials, no retries (an error is seen
    as the gateway answered it), no proxy from the environment."""
    session = boto3.session.Session(aws_access_key_id=access_key_id, aws_secret_access_key=secret,
                                    region_name=region)
    verify = config.pop("verify", None)
    options = {"retries": {"max_attempts": 1, "mode": "standard"}, "proxies": {}, "connect_timeout": 5,
               "read_timeout": 60}
    options.update(config)
    return session.client("sns", endpoint_url=url, config=Config(**options), verify=verify)


def unsigned_client(url):
    return sns_client(url, "unused", "unused", signature_version=botocore.UNSIGNED)


def client_error(call, *args, **kwargs):
    """Calls an SDK method that must fail; answers (Error.Code, HTTP status, Error.Message) as the
    SDK read them."""
    with pytest.raises(ClientError) as info:
        call(*args, **kwargs)
    response = info.value.response
    return (response["Error"].get("Code"), response["ResponseMetadata"].get("HTTPStatusCode"),
            response["Error"].get("Message", ""))


class SNSGateway:
    """`pushgate serve` with `apps`, an `sns` section holding `credentials`, and one admin gRPC API key
    (so that the gRPC side is checked with keys too)."""

    def __init__(self, directory, apps, credentials, region=REGION, account=ACCOUNT, api_keys=True, extra=None):
        self.directory = directory
        self.config = {"apps": apps, "sns": {"region": region, "account_id": account,
                                             "credentials": [c.entry for c in credentials]}}
        self.config.update(extra or {})
        if api_keys:
            self.config["api_keys"] = [{"name": "sns-interop-admin", "apps": ["*"], "admin": True,
                                        "key_sha256": hashlib.sha256(GRPC_ADMIN_KEY.encode()).hexdigest()}]
        self.server = Server(self.config, directory)
        self.url = "http://127.0.0.1:%d" % self.server.port
        self.config_path = os.path.join(directory, "pushgate.json")

    def client(self, credential, **config):
        return sns_client(self.url, credential.access_key_id, credential.secret, **config)

    def reload(self, timeout=10):
        """Writes `self.config` and sends SIGHUP; returns once the gateway logs the reload."""
        with open(self.config_path, "w") as fh:
            json.dump(self.config, fh)
        mark = len(self.server.log)
        self.server.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if any('msg="configuration reloaded"' in line for line in self.server.log[mark:]):
                return
            time.sleep(0.05)
        raise AssertionError("no reload logged:\n" + "".join(self.server.log[mark:]))

    def stop(self):
        self.server.stop()
        assert self.server.proc.returncode == 0, "pushgate exited with %s:\n%s" % (
            self.server.proc.returncode, "".join(self.server.log))


def gateway_with_three_credentials(directory, apps):
    """An SNSGateway for `apps` with the credentials the SNS tests use: `admin` (every app, admin),
    `reader` (prod), `other` (sandy); `sns` is the admin's boto3 client."""
    admin = Credential(directory, "admin", ["*"], True)
    reader = Credential(directory, "reader", ["prod"], False)
    other = Credential(directory, "other", ["sandy"], False)
    gateway = SNSGateway(directory, apps, [admin, reader, other])
    gateway.admin, gateway.reader, gateway.other = admin, reader, other
    gateway.sns = gateway.client(admin)
    return gateway


def apns_received(lookalike, since, tokens):
    """{token: [(headers, body), ...]} of what the APNs look-alike got for `tokens` after `since`."""
    wanted = set(tokens)
    got = collections.defaultdict(list)
    for headers, body in lookalike.requests[since:]:
        token = headers.get(":path", "")[len("/3/device/"):]
        if token in wanted:
            got[token].append((headers, body))
    return got


def wait_apns(lookalike, since, tokens, expected, timeout=30, settle=0.5):
    """Waits until the look-alike has `expected` requests for `tokens` after `since`, then `settle`
    seconds more (so that a duplicate would have arrived); answers apns_received's map."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if sum(len(v) for v in apns_received(lookalike, since, tokens).values()) >= expected:
            break
        time.sleep(0.02)
    time.sleep(settle)
    got = apns_received(lookalike, since, tokens)
    assert sum(len(v) for v in got.values()) == expected, "expected %d deliveries, got %d" % (
        expected, sum(len(v) for v in got.values()))
    return got


def pages(client, operation, **kwargs):
    """Every page of a List* through boto3's own paginator (NextToken)."""
    return list(client.get_paginator(operation).paginate(**kwargs))


def hermetic_env(directory, credential):
    """An environment with nothing of the host's AWS configuration: credentials in AWS_* variables,
    an empty shared credentials file and a config file of our own, both in `directory`."""
    config = os.path.join(directory, "aws-config")
    with open(config, "w") as fh:
        fh.write("[default]\nregion = us-east-1\noutput = json\ncli_pager =\n")
    credentials = os.path.join(directory, "aws-credentials")
    open(credentials, "w").close()
    return {"PATH": "/usr/bin:/bin", "HOME": directory, "LANG": "C.UTF-8",
            "AWS_ACCESS_KEY_ID": credential.access_key_id, "AWS_SECRET_ACCESS_KEY": credential.secret,
            "AWS_DEFAULT_REGION": "us-east-1", "AWS_CONFIG_FILE": config,
            "AWS_SHARED_CREDENTIALS_FILE": credentials, "AWS_PAGER": "", "AWS_EC2_METADATA_DISABLED": "true"}

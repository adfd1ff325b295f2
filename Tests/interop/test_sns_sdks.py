"""Two more independent SNS clients deliver through the gateway (issue 39's "Must show"): Debian's aws
CLI (`awscli`, v2) and the AWS SDK for Go v2 (Debian's `golang-github-aws-aws-sdk-go-v2-dev`, built
offline in GOPATH mode from Tests/interop/sns_go/main.go). Neither reads anything of the host's AWS
set-up: credentials come from the environment, config files are temp files. Each test skips only
when its tool is not installed."""
import hashlib
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, app_config
from sns_support import Credential, SNSGateway, apns_token, app_arn, arn, hermetic_env, wait_apns

AWS_CLI = "/usr/bin/aws"  # Debian's; a pip-installed `aws` earlier on PATH would not be the one asked for
GO_SDK = "/usr/share/gocode/src/github.com/aws/aws-sdk-go-v2/service/sns"
GO_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sns_go", "main.go")
SEED_APNS = '{"aps": {"alert": "Hooray!", "badge": 0, "sound": "bingbong.aiff"}}'
SEED_MESSAGE = json.dumps({"default": "Hooray! (default)", "APNS": SEED_APNS})
PROD = app_arn("APNS", "prod")


@pytest.fixture(scope="module")
def gw(tmp_path_factory, lookalike):
    directory = str(tmp_path_factory.mktemp("pushgate-sns-sdks"))
    admin = Credential(directory, "admin", ["*"], True)
    gateway = SNSGateway(directory, [app_config("prod", "com.example.prod", lookalike)], [admin])
    gateway.admin = admin
    gateway.sns = gateway.client(admin)
    yield gateway
    gateway.stop()


# --- the aws CLI -------------------------------------------------------------------------------------


class AwsCli:
    def __init__(self, gw, env):
        self.gw, self.env = gw, env

    def run(self, *args, check=True):
        out = subprocess.run([AWS_CLI, "--endpoint-url", self.gw.url, "sns"] + list(args), env=self.env,
                             capture_output=True, text=True, timeout=60)
        if check:
            assert out.returncode == 0, "aws sns %s: %s" % (" ".join(args[:1]), out.stderr)
            return json.loads(out.stdout) if out.stdout.strip() else {}
        return out


@pytest.fixture
def aws(gw, tmp_path):
    if not os.path.exists(AWS_CLI):
        pytest.skip("Debian's aws CLI is not installed (%s; apt-get install awscli)" % AWS_CLI)
    return AwsCli(gw, hermetic_env(str(tmp_path), gw.admin))


def test_aws_cli_creates_subscribes_and_publishes(gw, aws, lookalike):
    applications = aws.run("list-platform-applications")["PlatformApplications"]
    assert [a["PlatformApplicationArn"] for a in applications] == [PROD]
    token = apns_token(0xC11001)
    endpoint = aws.run("create-platform-endpoint", "--platform-application-arn", PROD, "--token", token,
                       "--custom-user-data", "aws-cli")["EndpointArn"]
    assert re.match(r"^arn:aws:sns:us-east-1:123456789012:endpoint/APNS/prod/[^/:]+$", endpoint)
    assert aws.run("create-platform-endpoint", "--platform-application-arn", PROD, "--token", token,
                   "--custom-user-data", "aws-cli")["EndpointArn"] == endpoint
    attributes = aws.run("get-endpoint-attributes", "--endpoint-arn", endpoint)["Attributes"]
    assert attributes == {"Enabled": "true", "Token": token, "CustomUserData": "aws-cli"}
    topic = aws.run("create-topic", "--name", "cli")["TopicArn"]
    assert topic == arn("cli")
    subscription = aws.run("subscribe", "--topic-arn", topic, "--protocol", "application",
                           "--notification-endpoint", endpoint, "--return-subscription-arn",
                           "--attributes", json.dumps({"FilterPolicy": json.dumps({"via": ["cli"]})}))
    assert subscription["SubscriptionArn"].startswith(topic + ":")

    before = len(lookalike.requests)
    published = aws.run("publish", "--topic-arn", topic, "--message-structure", "json", "--message", SEED_MESSAGE,
                        "--message-attributes", json.dumps({"via": {"DataType": "String", "StringValue": "cli"}}))
    assert published["MessageId"]
    direct = aws.run("publish", "--target-arn", endpoint, "--message-structure", "json", "--message", SEED_MESSAGE)
    assert direct["MessageId"] and direct["MessageId"] != published["MessageId"]
    got = wait_apns(lookalike, before, [token], 2)
    assert [body for _, body in got[token]] == [SEED_APNS.encode()] * 2, "verbatim, once per publish"


def test_aws_cli_follows_next_token_and_reads_sns_errors(gw, aws):
    # 105 endpoints on top of the other test's: more than SNS's 100 a page, which the CLI pages through.
    made = {gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=apns_token(0xC12000 + i))["EndpointArn"]
            for i in range(105)}
    listed = aws.run("list-endpoints-by-platform-application", "--platform-application-arn", PROD)["Endpoints"]
    arns = [e["EndpointArn"] for e in listed]
    assert made <= set(arns) and len(arns) == len(set(arns))

    out = aws.run("get-endpoint-attributes", "--endpoint-arn", arn("endpoint/APNS/prod/no-such-endpoint"), check=False)
    assert out.returncode != 0 and "(NotFound)" in out.stderr and "GetEndpointAttributes" in out.stderr, out.stderr
    out = aws.run("create-platform-endpoint", "--platform-application-arn", PROD, "--token", "not hex", check=False)
    assert out.returncode != 0 and "(InvalidParameter)" in out.stderr, out.stderr
    wrong = dict(aws.env, AWS_SECRET_ACCESS_KEY="wrong" + "x" * 35)
    out = AwsCli(gw, wrong).run("list-topics", check=False)
    assert out.returncode != 0 and "(SignatureDoesNotMatch)" in out.stderr, out.stderr
    unknown = dict(aws.env, AWS_ACCESS_KEY_ID="AKIAUNKNOWNUNKNOWN00")
    out = AwsCli(gw, unknown).run("list-topics", check=False)
    assert out.returncode != 0 and "(InvalidClientTokenId)" in out.stderr, out.stderr


# --- the AWS SDK for Go v2 -----------------------------------------------------------------------------


def go_env(gopath, cache):
    return {"PATH": "/usr/bin:/bin", "HOME": gopath, "GO111MODULE": "off", "GOFLAGS": "",
            "GOPATH": "/usr/share/gocode:" + gopath, "GOCACHE": cache, "GOPROXY": "off", "CGO_ENABLED": "0"}


@pytest.fixture(scope="module")
def sns_go(tmp_path_factory):
    """The Go program, built once per source and Go version under .build/sns_go/<hash>/ (reruns reuse it)."""
    go = shutil.which("go", path="/usr/bin:/usr/local/go/bin")
    if go is None or not os.path.isdir(GO_SDK):
        pytest.skip("Go or Debian's golang-github-aws-aws-sdk-go-v2-dev is not installed (%s)" % GO_SDK)
    version = subprocess.run([go, "version"], capture_output=True, text=True, check=True).stdout
    with open(GO_SOURCE, "rb") as fh:
        digest = hashlib.sha256(fh.read() + version.encode()).hexdigest()[:16]
    out_dir = os.path.join(ROOT, ".build", "sns_go", digest)
    binary = os.path.join(out_dir, "sns_go")
    if not os.path.exists(binary):
        os.makedirs(out_dir, exist_ok=True)
        gopath = str(tmp_path_factory.mktemp("gopath"))
        env = go_env(gopath, os.path.join(ROOT, ".build", "sns_go", "gocache"))
        built = subprocess.run([go, "build", "-o", binary + ".tmp", GO_SOURCE], env=env, capture_output=True,
                               text=True, timeout=600)
        assert built.returncode == 0, "go build failed:\n" + built.stderr
        os.replace(binary + ".tmp", binary)
    return binary


def test_aws_sdk_for_go_v2_creates_subscribes_and_publishes(sns_go, gw, lookalike, tmp_path):
    token = apns_token(0x60C001)
    env = hermetic_env(str(tmp_path), gw.admin)
    before = len(lookalike.requests)
    out = subprocess.run([sns_go, "-endpoint", gw.url, "-app", "prod", "-token", token, "-topic", "go-sdk",
                          "-message", SEED_MESSAGE], env=env, capture_output=True, text=True, timeout=90)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["platform_application_arn"] == PROD
    assert re.match(r"^arn:aws:sns:us-east-1:123456789012:endpoint/APNS/prod/[^/:]+$", report["endpoint_arn"])
    assert report["endpoint_attributes"] == {"Enabled": "true", "Token": token, "CustomUserData": "go-sdk-v2"}
    assert report["topic_arn"] == arn("go-sdk")
    assert report["subscription_arn"].startswith(arn("go-sdk") + ":")
    assert report["topic_message_id"] and report["target_message_id"]
    assert report["topic_message_id"] != report["target_message_id"]
    # The SDK's own reading of an SNS error: smithy.APIError's code and fault, and the HTTP status.
    assert report["missing_endpoint_error"] == {"code": "NotFound", "fault": "client", "status": 404}
    got = wait_apns(lookalike, before, [token], 2)
    assert [body for _, body in got[token]] == [SEED_APNS.encode()] * 2, "verbatim, once per publish"

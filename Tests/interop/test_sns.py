"""Amazon SNS's API on the gateway's API port, from the outside: boto3 from PyPI, unmodified, against
`pushgate serve` and the independent APNs (and FCM) look-alikes, and the gRPC Registry on the same
store (issue 39's boto3 "Must show"). Signatures and credentials: test_sns_auth.py; other SDKs:
test_sns_sdks.py.

Expectations come from issue 39, botocore's SNS service model (service-2.json: shapes, error codes and
their HTTP statuses, paginators), AWS's SNS API Reference and what AWS was recorded answering
(LocalStack's AWS-validated snapshots, tests/aws/services/sns/test_sns.snapshot.json), never from
the gateway's sources. Where AWS and the issue disagree the issue wins; such places say so."""
import concurrent.futures
import json
import os
import re
import signal
import socket
import subprocess
import time
import uuid

import grpc
import pytest

from conftest import adm_app_config, app_config, fcm_app_config
from mock_process import pushgate_binary
from pushgate.v1 import push_pb2, push_pb2_grpc, registry_pb2, registry_pb2_grpc
from sns_support import (ACCOUNT, GRPC_ADMIN_KEY, Credential, SNSGateway, apns_token, app_arn, arn, client_error,
                         gateway_with_three_credentials,
                         pages, wait_apns)

SEED_APNS = '{"aps": {"alert": "Hooray!", "badge": 0, "sound": "bingbong.aiff"}}'
SEED_DEFAULT = "Hooray! (default)"
SEED_MESSAGE = json.dumps({"default": SEED_DEFAULT, "APNS": SEED_APNS})
ENDPOINTS = 150
SUBSCRIBERS = 100
PROD = app_arn("APNS", "prod")
SANDY = app_arn("APNS_SANDBOX", "sandy")
GRPC_AUTH = [("authorization", "Bearer " + GRPC_ADMIN_KEY)]


def fcm_token(n):
    return "fcm-sns-%06d:APA91b%s" % (n, "y" * 120)


def attrs(**values):
    """MessageAttributes of String values."""
    return {k: {"DataType": "String", "StringValue": v} for k, v in values.items()}


def sized_json_message(size):
    """A MessageStructure=json message of exactly `size` bytes: small platform payloads plus an
    unknown key SNS ignores, so that only the 256 KiB message limit is at stake, not a platform's."""
    message = {"default": "d", "APNS": '{"aps":{"alert":"a"}}', "padding": ""}
    message["padding"] = "x" * (size - len(json.dumps(message)))
    encoded = json.dumps(message)
    assert len(encoded.encode()) == size
    return encoded


def endpoint_id(endpoint_arn):
    return endpoint_arn.rsplit("/", 1)[1]


@pytest.fixture(scope="module")
def gw(tmp_path_factory, lookalike, fcm_lookalike, adm_lookalike):
    directory = str(tmp_path_factory.mktemp("pushgate-sns"))
    vapid = os.path.join(directory, "vapid.pem")
    subprocess.run([pushgate_binary(), "vapid-key", "--out", vapid], check=True, capture_output=True)
    apps = [app_config("prod", "com.example.prod", lookalike),
            app_config("sandy", "com.example.sandy", lookalike, sandbox=True),
            fcm_app_config("droid", fcm_lookalike),
            adm_app_config("kindle", adm_lookalike),
            {"name": "web", "platform": "webpush", "vapid_key_file": vapid, "vapid_subject": "mailto:ops@example.com"}]
    gateway = gateway_with_three_credentials(directory, apps)
    yield gateway
    gateway.stop()


@pytest.fixture(scope="module")
def grpc_channel(gw):
    channel = grpc.insecure_channel(gw.server.address)
    yield channel
    channel.close()


@pytest.fixture(scope="module")
def registry(grpc_channel):
    return registry_pb2_grpc.RegistryStub(grpc_channel)


@pytest.fixture(scope="module")
def fleet(gw):
    """The issue's boto3 flow up to the publish: 150 APNs endpoints, topic "seed", 100 of them
    subscribed (a third without a filter policy, a third for football, a third for rugby), plus one
    APNS_SANDBOX and one GCM endpoint subscribed without a policy."""
    sns = gw.sns
    tokens = [apns_token(0x5E5000 + i) for i in range(ENDPOINTS)]

    def create(i):
        return sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=tokens[i],
                                            CustomUserData="user-%d" % i)["EndpointArn"]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        endpoints = list(pool.map(create, range(ENDPOINTS)))
    topic = sns.create_topic(Name="seed")["TopicArn"]
    policies = [None, {"sport": ["football"]}, {"sport": ["rugby"]}]

    def subscribe(i, endpoint):
        extra = {}
        if policies[i % 3] is not None:
            extra["Attributes"] = {"FilterPolicy": json.dumps(policies[i % 3]),
                                   "FilterPolicyScope": "MessageAttributes"}
        return sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=endpoint, ReturnSubscriptionArn=True,
                             **extra)["SubscriptionArn"]

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        subscriptions = list(pool.map(subscribe, range(SUBSCRIBERS), endpoints[:SUBSCRIBERS]))
    sandbox_token = apns_token(0x5E5FFF)
    sandbox = sns.create_platform_endpoint(PlatformApplicationArn=SANDY, Token=sandbox_token)["EndpointArn"]
    android = sns.create_platform_endpoint(PlatformApplicationArn=app_arn("GCM", "droid"),
                                           Token=fcm_token(1))["EndpointArn"]
    extra = [sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=e, ReturnSubscriptionArn=True)
             ["SubscriptionArn"] for e in (sandbox, android)]
    return {"tokens": tokens, "endpoints": endpoints, "topic": topic, "subscriptions": subscriptions + extra,
            "sandbox_token": sandbox_token, "sandbox": sandbox, "android": android}


# --- platform applications -------------------------------------------------------------------------


def test_the_configured_apps_are_the_platform_applications(gw, lookalike):
    listed = pages(gw.sns, "list_platform_applications")
    found = [a["PlatformApplicationArn"] for page in listed for a in page["PlatformApplications"]]
    assert sorted(found) == sorted([PROD, SANDY, app_arn("GCM", "droid"), app_arn("ADM", "kindle"),
                                    app_arn("WEBPUSH", "web")])
    secrets_on_disk = {open(lookalike.p8).read().strip()}
    for application in found:
        attributes = gw.sns.get_platform_application_attributes(PlatformApplicationArn=application)["Attributes"]
        # SNS never answers an application's credential; neither may the gateway (issue 39, 4).
        assert "PlatformCredential" not in attributes and "PlatformPrincipal" not in attributes, attributes
        assert not any("PRIVATE KEY" in v or v.strip() in secrets_on_disk for v in attributes.values()), attributes
        if application == PROD:  # SNS's names for a token-auth APNs app's identifiers, when answered
            assert attributes.get("ApplePlatformBundleID", "com.example.prod") == "com.example.prod"
            assert attributes.get("ApplePlatformTeamID", "TEAM123456") == "TEAM123456"
    code, status, _ = client_error(gw.sns.get_platform_application_attributes,
                                   PlatformApplicationArn=app_arn("APNS", "no-such-app"))
    assert (code, status) == ("NotFound", 404)


# --- endpoints, topic, subscriptions, publish: the issue's boto3 flow --------------------------------


def test_150_endpoints_have_the_arns_the_issue_gives(gw, fleet):
    pattern = re.compile(r"^arn:aws:sns:us-east-1:123456789012:endpoint/APNS/prod/([^/:]+)$")
    assert all(pattern.match(e) for e in fleet["endpoints"]), fleet["endpoints"][:3]
    assert len(set(fleet["endpoints"])) == ENDPOINTS
    assert re.match(r"^arn:aws:sns:us-east-1:123456789012:endpoint/APNS_SANDBOX/sandy/[^/:]+$", fleet["sandbox"])
    assert re.match(r"^arn:aws:sns:us-east-1:123456789012:endpoint/GCM/droid/[^/:]+$", fleet["android"])
    attributes = gw.sns.get_endpoint_attributes(EndpointArn=fleet["endpoints"][7])["Attributes"]
    assert attributes["Enabled"] == "true"
    assert attributes["Token"] == fleet["tokens"][7]
    assert attributes["CustomUserData"] == "user-7"


def test_create_platform_endpoint_is_idempotent_and_names_the_conflicting_endpoint(gw, fleet):
    same = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=fleet["tokens"][3],
                                           CustomUserData="user-3")
    assert same["EndpointArn"] == fleet["endpoints"][3]
    # SNS: the same token with other attributes is InvalidParameter naming the existing endpoint.
    code, status, message = client_error(gw.sns.create_platform_endpoint, PlatformApplicationArn=PROD,
                                         Token=fleet["tokens"][3], CustomUserData="someone-else")
    assert (code, status) == ("InvalidParameter", 400)
    assert fleet["endpoints"][3] in message, message
    assert gw.sns.get_endpoint_attributes(EndpointArn=fleet["endpoints"][3])["Attributes"]["CustomUserData"] == \
        "user-3", "the refused call changed nothing"
    # Another attribute differing (Enabled) is a conflict too (AWS, recorded).
    code, status, message = client_error(gw.sns.create_platform_endpoint, PlatformApplicationArn=PROD,
                                         Token=fleet["tokens"][3], CustomUserData="user-3",
                                         Attributes={"Enabled": "false"})
    assert (code, status) == ("InvalidParameter", 400) and fleet["endpoints"][3] in message, message


def test_custom_user_data_in_attributes_wins_over_the_parameter(gw):
    """AWS, recorded (LocalStack's test_create_platform_endpoint_double_custom_data): given both, the
    Attributes entry is the one kept."""
    endpoint = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=apns_token(0xC0D001),
                                               CustomUserData="parameter",
                                               Attributes={"CustomUserData": "attribute"})["EndpointArn"]
    assert gw.sns.get_endpoint_attributes(EndpointArn=endpoint)["Attributes"]["CustomUserData"] == "attribute"


def test_apns_tokens_are_answered_lowercase(gw):
    """SNS's GetEndpointAttributes: "iOS tokens are returned in lowercase" (the model's Token text)."""
    token = apns_token(0xCA5E01)
    endpoint = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=token.upper())["EndpointArn"]
    assert gw.sns.get_endpoint_attributes(EndpointArn=endpoint)["Attributes"]["Token"] == token
    assert gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=token)["EndpointArn"] == endpoint


def test_create_topic_is_idempotent_and_the_topic_arn_is_its_name(gw, fleet):
    assert fleet["topic"] == arn("seed")
    assert gw.sns.create_topic(Name="seed")["TopicArn"] == fleet["topic"]
    attributes = gw.sns.get_topic_attributes(TopicArn=fleet["topic"])["Attributes"]
    assert attributes["TopicArn"] == fleet["topic"]
    assert attributes.get("Owner", ACCOUNT) == ACCOUNT
    if "SubscriptionsConfirmed" in attributes:
        assert attributes["SubscriptionsConfirmed"] == str(SUBSCRIBERS + 2)


def test_an_application_subscription_needs_no_confirmation(gw, fleet):
    """SNS: ReturnSubscriptionArn only matters for subscriptions pending confirmation, and an
    `application` endpoint's is confirmed at once: the ARN comes back either way."""
    topic = gw.sns.create_topic(Name="no-confirmation")["TopicArn"]
    answered = gw.sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=fleet["endpoints"][130])
    assert answered["SubscriptionArn"].startswith(topic + ":"), answered
    assert gw.sns.get_subscription_attributes(SubscriptionArn=answered["SubscriptionArn"])["Attributes"].get(
        "PendingConfirmation", "false") == "false"


def test_subscriptions_have_the_arns_the_issue_gives_and_subscribe_is_idempotent(gw, fleet):
    subscriptions = fleet["subscriptions"]
    assert all(s.startswith(fleet["topic"] + ":") and len(s) > len(fleet["topic"]) + 1 for s in subscriptions)
    assert len(set(subscriptions)) == SUBSCRIBERS + 2
    again = gw.sns.subscribe(TopicArn=fleet["topic"], Protocol="application", Endpoint=fleet["endpoints"][0],
                             ReturnSubscriptionArn=True)
    assert again["SubscriptionArn"] == subscriptions[0]
    attributes = gw.sns.get_subscription_attributes(SubscriptionArn=subscriptions[1])["Attributes"]
    assert attributes["SubscriptionArn"] == subscriptions[1]
    assert attributes["TopicArn"] == fleet["topic"]
    assert attributes["Protocol"] == "application"
    assert attributes["Endpoint"] == fleet["endpoints"][1]
    assert json.loads(attributes["FilterPolicy"]) == {"sport": ["football"]}
    assert attributes.get("FilterPolicyScope", "MessageAttributes") == "MessageAttributes"
    assert attributes.get("PendingConfirmation", "false") == "false"


def test_the_seed_message_is_delivered_verbatim_once_per_matching_subscriber(gw, fleet, lookalike, fcm_lookalike):
    tokens = fleet["tokens"]
    matching = [tokens[i] for i in range(SUBSCRIBERS) if i % 3 in (0, 1)]
    before, fcm_before = len(lookalike.requests), len(fcm_lookalike.messages)
    reply = gw.sns.publish(TopicArn=fleet["topic"], Message=SEED_MESSAGE, MessageStructure="json",
                           MessageAttributes=attrs(sport="football"))
    assert reply["MessageId"]
    got = wait_apns(lookalike, before, tokens + [fleet["sandbox_token"]], len(matching) + 1)
    assert sorted(t for t in got if t in matching) == sorted(matching)
    assert all(len(got[t]) == 1 for t in got), "exactly once per subscriber"
    assert not set(got) - set(matching) - {fleet["sandbox_token"]}, "rugby, and the 50 never subscribed, get nothing"
    for token in matching:
        headers, body = got[token][0]
        assert body == SEED_APNS.encode(), body  # verbatim: the APNS string, byte for byte
        assert headers["apns-topic"] == "com.example.prod"
    # No APNS_SANDBOX key: the sandbox endpoint gets `default` as an alert (docs/api.md, SNS's rule).
    (_, sandbox_body), = got[fleet["sandbox_token"]]
    assert json.loads(sandbox_body) == {"aps": {"alert": SEED_DEFAULT}}
    deadline = time.time() + 15
    while len(fcm_lookalike.messages) == fcm_before and time.time() < deadline:
        time.sleep(0.02)
    android = [m for t, m in fcm_lookalike.messages[fcm_before:] if t == fcm_token(1)]
    assert len(android) == 1 and android[0]["data"] == {"default": SEED_DEFAULT}, android


def test_a_message_without_attributes_reaches_only_the_subscribers_without_a_policy(gw, fleet, lookalike):
    tokens = fleet["tokens"]
    unfiltered = [tokens[i] for i in range(SUBSCRIBERS) if i % 3 == 0]
    before = len(lookalike.requests)
    gw.sns.publish(TopicArn=fleet["topic"], Message="plain text")
    got = wait_apns(lookalike, before, tokens + [fleet["sandbox_token"]], len(unfiltered) + 1)
    assert set(got) == set(unfiltered) | {fleet["sandbox_token"]}
    # A Subject is SNS's for email; for mobile it is accepted and not sent. A line break is refused.
    quiet = gw.sns.create_topic(Name="subject")["TopicArn"]
    assert gw.sns.publish(TopicArn=quiet, Message="x", Subject="hello")["MessageId"]
    assert client_error(gw.sns.publish, TopicArn=fleet["topic"], Message="x", Subject="two\nlines")[:2] == \
        ("InvalidParameter", 400)
    assert {json.loads(b)["aps"]["alert"] for v in got.values() for _, b in v} == {"plain text"}


def test_an_sns_publish_is_a_message_of_the_grpc_api(gw, fleet, grpc_channel, lookalike):
    """One store, one Publish: the MessageId SNS answers is the message `Push/GetMessage` reports, with
    the counts of its fan-out (rugby: 67 of the 100 plus the sandbox and GCM endpoints; 33 filtered)."""
    tokens = fleet["tokens"]
    rugby = [tokens[i] for i in range(SUBSCRIBERS) if i % 3 in (0, 2)]
    before = len(lookalike.requests)
    message_id = gw.sns.publish(TopicArn=fleet["topic"], Message="try!",
                                MessageAttributes=attrs(sport="rugby"))["MessageId"]
    wait_apns(lookalike, before, tokens + [fleet["sandbox_token"]], len(rugby) + 1)
    push = push_pb2_grpc.PushStub(grpc_channel)
    deadline = time.time() + 30
    while time.time() < deadline:
        message = push.GetMessage(push_pb2.GetMessageRequest(message_id=message_id), timeout=10, metadata=GRPC_AUTH)
        if message.state == push_pb2.MESSAGE_STATE_COMPLETED:
            break
        time.sleep(0.05)
    assert message.state == push_pb2.MESSAGE_STATE_COMPLETED, message
    assert (message.total, message.delivered, message.skipped, message.rejected, message.failed) == \
        (SUBSCRIBERS + 2, len(rugby) + 2, SUBSCRIBERS - len(rugby), 0, 0), message


def test_every_list_pages_with_next_token(gw, fleet):
    """SNS answers at most 100 per page; boto3's paginators follow NextToken to the end."""
    endpoint_pages = pages(gw.sns, "list_endpoints_by_platform_application", PlatformApplicationArn=PROD)
    listed = [e["EndpointArn"] for p in endpoint_pages for e in p["Endpoints"]]
    assert len(endpoint_pages) >= 2 and all(len(p["Endpoints"]) <= 100 for p in endpoint_pages)
    assert len(listed) == len(set(listed)) and set(fleet["endpoints"]) <= set(listed)
    by_arn = {e["EndpointArn"]: e["Attributes"] for p in endpoint_pages for e in p["Endpoints"]}
    assert by_arn[fleet["endpoints"][9]]["Token"] == fleet["tokens"][9]

    sub_pages = pages(gw.sns, "list_subscriptions_by_topic", TopicArn=fleet["topic"])
    subs = [s for p in sub_pages for s in p["Subscriptions"]]
    assert len(sub_pages) >= 2 and all(len(p["Subscriptions"]) <= 100 for p in sub_pages)
    assert sorted(s["SubscriptionArn"] for s in subs) == sorted(fleet["subscriptions"])
    assert all(s["Protocol"] == "application" and s["TopicArn"] == fleet["topic"] for s in subs)
    assert {s["Endpoint"] for s in subs} == set(fleet["endpoints"][:SUBSCRIBERS]) | {fleet["sandbox"],
                                                                                     fleet["android"]}
    all_pages = pages(gw.sns, "list_subscriptions")
    everything = [s["SubscriptionArn"] for p in all_pages for s in p["Subscriptions"]]
    assert len(all_pages) >= 2 and len(everything) == len(set(everything))
    assert set(fleet["subscriptions"]) <= set(everything)

    names = ["page-%03d" % i for i in range(105)]
    for name in names:
        gw.sns.create_topic(Name=name)
    topic_pages = pages(gw.sns, "list_topics")
    topics = [t["TopicArn"] for p in topic_pages for t in p["Topics"]]
    assert len(topic_pages) >= 2 and all(len(p["Topics"]) <= 100 for p in topic_pages)
    assert len(topics) == len(set(topics)) and {arn(n) for n in names} | {fleet["topic"]} <= set(topics)

    # By hand, as SDKs without paginators do: the first page's NextToken continues it.
    first = gw.sns.list_topics()
    assert first["NextToken"] and len(first["Topics"]) <= 100
    second = gw.sns.list_topics(NextToken=first["NextToken"])
    assert not {t["TopicArn"] for t in first["Topics"]} & {t["TopicArn"] for t in second["Topics"]}
    for call, kwargs in [(gw.sns.list_topics, {}), (gw.sns.list_subscriptions, {}),
                         (gw.sns.list_subscriptions_by_topic, {"TopicArn": fleet["topic"]}),
                         (gw.sns.list_endpoints_by_platform_application, {"PlatformApplicationArn": PROD}),
                         (gw.sns.list_platform_applications, {})]:
        code, status, _ = client_error(call, NextToken="not-a-token", **kwargs)
        assert (code, status) == ("InvalidParameter", 400), call


# --- endpoint state ------------------------------------------------------------------------------------


def test_a_dead_token_disables_its_endpoint_and_a_publish_to_it_is_endpoint_disabled(gw, lookalike):
    dead = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token="dd" * 32)["EndpointArn"]
    gw.sns.publish(TargetArn=dead, Message="are you there?")
    deadline = time.time() + 20
    while time.time() < deadline:
        attributes = gw.sns.get_endpoint_attributes(EndpointArn=dead)["Attributes"]
        if attributes["Enabled"] == "false":
            break
        time.sleep(0.05)
    assert attributes["Enabled"] == "false", "APNs said 410 Unregistered: SNS sets Enabled to false"
    code, status, _ = client_error(gw.sns.publish, TargetArn=dead, Message="again")
    assert (code, status) == ("EndpointDisabled", 400)
    topic = gw.sns.create_topic(Name="hygiene")["TopicArn"]
    alive = apns_token(0xDEAD02)
    alive_endpoint = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=alive)["EndpointArn"]
    for endpoint in (dead, alive_endpoint):
        gw.sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=endpoint)
    before = len(lookalike.requests)
    gw.sns.publish(TopicArn=topic, Message="to the living")
    assert list(wait_apns(lookalike, before, [alive, "dd" * 32], 1)) == [alive], "a disabled endpoint gets nothing"
    # SNS: users set it back to true, typically after updating Token.
    fresh = apns_token(0xDEAD01)
    gw.sns.set_endpoint_attributes(EndpointArn=dead, Attributes={"Token": fresh, "Enabled": "true"})
    assert gw.sns.get_endpoint_attributes(EndpointArn=dead)["Attributes"]["Enabled"] == "true"
    before = len(lookalike.requests)
    gw.sns.publish(TargetArn=dead, Message="back")
    got = wait_apns(lookalike, before, [fresh, "dd" * 32], 1)
    assert list(got) == [fresh]


def test_set_endpoint_attributes_and_delete_endpoint(gw, lookalike):
    first, second = apns_token(0xE5E001), apns_token(0xE5E002)
    endpoint = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=first,
                                               CustomUserData="v1")["EndpointArn"]
    gw.sns.set_endpoint_attributes(EndpointArn=endpoint, Attributes={"CustomUserData": "v2"})
    assert gw.sns.get_endpoint_attributes(EndpointArn=endpoint)["Attributes"] == {
        "Enabled": "true", "Token": first, "CustomUserData": "v2"}
    gw.sns.set_endpoint_attributes(EndpointArn=endpoint, Attributes={"Enabled": "false"})
    assert gw.sns.get_endpoint_attributes(EndpointArn=endpoint)["Attributes"]["Enabled"] == "false"
    assert client_error(gw.sns.publish, TargetArn=endpoint, Message="x")[:2] == ("EndpointDisabled", 400)
    gw.sns.set_endpoint_attributes(EndpointArn=endpoint, Attributes={"Enabled": "true", "Token": second})
    before = len(lookalike.requests)
    gw.sns.publish(TargetArn=endpoint, Message=json.dumps({"default": "d", "APNS": '{"aps":{"alert":"direct"}}'}),
                   MessageStructure="json")
    got = wait_apns(lookalike, before, [first, second], 1)
    assert got[second][0][1] == b'{"aps":{"alert":"direct"}}'
    for bad in ({"Enabled": "maybe"}, {"NoSuchAttribute": "1"}, {"CustomUserData": "x" * 2049}):
        assert client_error(gw.sns.set_endpoint_attributes, EndpointArn=endpoint, Attributes=bad)[:2] == \
            ("InvalidParameter", 400), bad
    gw.sns.delete_endpoint(EndpointArn=endpoint)
    assert client_error(gw.sns.get_endpoint_attributes, EndpointArn=endpoint)[:2] == ("NotFound", 404)
    gw.sns.delete_endpoint(EndpointArn=endpoint)  # SNS: "This action is idempotent."
    assert client_error(gw.sns.set_endpoint_attributes, EndpointArn=endpoint,
                        Attributes={"CustomUserData": "x"})[:2] == ("NotFound", 404)


def test_a_gcm_payload_goes_to_fcm_as_written(gw, fcm_lookalike):
    """The GCM key's FCM v1 message (SNS's fcmV1Message shape) reaches FCM with the endpoint's token."""
    token = fcm_token(2)
    endpoint = gw.sns.create_platform_endpoint(PlatformApplicationArn=app_arn("GCM", "droid"),
                                               Token=token)["EndpointArn"]
    fcm = {"fcmV1Message": {"message": {"notification": {"title": "Goal", "body": "2-1"},
                                        "data": {"match": "42"}, "android": {"priority": "high"}}}}
    before = len(fcm_lookalike.messages)
    gw.sns.publish(TargetArn=endpoint, Message=json.dumps({"default": "d", "GCM": json.dumps(fcm)}),
                   MessageStructure="json")
    deadline = time.time() + 15
    while not [m for t, m in fcm_lookalike.messages[before:] if t == token] and time.time() < deadline:
        time.sleep(0.02)
    (message,) = [m for t, m in fcm_lookalike.messages[before:] if t == token]
    assert message == dict(fcm["fcmV1Message"]["message"], token=token), message


def test_mobile_attributes_set_the_apns_headers(gw, lookalike):
    token = apns_token(0xA77001)
    endpoint = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=token)["EndpointArn"]
    background = json.dumps({"default": "x", "APNS": json.dumps({"aps": {"content-available": 1}, "n": 1})})
    before = len(lookalike.requests)
    gw.sns.publish(TargetArn=endpoint, Message=background, MessageStructure="json")
    (headers, _), = wait_apns(lookalike, before, [token], 1)[token]
    assert (headers["apns-push-type"], headers["apns-priority"]) == ("background", "5"), "SNS's inference"
    before = len(lookalike.requests)
    published = time.time()
    gw.sns.publish(TargetArn=endpoint, Message=json.dumps({"default": "x", "APNS": '{"aps":{"alert":"hi"}}'}),
                   MessageStructure="json",
                   MessageAttributes=attrs(**{"AWS.SNS.MOBILE.APNS.PUSH_TYPE": "alert",
                                              "AWS.SNS.MOBILE.APNS.PRIORITY": "5",
                                              "AWS.SNS.MOBILE.APNS.COLLAPSE_ID": "scores",
                                              "AWS.SNS.MOBILE.APNS.TTL": "3600"}))
    (headers, body), = wait_apns(lookalike, before, [token], 1)[token]
    assert (headers["apns-push-type"], headers["apns-priority"], headers["apns-collapse-id"]) == \
        ("alert", "5", "scores")
    assert abs(int(headers["apns-expiration"]) - (published + 3600)) < 30
    assert body == b'{"aps":{"alert":"hi"}}'


# --- topics and subscriptions ------------------------------------------------------------------------


def test_subscription_attributes_filter_policies_and_unsubscribe(gw, lookalike):
    topic = gw.sns.create_topic(Name="subs")["TopicArn"]
    token = apns_token(0x5B5001)
    endpoint = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=token)["EndpointArn"]
    sub = gw.sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=endpoint, ReturnSubscriptionArn=True,
                           Attributes={"FilterPolicy": '{"sport": ["football"]}'})["SubscriptionArn"]

    def delivered(expected, score=None, **attributes):
        message_attributes = attrs(**attributes)
        if score is not None:
            message_attributes["score"] = {"DataType": "Number", "StringValue": score}
        before = len(lookalike.requests)
        gw.sns.publish(TopicArn=topic, Message="m", MessageAttributes=message_attributes)
        return len(wait_apns(lookalike, before, [token], expected, timeout=10)) == expected

    assert delivered(0, sport="rugby")
    gw.sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy",
                                       AttributeValue=json.dumps({"sport": ["rugby"], "score": [{"numeric": [">", 2]}]}))
    assert json.loads(gw.sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]["FilterPolicy"]) == \
        {"sport": ["rugby"], "score": [{"numeric": [">", 2]}]}
    assert delivered(1, sport="rugby", score="3")
    assert delivered(1, sport="rugby", score="2.5e0")
    assert delivered(0, sport="rugby", score="1")
    # SNS: subscribing again with other attributes is "Subscription already exists with different attributes".
    code, status, message = client_error(gw.sns.subscribe, TopicArn=topic, Protocol="application", Endpoint=endpoint,
                                         Attributes={"FilterPolicy": '{"sport": ["cricket"]}'})
    assert (code, status) == ("InvalidParameter", 400) and "already exists" in message, message
    for name, value in [("FilterPolicy", "{not json"), ("FilterPolicy", '{"a": "b"}'),
                        ("NoSuchAttribute", "1"), ("FilterPolicyScope", "Sideways")]:
        code, status, _ = client_error(gw.sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName=name,
                                       AttributeValue=value)
        assert (code, status) == ("InvalidParameter", 400), (name, value)
    code, status, _ = client_error(gw.sns.subscribe, TopicArn=topic, Protocol="application", Endpoint=endpoint,
                                   Attributes={"FilterPolicy": "[1, 2]"})
    assert (code, status) == ("InvalidParameter", 400)
    gw.sns.unsubscribe(SubscriptionArn=sub)
    assert client_error(gw.sns.get_subscription_attributes, SubscriptionArn=sub)[:2] == ("NotFound", 404)
    gw.sns.unsubscribe(SubscriptionArn=sub)  # AWS answers 200 for an unsubscribed ARN
    assert not gw.sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    assert delivered(0, sport="rugby", score="3")
    code, status, _ = client_error(gw.sns.subscribe, TopicArn=arn("no-such-topic"), Protocol="application",
                                   Endpoint=endpoint)
    assert (code, status) == ("NotFound", 404)


def test_a_message_body_filter_policy_reads_the_body_each_platform_is_sent(gw, lookalike):
    """FilterPolicyScope=MessageBody: the policy's nested keys follow the JSON body; for a json
    message, the APNS endpoint's body is its APNS string (docs/sns.md)."""
    topic = gw.sns.create_topic(Name="orders")["TopicArn"]
    paid_token, any_token = apns_token(0x0DE001), apns_token(0x0DE002)
    paid = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=paid_token)["EndpointArn"]
    anyone = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=any_token)["EndpointArn"]
    policy = json.dumps({"order": {"status": ["paid"], "total": [{"numeric": [">=", 100]}]}})
    sub = gw.sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=paid,
                           Attributes={"FilterPolicy": policy, "FilterPolicyScope": "MessageBody"})["SubscriptionArn"]
    gw.sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=anyone)
    assert gw.sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]["FilterPolicyScope"] == "MessageBody"
    # Nested policies read only under MessageBody; the scope cannot go back while the policy is nested.
    assert client_error(gw.sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName="FilterPolicyScope",
                        AttributeValue="MessageAttributes")[:2] == ("InvalidParameter", 400)

    def delivered_to(expected, message, structure=None):
        before = len(lookalike.requests)
        kwargs = {"MessageStructure": structure} if structure else {}
        gw.sns.publish(TopicArn=topic, Message=message, **kwargs)
        return set(wait_apns(lookalike, before, [paid_token, any_token], len(expected), timeout=10)) == expected

    both = {paid_token, any_token}
    assert delivered_to(both, json.dumps({"order": {"status": "paid", "total": 120}}))
    assert delivered_to({any_token}, json.dumps({"order": {"status": "open", "total": 120}}))
    assert delivered_to({any_token}, json.dumps({"order": {"status": "paid", "total": 99}}))
    assert delivered_to({any_token}, "not json at all")
    apns_body = json.dumps({"aps": {"alert": "paid"}, "order": {"status": "paid", "total": 500}})
    message = json.dumps({"default": json.dumps({"order": {"status": "open"}}), "APNS": apns_body})
    assert delivered_to(both, message, "json")


def test_topic_lifecycle(gw):
    topic = gw.sns.create_topic(Name="short-lived")["TopicArn"]
    assert topic == arn("short-lived")
    assert gw.sns.get_topic_attributes(TopicArn=topic)["Attributes"]["TopicArn"] == topic
    endpoint = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=apns_token(0x70C001))["EndpointArn"]
    sub = gw.sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=endpoint,
                           ReturnSubscriptionArn=True)["SubscriptionArn"]
    gw.sns.delete_topic(TopicArn=topic)
    # SNS's DeleteTopic: "Deletes a topic and all its subscriptions."
    assert sub not in [s["SubscriptionArn"] for p in pages(gw.sns, "list_subscriptions") for s in p["Subscriptions"]]
    assert client_error(gw.sns.get_subscription_attributes, SubscriptionArn=sub)[:2] == ("NotFound", 404)
    assert client_error(gw.sns.get_topic_attributes, TopicArn=topic)[:2] == ("NotFound", 404)
    assert client_error(gw.sns.publish, TopicArn=topic, Message="x")[:2] == ("NotFound", 404)
    assert topic not in [t["TopicArn"] for p in pages(gw.sns, "list_topics") for t in p["Topics"]]
    gw.sns.delete_topic(TopicArn=topic)  # SNS: deleting a topic that does not exist is not an error
    assert gw.sns.create_topic(Name="x" * 256)["TopicArn"] == arn("x" * 256), "SNS: up to 256 characters"
    for name in ("bad name!", "", "x" * 257):
        assert client_error(gw.sns.create_topic, Name=name)[:2] == ("InvalidParameter", 400), name
    assert client_error(gw.sns.create_topic, Name="attrs", Attributes={"NoSuchAttribute": "1"})[:2] == \
        ("InvalidParameter", 400)


# --- PublishBatch --------------------------------------------------------------------------------------


def test_publish_batch_answers_per_entry(gw, lookalike):
    topic = gw.sns.create_topic(Name="batch")["TopicArn"]
    tokens = [apns_token(0xBA7000 + i) for i in range(3)]
    for i, token in enumerate(tokens):
        endpoint = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=token)["EndpointArn"]
        extra = {"Attributes": {"FilterPolicy": '{"kind": ["b"]}'}} if i == 2 else {}
        gw.sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=endpoint, **extra)
    before = len(lookalike.requests)
    reply = gw.sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
        {"Id": "a", "Message": "first"},
        {"Id": "b", "Message": json.dumps({"default": "second", "APNS": '{"aps":{"alert":"second-apns"}}'}),
         "MessageStructure": "json", "MessageAttributes": attrs(kind="b")},
        {"Id": "bad", "Message": '{"APNS": "{}"}', "MessageStructure": "json"},
    ])
    assert sorted(s["Id"] for s in reply["Successful"]) == ["a", "b"]
    assert all(s["MessageId"] for s in reply["Successful"])
    assert len({s["MessageId"] for s in reply["Successful"]}) == 2
    (failed,) = reply["Failed"]
    assert failed["Id"] == "bad" and failed["Code"] == "InvalidParameter" and failed["SenderFault"] is True
    assert failed.get("Message")
    got = wait_apns(lookalike, before, tokens, 5)
    bodies = sorted(b for v in got.values() for _, b in v)
    assert bodies.count(b'{"aps":{"alert":"second-apns"}}') == 3
    assert [json.loads(b) for b in bodies if b"second" not in b] == [{"aps": {"alert": "first"}}] * 2


@pytest.mark.parametrize("entries, code", [
    ([{"Id": "e%d" % i, "Message": "x"} for i in range(11)], "TooManyEntriesInBatchRequest"),
    ([{"Id": "same", "Message": "x"}, {"Id": "same", "Message": "y"}], "BatchEntryIdsNotDistinct"),
    ([], "EmptyBatchRequest"),
    ([{"Id": "not valid!", "Message": "x"}], "InvalidBatchEntryId"),
    ([{"Id": "x" * 81, "Message": "x"}], "InvalidBatchEntryId"),
    # SNS: all the messages together at most 256 KiB (json messages, so no platform limit is involved).
    ([{"Id": "a", "Message": sized_json_message(140000), "MessageStructure": "json"},
      {"Id": "b", "Message": sized_json_message(140000), "MessageStructure": "json"}], "BatchRequestTooLong"),
])
def test_publish_batch_request_errors(gw, entries, code):
    topic = gw.sns.create_topic(Name="batch-errors")["TopicArn"]
    assert client_error(gw.sns.publish_batch, TopicArn=topic, PublishBatchRequestEntries=entries)[:2] == (code, 400)


def test_publish_batch_to_a_missing_topic_is_not_found(gw):
    assert client_error(gw.sns.publish_batch, TopicArn=arn("no-such-batch"),
                        PublishBatchRequestEntries=[{"Id": "a", "Message": "x"}])[:2] == ("NotFound", 404)


# --- errors --------------------------------------------------------------------------------------------


def test_not_found_and_invalid_parameter_as_the_sdk_reads_them(gw, fleet):
    sns = gw.sns
    missing_endpoint = arn("endpoint/APNS/prod/" + str(uuid.uuid4()))
    ids = [endpoint_id(e) for e in fleet["endpoints"]]
    subscription_id = fleet["subscriptions"][0].rsplit(":", 1)[1]
    cases = [
        ((sns.get_endpoint_attributes, {"EndpointArn": missing_endpoint}), ("NotFound", 404)),
        ((sns.get_topic_attributes, {"TopicArn": arn("no-such-topic")}), ("NotFound", 404)),
        ((sns.publish, {"TopicArn": arn("no-such-topic"), "Message": "x"}), ("NotFound", 404)),
        ((sns.create_platform_endpoint, {"PlatformApplicationArn": app_arn("APNS", "nope"),
                                         "Token": apns_token(1)}), ("NotFound", 404)),
        ((sns.list_endpoints_by_platform_application, {"PlatformApplicationArn": app_arn("APNS", "nope")}),
         ("NotFound", 404)),
        ((sns.list_subscriptions_by_topic, {"TopicArn": arn("no-such-topic")}), ("NotFound", 404)),
        ((sns.get_endpoint_attributes, {"EndpointArn": "not-an-arn"}), ("InvalidParameter", 400)),
        # An ARN names one thing: an existing id under another app, platform or topic is not that thing.
        ((sns.get_endpoint_attributes, {"EndpointArn": arn("endpoint/APNS_SANDBOX/sandy/" + ids[0])}),
         {("NotFound", 404), ("InvalidParameter", 400)}),
        ((sns.get_endpoint_attributes, {"EndpointArn": arn("endpoint/GCM/prod/" + ids[0])}),
         {("NotFound", 404), ("InvalidParameter", 400)}),
        ((sns.publish, {"TargetArn": arn("endpoint/APNS/sandy/" + ids[0]), "Message": "x"}),
         {("NotFound", 404), ("InvalidParameter", 400)}),
        ((sns.get_subscription_attributes, {"SubscriptionArn": arn("page-000:" + subscription_id)}),
         {("NotFound", 404), ("InvalidParameter", 400)}),
        ((sns.create_platform_endpoint, {"PlatformApplicationArn": app_arn("GCM", "prod"), "Token": apns_token(3)}),
         {("NotFound", 404), ("InvalidParameter", 400)}),
        ((sns.list_endpoints_by_platform_application, {"PlatformApplicationArn": app_arn("APNS", "sandy")}),
         {("NotFound", 404), ("InvalidParameter", 400)}),
        # Another region's or account's ARN: InvalidParameter (AWS, recorded: "Invalid parameter: TopicArn").
        ((sns.publish, {"TopicArn": "arn:aws:sns:eu-west-1:123456789012:seed", "Message": "x"}),
         ("InvalidParameter", 400)),
        ((sns.get_topic_attributes, {"TopicArn": "arn:aws:sns:us-east-1:999999999999:seed"}),
         ("InvalidParameter", 400)),
        ((sns.create_platform_endpoint, {"PlatformApplicationArn": PROD, "Token": "xyz"}), ("InvalidParameter", 400)),
        ((sns.create_platform_endpoint, {"PlatformApplicationArn": "arn:aws:sns:us-east-1:123456789012:app/APNS",
                                         "Token": apns_token(1)}), ("InvalidParameter", 400)),
        ((sns.create_platform_endpoint, {"PlatformApplicationArn": PROD, "Token": apns_token(2),
                                         "CustomUserData": "x" * 2049}), ("InvalidParameter", 400)),
        ((sns.publish, {"TopicArn": fleet["topic"], "Message": '{"APNS": "{}"}', "MessageStructure": "json"}),
         ("InvalidParameter", 400)),
        ((sns.publish, {"TopicArn": fleet["topic"], "Message": "{not json", "MessageStructure": "json"}),
         ("InvalidParameter", 400)),
        ((sns.publish, {"TopicArn": fleet["topic"], "Message": "x", "MessageStructure": "xml"}),
         ("InvalidParameter", 400)),
        ((sns.publish, {"Message": "x"}), ("InvalidParameter", 400)),
        ((sns.publish, {"TopicArn": fleet["topic"], "TargetArn": fleet["endpoints"][0], "Message": "x"}),
         ("InvalidParameter", 400)),
        ((sns.publish, {"TopicArn": fleet["topic"], "Message": ""}), ("InvalidParameter", 400)),
        # A reserved attribute's bad value: AWS answers attribute problems with ParameterValueInvalid;
        # what it answers for this one is not recorded, so either refusal is SNS's.
        ((sns.publish, {"TopicArn": fleet["topic"], "Message": "x",
                        "MessageAttributes": attrs(**{"AWS.SNS.MOBILE.APNS.PRIORITY": "7"})}),
         {("InvalidParameter", 400), ("ParameterValueInvalid", 400)}),
    ]
    wrong = []
    for (call, kwargs), expected in cases:
        got = client_error(call, **kwargs)
        if got[:2] not in (expected if isinstance(expected, set) else {expected}) or not got[2]:
            wrong.append((call.__name__, kwargs, expected, got))
    assert not wrong, "\n".join(map(repr, wrong))
    # A Publish to an endpoint that does not exist: AWS answers InvalidParameter ("No endpoint found for
    # the target arn specified", recorded against AWS by LocalStack); the model also lists NotFound.
    assert client_error(sns.publish, TargetArn=missing_endpoint, Message="x")[:2] in \
        {("NotFound", 404), ("InvalidParameter", 400)}


def test_message_size_limit_is_sns_s_256_kib(gw):
    """SNS: a message is at most 256 KB (262,144 bytes); more is InvalidParameter "Message too long"."""
    topic = gw.sns.create_topic(Name="big")["TopicArn"]  # no subscribers: nothing goes out
    assert gw.sns.publish(TopicArn=topic, Message=sized_json_message(262144), MessageStructure="json")["MessageId"]
    assert client_error(gw.sns.publish, TopicArn=topic, Message=sized_json_message(262145),
                        MessageStructure="json")[:2] == ("InvalidParameter", 400)


@pytest.mark.parametrize("name, data_type, value", [
    ("a^b", "String", "v"), (".a", "String", "v"), ("a.", "String", "v"), ("a..b", "String", "v"),
    ("x" * 256, "String", "v"), ("k", "String", ""), ("n", "Number", "abc"), ("c", "Colour", "red"),
])
def test_message_attributes_are_checked_as_sns_checks_them(gw, name, data_type, value):
    """AWS answers each of these ParameterValueInvalid (400), as recorded by LocalStack's AWS-validated
    snapshots (names: alphanumerics, '-', '_', '.', no leading, trailing or doubled '.', < 256 bytes;
    a non-empty value; a Number that is a number; a type that starts String, Number or Binary)."""
    topic = gw.sns.create_topic(Name="attribute-rules")["TopicArn"]
    attributes = {name: {"DataType": data_type, "StringValue": value}}
    assert client_error(gw.sns.publish, TopicArn=topic, Message="x", MessageAttributes=attributes)[:2] == \
        ("ParameterValueInvalid", 400)


def test_custom_attribute_types_and_subjects(gw):
    topic = gw.sns.create_topic(Name="attribute-types")["TopicArn"]
    # SNS takes a custom label after a type ("the set of supported type prefixes is Binary, Number, and String").
    assert gw.sns.publish(TopicArn=topic, Message="x", MessageAttributes={
        "n": {"DataType": "Number.int", "StringValue": "5"}})["MessageId"]
    # More than 10 attributes: SNS's 10 is only for raw delivery to SQS ("To send more than 10 message
    # attributes, Raw Message Delivery must be disabled", SNS Developer Guide, message attributes).
    eleven = {"a%d" % i: {"DataType": "String", "StringValue": "v"} for i in range(11)}
    assert gw.sns.publish(TopicArn=topic, Message="x", MessageAttributes=eleven)["MessageId"]
    # Subject: SNS's model says under 100 characters, and AWS refuses an empty one (recorded).
    assert gw.sns.publish(TopicArn=topic, Message="x", Subject="s" * 99)["MessageId"]
    for subject in ("", "s" * 100):
        assert client_error(gw.sns.publish, TopicArn=topic, Message="x", Subject=subject)[:2] == \
            ("InvalidParameter", 400), len(subject)


def test_message_group_id_on_a_standard_topic_is_validated_and_accepted(gw):
    """SNS's model (Publish, MessageGroupId): "For standard topics: The MessageGroupId is optional and
    is forwarded only to Amazon SQS standard subscriptions ... When provided, the same validation rules
    apply as for FIFO topics" (up to 128 alphanumeric characters and ASCII punctuation)."""
    topic = gw.sns.create_topic(Name="groups")["TopicArn"]
    assert gw.sns.publish(TopicArn=topic, Message="x", MessageGroupId="group-1.a_b")["MessageId"]
    assert gw.sns.publish(TopicArn=topic, Message="x", MessageGroupId="g" * 128)["MessageId"]
    for bad in ("g" * 129, "caf\u00e9", "two words"):
        assert client_error(gw.sns.publish, TopicArn=topic, Message="x", MessageGroupId=bad)[:2] == \
            ("InvalidParameter", 400), bad


def test_what_pushgate_does_not_offer_is_a_clear_error_never_a_silent_accept(gw, fleet):
    sns = gw.sns
    endpoint = fleet["endpoints"][140]
    calls = [(sns.subscribe, {"TopicArn": fleet["topic"], "Protocol": p, "Endpoint": e}) for p, e in [
        ("sms", "+15555550100"), ("email", "ops@example.com"), ("email-json", "ops@example.com"),
        ("sqs", "arn:aws:sqs:us-east-1:123456789012:queue"), ("http", "http://example.com/"),
        ("https", "https://example.com/"), ("lambda", "arn:aws:lambda:us-east-1:123456789012:function:f"),
        ("firehose", "arn:aws:firehose:us-east-1:123456789012:deliverystream/s")]]
    calls += [
        (sns.subscribe, {"TopicArn": fleet["topic"], "Protocol": "application", "Endpoint": endpoint,
                         "Attributes": {"RawMessageDelivery": "true"}}),
        (sns.create_topic, {"Name": "orders.fifo", "Attributes": {"FifoTopic": "true"}}),
        (sns.create_topic, {"Name": "tagged", "Tags": [{"Key": "team", "Value": "push"}]}),
        (sns.create_topic, {"Name": "encrypted", "Attributes": {"KmsMasterKeyId": "alias/aws/sns"}}),
        (sns.create_topic, {"Name": "protected", "DataProtectionPolicy": "{}"}),
        (sns.publish, {"PhoneNumber": "+15555550100", "Message": "x"}),
        (sns.publish, {"TopicArn": fleet["topic"], "Message": "x", "MessageDeduplicationId": "d"}),
        (sns.create_platform_application, {"Name": "new", "Platform": "APNS", "Attributes": {}}),
        (sns.delete_platform_application, {"PlatformApplicationArn": PROD}),
        (sns.set_platform_application_attributes, {"PlatformApplicationArn": PROD, "Attributes": {"Enabled": "false"}}),
        (sns.tag_resource, {"ResourceArn": fleet["topic"], "Tags": [{"Key": "a", "Value": "b"}]}),
        (sns.list_tags_for_resource, {"ResourceArn": fleet["topic"]}),
        (sns.set_sms_attributes, {"attributes": {"DefaultSMSType": "Promotional"}}),
        (sns.check_if_phone_number_is_opted_out, {"phoneNumber": "+15555550100"}),
        (sns.put_data_protection_policy, {"ResourceArn": fleet["topic"], "DataProtectionPolicy": "{}"}),
        (sns.add_permission, {"TopicArn": fleet["topic"], "Label": "l", "AWSAccountId": ["111122223333"],
                              "ActionName": ["Publish"]}),
        (sns.confirm_subscription, {"TopicArn": fleet["topic"], "Token": "t"}),
    ]
    silent, unclear = [], []
    for call, kwargs in calls:
        try:
            call(**kwargs)
            silent.append((call.__name__, kwargs))
            continue
        except Exception as e:  # noqa: BLE001 - a ClientError is expected; anything else is reported below
            error = e
        response = getattr(error, "response", None)
        if response is None or not (400 <= response["ResponseMetadata"]["HTTPStatusCode"] < 500) or \
                not response["Error"].get("Code") or not response["Error"].get("Message"):
            unclear.append((call.__name__, kwargs, repr(error)))
    assert not silent, "accepted silently: %r" % silent
    assert not unclear, "not a clear SNS error: %r" % unclear
    assert "orders.fifo" not in str(pages(sns, "list_topics")), "a refused CreateTopic made nothing"


# --- one registry: gRPC and SNS -----------------------------------------------------------------------


def test_grpc_and_sns_share_one_registry(gw, registry):
    token = apns_token(0x6E9C01)
    made = gw.sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=token,
                                           CustomUserData="from-sns")["EndpointArn"]
    seen = registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint_id(made)), timeout=10, metadata=GRPC_AUTH)
    assert (seen.app, seen.token, seen.custom_user_data, seen.enabled) == ("prod", token, "from-sns", True)
    gw.sns.set_endpoint_attributes(EndpointArn=made, Attributes={"CustomUserData": "changed"})
    seen = registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint_id(made)), timeout=10, metadata=GRPC_AUTH)
    assert seen.custom_user_data == "changed"

    other = apns_token(0x6E9C02)
    created = registry.CreateEndpoint(registry_pb2.CreateEndpointRequest(app="sandy", token=other,
                                                                         custom_user_data="from-grpc"),
                                      timeout=10, metadata=GRPC_AUTH)
    endpoint_arn = arn("endpoint/APNS_SANDBOX/sandy/" + created.id)
    assert gw.sns.get_endpoint_attributes(EndpointArn=endpoint_arn)["Attributes"] == {
        "Enabled": "true", "Token": other, "CustomUserData": "from-grpc"}
    listed = [e["EndpointArn"] for p in pages(gw.sns, "list_endpoints_by_platform_application",
                                              PlatformApplicationArn=SANDY) for e in p["Endpoints"]]
    assert endpoint_arn in listed
    # The same endpoint through SNS's idempotent create: the gRPC-made one.
    assert gw.sns.create_platform_endpoint(PlatformApplicationArn=SANDY, Token=other,
                                           CustomUserData="from-grpc")["EndpointArn"] == endpoint_arn
    registry.UpdateEndpoint(registry_pb2.UpdateEndpointRequest(id=created.id, enabled=False), timeout=10,
                            metadata=GRPC_AUTH)
    assert gw.sns.get_endpoint_attributes(EndpointArn=endpoint_arn)["Attributes"]["Enabled"] == "false"

    registry.CreateTopic(registry_pb2.CreateTopicRequest(name="from-grpc"), timeout=10, metadata=GRPC_AUTH)
    assert gw.sns.get_topic_attributes(TopicArn=arn("from-grpc"))["Attributes"]["TopicArn"] == arn("from-grpc")
    sub = registry.Subscribe(registry_pb2.SubscribeRequest(topic="from-grpc", endpoint_id=endpoint_id(made)),
                             timeout=10, metadata=GRPC_AUTH)
    (listed_sub,) = gw.sns.list_subscriptions_by_topic(TopicArn=arn("from-grpc"))["Subscriptions"]
    assert listed_sub["SubscriptionArn"] == arn("from-grpc") + ":" + sub.id
    assert listed_sub["Endpoint"] == made

    gw.sns.delete_endpoint(EndpointArn=made)
    with pytest.raises(grpc.RpcError) as info:
        registry.GetEndpoint(registry_pb2.GetEndpointRequest(id=endpoint_id(made)), timeout=10, metadata=GRPC_AUTH)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_publish_is_durable_before_its_message_id_is_answered(tmp_path, lookalike):
    """Issue 39, 5: kill -9 right after the MessageId, while the provider cannot be reached (a listener
    that never answers the TLS handshake, so nothing can have gone out), start again on the same store
    with the provider back: the message is delivered."""
    black_hole = socket.socket()
    black_hole.bind(("127.0.0.1", 0))
    black_hole.listen(64)
    directory = str(tmp_path)
    admin = Credential(directory, "admin", ["*"], True)
    apps = [app_config("prod", "com.example.prod", lookalike, url="https://127.0.0.1:%d" % black_hole.getsockname()[1])]
    fanout = {"fanout": {"lease_seconds": 3, "poll_ms": 100}}
    first = SNSGateway(directory, apps, [admin], extra=fanout)
    token = apns_token(0xD0AB1E)
    try:
        sns = first.client(admin)
        topic = sns.create_topic(Name="durable")["TopicArn"]
        endpoint = sns.create_platform_endpoint(PlatformApplicationArn=PROD, Token=token)["EndpointArn"]
        sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=endpoint)
        before = len(lookalike.requests)
        assert sns.publish(TopicArn=topic, Message="survive")["MessageId"]
        assert sns.publish(TargetArn=endpoint, Message="survive too")["MessageId"]
        os.kill(first.server.proc.pid, signal.SIGKILL)
        first.server.proc.wait(timeout=10)
    finally:
        if first.server.alive():
            first.server.proc.kill()
        black_hole.close()
    apps[0]["url"] = "https://127.0.0.1:%d" % lookalike.port
    second = SNSGateway(directory, apps, [admin], extra=fanout)
    try:
        got = wait_apns(lookalike, before, [token], 2, timeout=30)
        assert sorted(json.loads(b)["aps"]["alert"] for _, b in got[token]) == ["survive", "survive too"]
    finally:
        second.stop()


def test_the_gateway_is_still_healthy(gw, fleet):
    assert gw.server.alive()
    assert gw.sns.get_topic_attributes(TopicArn=fleet["topic"])["Attributes"]["TopicArn"] == fleet["topic"]

#!/usr/bin/env python3
"""Lists one Amazon SNS platform application's endpoints with the AWS CLI and writes them as JSON Lines
for `pushgate import` (docs/migration.md): one line per endpoint, with its token, enabled state,
CustomUserData and the names of the topics it is subscribed to.

    scripts/sns-to-pushgate.py --application-arn arn:aws:sns:eu-west-1:123456789012:app/APNS/MyApp \\
        --app ios > ios.jsonl
    pushgate import --config pushgate.json ios.jsonl

Needs only Python 3's standard library and `aws` (the AWS CLI, v1 or v2) on PATH, with credentials
that may call sns:ListEndpointsByPlatformApplication and sns:ListSubscriptions. Reads SNS only; writes
nothing there. A summary goes to stderr. Exit status: 0 done, 1 the AWS CLI failed, 2 usage errors."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

# arn:PARTITION:sns:REGION:ACCOUNT:app/PLATFORM/NAME (the partition: aws, aws-cn, aws-us-gov).
APP_ARN = re.compile(r"^arn:(aws[a-z-]*):sns:([a-z0-9-]+):(\d{12}):app/([A-Z_]+)/([A-Za-z0-9_.-]{1,256})$")

# SNS platforms whose tokens a Pushgate app can take, and the kind of app they belong in.
PLATFORMS = {
    "APNS": "an apns app",
    "APNS_SANDBOX": 'an apns app with "sandbox": true',
    "APNS_VOIP": "an apns app (VoIP)",
    "APNS_VOIP_SANDBOX": 'an apns app (VoIP) with "sandbox": true',
    "MACOS": "an apns app",
    "MACOS_SANDBOX": 'an apns app with "sandbox": true',
    "GCM": "an fcm app",
    "ADM": "an adm app",
}

# Pushgate's user_id: 1-256 bytes of UTF-8 without control characters (docs/api.md).
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class CliError(Exception):
    pass


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="sns-to-pushgate.py",
        description="Write one SNS platform application's endpoints (token, enabled, CustomUserData, topics) "
                    "as JSON Lines for `pushgate import`.")
    parser.add_argument("--application-arn", required=True, metavar="ARN",
                        help="the SNS platform application, arn:aws:sns:REGION:ACCOUNT:app/PLATFORM/NAME")
    parser.add_argument("--app", required=True, metavar="NAME",
                        help="the Pushgate app (a name in the config's apps) these endpoints go to")
    parser.add_argument("--no-topics", action="store_true",
                        help="do not list subscriptions (every line without topics; one call fewer per page)")
    parser.add_argument("--user-id-from-custom-user-data", action="store_true",
                        help="also copy CustomUserData into user_id, when it is a valid user_id (1-256 bytes, "
                             "no control characters); for apps that kept their user id there")
    parser.add_argument("--endpoint-url", metavar="URL", help="passed to the AWS CLI")
    parser.add_argument("--region", metavar="REGION", help="passed to the AWS CLI (default: the ARN's region)")
    parser.add_argument("--profile", metavar="PROFILE", help="passed to the AWS CLI")
    parser.add_argument("--items-per-call", type=int, default=1000, metavar="N",
                        help="items per AWS CLI run (its --max-items; SNS itself answers 100 a page). Each run's "
                             "output is held in memory, so this bounds the memory used (default 1000)")
    args = parser.parse_args(argv)
    if args.items_per_call < 1:
        parser.error("--items-per-call must be at least 1")
    match = APP_ARN.match(args.application_arn)
    if not match:
        parser.error("--application-arn %r is not a platform application ARN "
                     "(arn:aws:sns:REGION:ACCOUNT:app/PLATFORM/NAME)" % args.application_arn)
    args.platform = match.group(4)
    if args.platform not in PLATFORMS:
        parser.error("platform %s has no Pushgate equivalent (Pushgate takes %s)"
                     % (args.platform, ", ".join(sorted(PLATFORMS))))
    if args.region is None:
        args.region = match.group(2)  # the application lives in its ARN's region; query that one
    if not args.app.strip():
        parser.error("--app must name a Pushgate app")
    return args


def aws_items(args, operation, key, *params):
    """Yields every item of `key` from `aws sns OPERATION`, running the CLI once per --items-per-call
    items (--max-items / --starting-token) rather than once for everything: the CLI holds a run's
    whole answer in memory before printing it."""
    base = [args.aws, "sns", operation] + list(params) + [
        "--output", "json", "--max-items", str(args.items_per_call)]
    for flag in ("endpoint_url", "region", "profile"):
        value = getattr(args, flag)
        if value:
            base += ["--" + flag.replace("_", "-"), value]
    env = dict(os.environ, AWS_PAGER="")  # v2 would page a terminal's output through `less`
    starting = None
    while True:
        command = base + (["--starting-token", starting] if starting else [])
        try:
            run = subprocess.run(command, capture_output=True, text=True, env=env)
        except OSError as error:
            raise CliError("could not run %s: %s" % (args.aws, error))
        if run.returncode != 0:
            raise CliError("aws sns %s failed (exit %d):\n%s" % (operation, run.returncode, run.stderr.strip()))
        try:
            page = json.loads(run.stdout) if run.stdout.strip() else {}
        except ValueError as error:
            raise CliError("aws sns %s printed something that is not JSON (%s):\n%s"
                           % (operation, error, run.stdout[:500]))
        yield from page.get(key, [])
        starting = page.get("NextToken")  # present while the CLI stopped at --max-items
        if not starting:
            return


def topics_by_endpoint(args):
    """{endpoint ARN: [topic name, ...]} for the application's endpoints, from every subscription of the
    account and region (ListSubscriptions: one listing instead of one per topic)."""
    # The application's endpoints are arn:…:endpoint/PLATFORM/NAME/ID beside its arn:…:app/PLATFORM/NAME.
    prefix = args.application_arn.replace(":app/", ":endpoint/", 1) + "/"
    topics = {}
    for subscription in aws_items(args, "list-subscriptions", "Subscriptions"):
        endpoint = subscription.get("Endpoint") or ""
        if subscription.get("Protocol") != "application" or not endpoint.startswith(prefix):
            continue
        # A topic ARN is arn:…:ACCOUNT:NAME; Pushgate's topic is NAME.
        name = subscription["TopicArn"].rsplit(":", 1)[1]
        names = topics.setdefault(endpoint, [])
        if name not in names:
            names.append(name)
    return topics


def row(args, endpoint, topics, warn):
    attributes = endpoint.get("Attributes") or {}
    token = attributes.get("Token")
    if not token:
        warn("%s has no Token; skipped" % endpoint.get("EndpointArn"))
        return None
    line = {"app": args.app, "token": token}
    enabled = attributes.get("Enabled")
    if enabled is not None:  # SNS answers the strings "true" / "false"
        line["enabled"] = enabled.lower() == "true"
    data = attributes.get("CustomUserData")
    if data:
        line["custom_user_data"] = data
        if args.user_id_from_custom_user_data:
            if len(data.encode()) <= 256 and not CONTROL.search(data):
                line["user_id"] = data
            else:
                warn("%s: CustomUserData is not a valid user_id (1-256 bytes, no control characters); "
                     "kept as custom_user_data only" % endpoint.get("EndpointArn"))
    if topics is not None:
        line["topics"] = topics.get(endpoint.get("EndpointArn"), [])
    return line


def main(argv):
    args = parse_args(argv)
    args.aws = shutil.which("aws")
    if args.aws is None:
        print("sns-to-pushgate: the AWS CLI (`aws`) is not on PATH; install it "
              "(https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html)", file=sys.stderr)
        return 2

    def warn(text):
        print("sns-to-pushgate: " + text, file=sys.stderr)

    # UTF-8 whatever the locale: CustomUserData may hold any Unicode text, and JSON Lines is UTF-8.
    out = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="\n", closefd=False)
    written = disabled = subscriptions = 0
    try:
        topics = None if args.no_topics else topics_by_endpoint(args)
        for endpoint in aws_items(args, "list-endpoints-by-platform-application", "Endpoints",
                                  "--platform-application-arn", args.application_arn):
            line = row(args, endpoint, topics, warn)
            if line is None:
                continue
            out.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
            written += 1
            disabled += line.get("enabled") is False
            subscriptions += len(line.get("topics", []))
        out.flush()
    except CliError as error:
        warn(str(error))
        return 1
    except BrokenPipeError:
        return 1
    warn("%d endpoints of %s written for app %r (%d disabled, %d subscriptions%s); "
         "the Pushgate app must be %s" % (written, args.application_arn, args.app, disabled, subscriptions,
                                          ", topics not listed" if args.no_topics else "",
                                          PLATFORMS[args.platform]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

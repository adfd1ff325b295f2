"""The signature checks docs/webhooks.md gives receivers (Python, Go, Node), run as written against a
batch the gateway really signed: each accepts it with the right secret and refuses it with a wrong
secret or a changed body. The snippets are read from the doc itself, so the doc cannot drift from
what the gateway sends (README.md's copies are checked too)."""
import os
import re
import shutil
import subprocess
import textwrap

import grpc
import pytest

from conftest import Server
from test_webhook_delivery import ScriptedReceiver, config_with, dead_token, send, secrets_hex
from test_webhooks import APP, apns, hook, log_tail, wait_for, write_secret  # noqa: F401

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def snippet(path, language, after):
    """The first ```language block after the line `after` in the file at `path`."""
    text = open(os.path.join(ROOT, path)).read()
    start = text.index(after)
    match = re.compile(r"```%s\n(.*?)```" % re.escape(language), re.S).search(text, start)
    assert match, "no %s block after %r in %s" % (language, after, path)
    return match.group(1)


@pytest.fixture(scope="module")
def signed(tmp_path_factory, apns):  # noqa: F811
    """One batch as the gateway signed it: (secret, Pushgate-Signature header, raw body)."""
    directory = tmp_path_factory.mktemp("signatures")
    secret = secrets_hex()
    receiver = ScriptedReceiver(str(directory / "receiver"), secret.encode()).start()
    config = config_with(apns, [hook("sig", receiver, write_secret(directory / "sig.secret", secret + "\n"),
                                     events=("rejected",))])
    server = Server(config, str(directory))
    try:
        with grpc.insecure_channel(server.address) as channel:
            send(channel, APP, [dead_token(apns, 0x5161, 0)])
        wait_for(lambda: receiver.accepted_events(), 10, "a signed batch", lambda: log_tail(server))
    finally:
        server.stop()
        receiver.stop()
    request = receiver.snapshot()[0]
    return secret.encode(), request.signature, request.body


def cases(signed):
    secret, header, body = signed
    return [(secret, header, body, True), (b"not-the-secret-at-all", header, body, False),
            (secret, header, body + b" ", False)]


@pytest.mark.parametrize("where", ["docs/webhooks.md", "README.md"])
def test_the_python_check_accepts_the_gateways_signature_and_nothing_else(signed, where):
    code = snippet(where, "python", "Python" if where == "docs/webhooks.md" else "Checking it in")
    namespace = {}
    exec(code, namespace)
    for secret, header, body, expected in cases(signed):
        assert namespace["verify"](secret, header, body) is expected, (where, secret, header)


@pytest.mark.skipif(shutil.which("go") is None, reason="no Go toolchain (scripts/install-deps.sh installs golang-go)")
@pytest.mark.parametrize("where", ["docs/webhooks.md", "README.md"])
def test_the_go_check_accepts_the_gateways_signature_and_nothing_else(signed, tmp_path, where):
    function = snippet(where, "go", "Go:")
    program = textwrap.dedent("""\
        package main

        import (
        \t"crypto/hmac"
        \t"crypto/sha256"
        \t"encoding/hex"
        \t"fmt"
        \t"math"
        \t"os"
        \t"strconv"
        \t"strings"
        \t"time"
        )

        %s
        func main() {
        \tsecret, _ := os.ReadFile(os.Args[1])
        \tbody, _ := os.ReadFile(os.Args[3])
        \tfmt.Println(verify(secret, os.Args[2], body))
        }
        """) % function
    (tmp_path / "main.go").write_text(program)
    # GOPATH mode, offline, the standard library only; the build cache is the user's (warm after
    # test_sns_sdks builds its client).
    env = dict(os.environ, GO111MODULE="off", GOPATH=str(tmp_path / "gopath"))
    built = subprocess.run(["go", "build", "-o", str(tmp_path / "verify"), str(tmp_path / "main.go")],
                           capture_output=True, text=True, env=env, timeout=300)
    assert built.returncode == 0, built.stderr
    for n, (secret, header, body, expected) in enumerate(cases(signed)):
        (tmp_path / ("secret%d" % n)).write_bytes(secret)
        (tmp_path / ("body%d" % n)).write_bytes(body)
        out = subprocess.run([str(tmp_path / "verify"), str(tmp_path / ("secret%d" % n)), header,
                              str(tmp_path / ("body%d" % n))], capture_output=True, text=True, timeout=30)
        assert out.stdout.strip() == ("true" if expected else "false"), (n, out.stdout, out.stderr)


@pytest.mark.skipif(shutil.which("node") is None, reason="no Node.js (scripts/install-deps.sh installs nodejs)")
@pytest.mark.parametrize("where", ["docs/webhooks.md", "README.md"])
def test_the_node_check_accepts_the_gateways_signature_and_nothing_else(signed, tmp_path, where):
    function = snippet(where, "js", "Node:")
    program = function + textwrap.dedent("""
        const fs = require("fs");
        const [secretFile, header, bodyFile] = process.argv.slice(2);
        console.log(String(verify(fs.readFileSync(secretFile), header, fs.readFileSync(bodyFile))));
        """)
    (tmp_path / "verify.js").write_text(program)
    for n, (secret, header, body, expected) in enumerate(cases(signed)):
        (tmp_path / ("secret%d" % n)).write_bytes(secret)
        (tmp_path / ("body%d" % n)).write_bytes(body)
        out = subprocess.run(["node", str(tmp_path / "verify.js"), str(tmp_path / ("secret%d" % n)), header,
                              str(tmp_path / ("body%d" % n))], capture_output=True, text=True, timeout=30)
        assert out.stdout.strip() == ("true" if expected else "false"), (n, out.stdout, out.stderr)

"""`pushgate mock-webpush` against an independent sender: pywebpush (with py-vapid and http_ece)
encrypts and signs, the mock checks and decrypts; the message is then decrypted once more with
http_ece from the stats file's raw body and the subscription's private key."""
import base64

import http_ece
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid
from pywebpush import WebPushException, webpush

from mock_process import MockProcess


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.fixture
def mock(tmp_path):
    process = MockProcess("mock-webpush", str(tmp_path), flags=["--gone-prefix", "gone-"])
    yield process
    process.stop()


def send(mock, subscription, data, vapid, **extra):
    session = requests.Session()
    session.verify = mock.ca_file
    session.trust_env = False  # else REQUESTS_CA_BUNDLE (if set) overrides verify
    browser = {"endpoint": subscription["endpoint"], "keys": subscription["keys"]}
    return webpush(browser, data=data, vapid_private_key=vapid, vapid_claims={"sub": "mailto:ops@example.com"},
                   ttl=120, requests_session=session, **extra)


def test_pywebpush_message_is_decrypted_by_the_mock_and_by_http_ece(mock):
    vapid = Vapid()
    vapid.generate_keys()
    [alice] = mock.subscriptions(count=1, prefix="alice-")
    assert alice["expirationTime"] is None and set(alice["keys"]) == {"p256dh", "auth"}

    response = send(mock, alice, "Bonjour from pywebpush", vapid, headers={"Urgency": "low", "Topic": "greeting"})
    assert response.status_code == 201
    assert response.headers["Location"].startswith("https://localhost:%d/m/" % mock.port)
    assert response.headers["TTL"] == "120"

    [gone] = mock.subscriptions(count=1, prefix="gone-")
    with pytest.raises(WebPushException) as refused:
        send(mock, gone, "never", vapid)
    assert refused.value.response.status_code == 410
    assert refused.value.response.json()["errno"] == 106

    stats = mock.stop()
    assert stats["delivered"] == 1 and stats["decrypted"] == 1
    assert stats["by_status"] == {"200": 2, "201": 1, "410": 1}
    assert stats["vapid_tokens_by_audience"] == {"https://localhost:%d" % mock.port: 2}
    [message] = stats["messages"]
    assert message["plaintext"] == "Bonjour from pywebpush"
    assert message["subscription"] == alice["endpoint"].rsplit("/", 1)[1]
    assert (message["ttl"], message["urgency"], message["topic"]) == (120, "low", "greeting")
    assert message["vapid"]["aud"] == "https://localhost:%d" % mock.port
    assert message["vapid"]["sub"] == "mailto:ops@example.com"

    # Independently: the raw body, the subscription's private key and auth secret, http_ece.
    private_key = ec.derive_private_key(int.from_bytes(b64url(alice["private_key"]), "big"), ec.SECP256R1())
    plaintext = http_ece.decrypt(base64.b64decode(message["body_base64"]), private_key=private_key,
                                 auth_secret=b64url(alice["keys"]["auth"]), version="aes128gcm")
    assert plaintext == b"Bonjour from pywebpush"

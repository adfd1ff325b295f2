"""A provider that requires a client certificate, the way Apple's certificate-auth hosts do, written
independently of Pushgate: Python's `ssl` (CERT_REQUIRED, its own OpenSSL build and code path) judges
the certificate, and the APNs look-alike (hyper-h2) serves a certificate it accepts. Every TCP
connection and every refused handshake is counted, so tests can show the gateway does not redial
in a storm. Also the PKI for it, made with `cryptography`: the accepted CA, a client certificate
it issued, one it issued that has expired, and one from another CA."""
import datetime
import os
import socket
import ssl
import threading

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

from apns_lookalike import LookalikeAPNs


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Pushgate interop"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write(directory, stem, certificate, key):
    cert_path, key_path = os.path.join(directory, stem + ".pem"), os.path.join(directory, stem + ".key")
    with open(cert_path, "wb") as fh:
        fh.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as fh:
        fh.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()))
    return cert_path, key_path


def _certificate(subject, issuer, public_key, signing_key, not_before, not_after, ca):
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
               .serial_number(x509.random_serial_number()).not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    return builder.sign(signing_key, hashes.SHA256())


def make_client_pki(directory):
    """Paths: `ca` (the CA the provider accepts), and (cert, key) pairs `good` (issued by it, valid),
    `expired` (issued by it, expired yesterday), `soon` (issued by it, expiring in 10 days) and
    `other` (issued by another CA)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    paths = {}
    cas = {}
    for stem, common_name in (("ca", "Look-alike Apple Worldwide CA"), ("other-ca", "Some Other CA")):
        key = ec.generate_private_key(ec.SECP256R1())
        certificate = _certificate(_name(common_name), _name(common_name), key.public_key(), key,
                                   now - datetime.timedelta(days=30), now + datetime.timedelta(days=365), True)
        cas[stem] = (certificate, key)
        paths[stem] = _write(directory, stem, certificate, key)[0]
    for stem, issuer, not_before, not_after in (
            ("good", "ca", now - datetime.timedelta(days=1), now + datetime.timedelta(days=300)),
            ("expired", "ca", now - datetime.timedelta(days=400), now - datetime.timedelta(days=1)),
            ("soon", "ca", now - datetime.timedelta(days=300), now + datetime.timedelta(days=10)),
            ("other", "other-ca", now - datetime.timedelta(days=1), now + datetime.timedelta(days=300))):
        key = ec.generate_private_key(ec.SECP256R1())
        ca_certificate, ca_key = cas[issuer]
        certificate = _certificate(_name("Apple Push Services: com.example.%s" % stem), ca_certificate.subject,
                                   key.public_key(), ca_key, not_before, not_after, False)
        paths[stem] = _write(directory, "client-" + stem, certificate, key)
    return paths


class ClientCertLookalikeAPNs(LookalikeAPNs):
    """The APNs look-alike behind certificate auth: the TLS handshake requires a client certificate
    issued by `client_ca`; requests need no provider token (the certificate is the credential).
    `tcp_connections` counts every accepted socket, `refused` lists every handshake it refused."""

    name = "look-alike APNs (certificate auth)"

    def __init__(self, cert, key, client_ca, tls12_only=False, **kwargs):
        super().__init__(cert, key, **kwargs)
        self.client_ca = client_ca
        # TLS 1.2: the refusal comes inside the client's handshake, not after it.
        self.tls12_only = tls12_only
        self.tcp_connections = 0
        self.refused = []
        self._lock = threading.Lock()

    def _check(self, headers, body):
        headers = dict(headers)
        if "authorization" in headers:
            return 400, "BadCertificateAuthRequest"  # not APNs wording: the gateway must send none
        headers["authorization"] = "bearer (certificate auth)"
        return super()._check(headers, body)

    # Blocking sockets on threads rather than the base class's asyncio: asyncio's TLS drops the
    # alert of a failed handshake (it aborts the transport), while a blocking SSLSocket sends it, as
    # a real server does.
    def start(self):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        # http/1.1 too: an HTTP/1.1 client is refused for its certificate, not for its protocol.
        context.set_alpn_protocols(["h2", "http/1.1"])
        if self.tls12_only:
            context.maximum_version = ssl.TLSVersion.TLSv1_2
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(self.client_ca)
        self._context = context
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept_loop, daemon=True).start()
        return self

    def stop(self):
        self._listener.close()

    def _accept_loop(self):
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            self.tcp_connections += 1
            threading.Thread(target=self._handle, args=(sock,), daemon=True).start()

    def _handle(self, sock):
        sock.settimeout(30)
        try:
            tls = self._context.wrap_socket(sock, server_side=True)
        except (ssl.SSLError, OSError) as error:
            self.refused.append(str(error))
            sock.close()
            return
        try:
            self._serve_blocking(tls)
        except (ssl.SSLError, OSError, h2.exceptions.ProtocolError):
            pass
        finally:
            tls.close()

    def _serve_blocking(self, tls):
        """The base class's `_serve`, on a blocking socket."""
        conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False,
                                                                           header_encoding="utf-8"))
        conn.initiate_connection()
        conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.max_streams})
        tls.sendall(conn.data_to_send())
        streams = {}
        while True:
            data = tls.recv(65536)
            if not data:
                return
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    streams[event.stream_id] = (dict(event.headers), bytearray())
                elif isinstance(event, h2.events.DataReceived):
                    streams[event.stream_id][1].extend(event.data)
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    headers, body = streams.pop(event.stream_id)
                    with self._lock:
                        self._answer(conn, event.stream_id, headers, bytes(body))
            out = conn.data_to_send()
            if out:
                tls.sendall(out)

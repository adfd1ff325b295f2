import COpenSSL

/// TLS settings shared by many connections: one OpenSSL `SSL_CTX` (TLS 1.2 or newer, no
/// compression, no renegotiation), its trust store, identity and ALPN list.
///
/// `@unchecked Sendable`: the SSL_CTX is configured only inside the factory methods and never
/// changed afterwards; OpenSSL allows creating connections from one SSL_CTX on many threads.
public final class TLSContext: @unchecked Sendable {
    let ctx: OpaquePointer
    /// True for contexts made by a `server` factory; connections take their role from it.
    let isServer: Bool
    /// Whether a client checks the server's chain and name (false only for explicit opt-outs).
    private(set) var verifiesPeer: Bool = false
    /// Kept alive here because OpenSSL's ALPN select callback holds an unretained pointer to it.
    private var alpnPreference: ALPNServerPreference?

    private init(ctx: OpaquePointer, isServer: Bool) {
        self.ctx = ctx
        self.isServer = isServer
    }

    deinit { SSL_CTX_free(ctx) }

    /// A fresh context with the settings every Pushgate connection shares.
    static func make(server: Bool) throws(TLSError) -> TLSContext {
        guard let ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
            throw .openSSL(.configuration, "SSL_CTX_new failed")
        }
        let context = TLSContext(ctx: ctx, isServer: server)  // frees ctx if a step below throws
        guard COpenSSL_SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) == 1 else {
            throw .openSSL(.configuration, "cannot require TLS 1.2 or newer")
        }
        // Compression invites CRIME-style attacks; renegotiation (TLS 1.2 only) would make SSL_write
        // want to read, which a sans-IO writer cannot satisfy.
        let options = COpenSSL_SSL_OP_NO_COMPRESSION() | COpenSSL_SSL_OP_NO_RENEGOTIATION()
        guard SSL_CTX_set_options(ctx, options) & options == options else {
            throw .openSSL(.configuration, "cannot set SSL_OP_NO_COMPRESSION / NO_RENEGOTIATION")
        }
        // Release-buffers would free and re-allocate the record buffers on every idle moment, which
        // busy HTTP/2 connections pay for constantly. It is off by default; keep it off explicitly.
        _ = COpenSSL_SSL_CTX_clear_mode(ctx, Int(SSL_MODE_RELEASE_BUFFERS))
        // A write retried after WANT_* may come from a different Swift buffer with the same bytes.
        let moving = Int(SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER)
        guard COpenSSL_SSL_CTX_set_mode(ctx, moving) & moving == moving else {
            throw .openSSL(.configuration, "cannot set SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER")
        }
        return context
    }

    // MARK: Steps shared by the factories

    /// Offers `protocols` in the ClientHello (clients).
    func offerALPN(_ protocols: [String]) throws(TLSError) {
        guard !protocols.isEmpty else { return }
        let wire = try ALPN.wireFormat(protocols)
        // Unlike most of OpenSSL, SSL_CTX_set_alpn_protos returns 0 on success.
        let status = wire.withUnsafeBufferPointer { SSL_CTX_set_alpn_protos(ctx, $0.baseAddress, UInt32($0.count)) }
        guard status == 0 else { throw .openSSL(.configuration, "SSL_CTX_set_alpn_protos failed") }
    }

    /// Selects from the client's ALPN offer in `protocols` preference order (servers).
    func selectALPN(_ protocols: [String]) throws(TLSError) {
        guard !protocols.isEmpty else { return }
        _ = try ALPN.wireFormat(protocols)  // validates the names
        let preference = ALPNServerPreference(protocols)
        preference.install(on: ctx)
        alpnPreference = preference
    }

    /// Makes clients check the server (chain and, per connection, name) or not.
    func setClientVerification(_ verify: Bool) {
        verifiesPeer = verify
        SSL_CTX_set_verify(ctx, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nil)
    }

    /// Adds OpenSSL's default CA locations (Debian: /etc/ssl/certs) to the trust store.
    func trustSystemRoots() throws(TLSError) {
        guard SSL_CTX_set_default_verify_paths(ctx) == 1 else {
            throw .openSSL(.configuration, "cannot load the system CA certificates")
        }
    }

    /// Adds the certificates in a PEM file to the trust store.
    func trust(caFile: String) throws(TLSError) {
        guard SSL_CTX_load_verify_locations(ctx, caFile, nil) == 1 else {
            throw .openSSL(.configuration, "cannot load CA file \(caFile)")
        }
    }

    /// Adds every certificate in `caPEM` to the trust store; returns them for callers that also
    /// advertise them as acceptable client-certificate issuers.
    @discardableResult
    func trust(caPEM: String) throws(TLSError) -> [X509Certificate] {
        let certificates = try X509Certificate.readAll(pem: caPEM)
        guard let store = SSL_CTX_get_cert_store(ctx) else {
            throw .openSSL(.configuration, "SSL_CTX_get_cert_store failed")
        }
        for certificate in certificates {
            guard X509_STORE_add_cert(store, certificate.x509) == 1 else {
                throw .openSSL(.configuration, "cannot add CA certificate to the trust store")
            }
        }
        return certificates
    }

    /// Loads our certificate chain (leaf first) and its private key from PEM files.
    func useIdentity(certificateChainFile: String, privateKeyFile: String) throws(TLSError) {
        guard SSL_CTX_use_certificate_chain_file(ctx, certificateChainFile) == 1 else {
            throw .openSSL(.certificate, "cannot load certificate chain \(certificateChainFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(ctx, privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            throw .openSSL(.certificate, "cannot load private key \(privateKeyFile)")
        }
        try checkPrivateKey()
    }

    /// Loads our certificate chain (leaf first) and its private key from PEM text.
    func useIdentity(certificateChainPEM: String, privateKeyPEM: String) throws(TLSError) {
        let chain = try X509Certificate.readAll(pem: certificateChainPEM)
        guard SSL_CTX_use_certificate(ctx, chain[0].x509) == 1 else {
            throw .openSSL(.certificate, "SSL_CTX_use_certificate failed")
        }
        for intermediate in chain.dropFirst() {
            guard COpenSSL_SSL_CTX_add1_chain_cert(ctx, intermediate.x509) == 1 else {
                throw .openSSL(.certificate, "cannot add intermediate certificate")
            }
        }
        let key = try EVPKey(privateKeyPEM: privateKeyPEM)
        guard SSL_CTX_use_PrivateKey(ctx, key.pkey) == 1 else {
            throw .openSSL(.certificate, "cannot use the private key with this certificate")
        }
        try checkPrivateKey()
    }

    private func checkPrivateKey() throws(TLSError) {
        guard SSL_CTX_check_private_key(ctx) == 1 else {
            throw .openSSL(.certificate, "private key does not match the certificate")
        }
    }

    /// Server side of mTLS: demand a client certificate that chains to the given CAs.
    func requireClientCertificates() {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
    }

    /// Names the server's session cache so resumed sessions are accepted even when client
    /// certificates are verified (OpenSSL refuses resumption without a session ID context).
    func setSessionIDContext() throws(TLSError) {
        let name = Array("pushgate".utf8)
        guard SSL_CTX_set_session_id_context(ctx, name, UInt32(name.count)) == 1 else {
            throw .openSSL(.configuration, "SSL_CTX_set_session_id_context failed")
        }
    }
}

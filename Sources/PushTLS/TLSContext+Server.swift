import COpenSSL

extension TLSContext {
    /// A server context (TLS ≥ 1.2) with its identity from PEM files.
    ///
    /// - Parameters:
    ///   - alpn: protocols the server accepts, most preferred first. When the client offers none
    ///     of them the handshake proceeds *without* ALPN (no no_application_protocol alert), so the
    ///     client sees no selection and can report it clearly.
    ///   - clientCAFile: when set, clients must present a certificate chaining to these CAs (mTLS).
    public static func server(
        certificateChainFile: String, privateKeyFile: String, alpn: [String] = ["h2"],
        clientCAFile: String? = nil
    ) throws(TLSError) -> TLSContext {
        let context = try serverBase(alpn: alpn)
        try context.useIdentity(certificateChainFile: certificateChainFile, privateKeyFile: privateKeyFile)
        if let clientCAFile {
            try context.trust(caFile: clientCAFile)
            // Tell clients which issuers we accept (CertificateRequest certificate_authorities).
            guard let names = SSL_load_client_CA_file(clientCAFile) else {
                throw .openSSL(.configuration, "cannot read client CA names from \(clientCAFile)")
            }
            SSL_CTX_set_client_CA_list(context.ctx, names)  // takes ownership of `names`
            context.requireClientCertificates()
        }
        return context
    }

    /// A server context with its identity from PEM text (leaf first, then intermediates).
    /// Same ALPN and mTLS behaviour as the file-based variant.
    public static func server(
        certificatePEM: String, privateKeyPEM: String, alpn: [String] = ["h2"],
        clientCAPEM: String? = nil
    ) throws(TLSError) -> TLSContext {
        let context = try serverBase(alpn: alpn)
        try context.useIdentity(certificateChainPEM: certificatePEM, privateKeyPEM: privateKeyPEM)
        if let clientCAPEM {
            for certificate in try context.trust(caPEM: clientCAPEM) {
                guard SSL_CTX_add_client_CA(context.ctx, certificate.x509) == 1 else {
                    throw .openSSL(.configuration, "SSL_CTX_add_client_CA failed")
                }
            }
            context.requireClientCertificates()
        }
        return context
    }

    private static func serverBase(alpn: [String]) throws(TLSError) -> TLSContext {
        let context = try make(server: true)
        try context.selectALPN(alpn)
        try context.setSessionIDContext()
        return context
    }
}

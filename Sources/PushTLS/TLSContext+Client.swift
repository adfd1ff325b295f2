extension TLSContext {
    /// A client context (TLS ≥ 1.2) offering `alpn`.
    ///
    /// - Parameters:
    ///   - alpn: protocols offered, most preferred first. Check `TLSConnection.negotiatedALPN`
    ///     after the handshake: a server may select none.
    ///   - caFile: a PEM file of extra trusted CA certificates.
    ///   - useSystemRoots: also trust OpenSSL's default CA locations.
    ///   - verifyPeer: verify the server's chain and name. Turn off only for explicit test setups.
    ///   - certificateChainFile, privateKeyFile: a client identity (APNs certificate auth); give
    ///     both or neither.
    public static func client(
        alpn: [String] = ["h2"], caFile: String? = nil, useSystemRoots: Bool = true,
        verifyPeer: Bool = true, certificateChainFile: String? = nil, privateKeyFile: String? = nil
    ) throws(TLSError) -> TLSContext {
        let context = try clientBase(alpn: alpn, useSystemRoots: useSystemRoots, verifyPeer: verifyPeer)
        if let caFile { try context.trust(caFile: caFile) }
        switch (certificateChainFile, privateKeyFile) {
        case (nil, nil): break
        case (let chain?, let key?): try context.useIdentity(certificateChainFile: chain, privateKeyFile: key)
        default: throw TLSError(.configuration, "a client certificate needs both a chain file and a key file")
        }
        return context
    }

    /// A client context that trusts the certificates in `caPEM` (plus the system roots when
    /// `useSystemRoots`), optionally with a client identity given as PEM text.
    public static func client(
        caPEM: String, alpn: [String] = ["h2"], useSystemRoots: Bool = true, verifyPeer: Bool = true,
        certificateChainPEM: String? = nil, privateKeyPEM: String? = nil
    ) throws(TLSError) -> TLSContext {
        let context = try clientBase(alpn: alpn, useSystemRoots: useSystemRoots, verifyPeer: verifyPeer)
        try context.trust(caPEM: caPEM)
        switch (certificateChainPEM, privateKeyPEM) {
        case (nil, nil): break
        case (let chain?, let key?): try context.useIdentity(certificateChainPEM: chain, privateKeyPEM: key)
        default: throw TLSError(.configuration, "a client certificate needs both a chain and a key")
        }
        return context
    }

    private static func clientBase(alpn: [String], useSystemRoots: Bool, verifyPeer: Bool) throws(TLSError)
        -> TLSContext
    {
        let context = try make(server: false)
        try context.offerALPN(alpn)
        context.setClientVerification(verifyPeer)
        if useSystemRoots { try context.trustSystemRoots() }
        return context
    }
}

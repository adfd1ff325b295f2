import COpenSSL

/// Owns one X509 certificate. Internal: OpenSSL types never appear in the public API.
final class X509Certificate {
    let x509: OpaquePointer

    /// Takes ownership of an X509 the caller got from OpenSSL.
    init(taking x509: OpaquePointer) { self.x509 = x509 }

    deinit { X509_free(x509) }

    /// Every certificate in a PEM text, in order (leaf first for a chain). Fails if there is none.
    static func readAll(pem: String) throws(TLSError) -> [X509Certificate] {
        let bio = try MemoryBIO(copying: pem)
        var certificates: [X509Certificate] = []
        while let x509 = PEM_read_bio_X509(bio.bio, nil, nil, nil) {
            certificates.append(X509Certificate(taking: x509))
        }
        // Reading stops with a "no start line" error at end of input; that one is expected once we
        // have at least one certificate.
        if certificates.isEmpty {
            throw .openSSL(.certificate, "no certificate found in PEM")
        }
        _ = drainOpenSSLErrorQueue()
        return certificates
    }

    /// The certificate as "-----BEGIN CERTIFICATE-----" PEM.
    func pem() throws(TLSError) -> String {
        let bio = try MemoryBIO()
        guard PEM_write_bio_X509(bio.bio, x509) == 1 else {
            throw .openSSL(.certificate, "PEM_write_bio_X509 failed")
        }
        return try bio.text()
    }
}

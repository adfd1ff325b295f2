import COpenSSL

/// A P-256 key and a self-signed X.509 v3 certificate for it, both as PEM. The certificate is
/// marked CA:TRUE so it can be its own trust anchor: a test server presents it and the client
/// trusts the same PEM (for example written out as its `ca_file`).
public struct SelfSignedCertificate: Sendable {
    /// "-----BEGIN CERTIFICATE-----" PEM.
    public let certificatePEM: String
    /// Unencrypted PKCS#8 "-----BEGIN PRIVATE KEY-----" PEM.
    public let privateKeyPEM: String

    /// Generates a fresh key and certificate.
    ///
    /// - Parameters:
    ///   - commonName: the subject (and issuer) CN.
    ///   - subjectAltNames: names the certificate is valid for. Entries that parse as IPv4/IPv6
    ///     addresses become IP SANs, all others DNS SANs (e.g. `["127.0.0.1", "localhost"]`).
    ///   - validDays: validity from now; notBefore is one hour back to tolerate clock skew.
    public static func generate(
        commonName: String, subjectAltNames: [String], validDays: Int = 30
    ) throws(TLSError) -> SelfSignedCertificate {
        guard validDays > 0 else { throw TLSError(.invalidInput, "validDays must be positive") }
        let key = try EVPKey.generateP256()
        guard let x509 = X509_new() else { throw .openSSL(.certificate, "X509_new failed") }
        let certificate = X509Certificate(taking: x509)

        guard X509_set_version(x509, 2) == 1 else {  // 2 means v3, needed for extensions
            throw .openSSL(.certificate, "X509_set_version failed")
        }
        try setRandomSerial(x509)
        guard X509_gmtime_adj(X509_getm_notBefore(x509), -3600) != nil,
            X509_time_adj_ex(X509_getm_notAfter(x509), Int32(clamping: validDays), 0, nil) != nil
        else { throw .openSSL(.certificate, "cannot set the validity period") }

        guard let name = X509_get_subject_name(x509),
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0) == 1,
            X509_set_issuer_name(x509, name) == 1
        else { throw .openSSL(.certificate, "cannot set the subject name") }
        guard X509_set_pubkey(x509, key.pkey) == 1 else {
            throw .openSSL(.certificate, "X509_set_pubkey failed")
        }

        var extensions = [
            (NID_basic_constraints, "critical,CA:TRUE"),
            // digitalSignature for the TLS handshake, keyCertSign for being its own trust anchor.
            (NID_key_usage, "critical,digitalSignature,keyCertSign"),
            (NID_ext_key_usage, "serverAuth,clientAuth"),
            (NID_subject_key_identifier, "hash"),
        ]
        if !subjectAltNames.isEmpty {
            extensions.append((NID_subject_alt_name, try sanConfiguration(subjectAltNames)))
        }
        for (nid, value) in extensions { try addExtension(x509, nid: nid, value: value) }

        guard X509_sign(x509, key.pkey, EVP_sha256()) > 0 else {
            throw .openSSL(.certificate, "X509_sign failed")
        }
        return SelfSignedCertificate(certificatePEM: try certificate.pem(), privateKeyPEM: try key.privateKeyPEM())
    }

    /// A positive 127-bit random serial, so two certificates with the same name never collide.
    private static func setRandomSerial(_ x509: OpaquePointer) throws(TLSError) {
        guard let number = BN_new() else { throw .openSSL(.certificate, "BN_new failed") }
        defer { BN_free(number) }
        guard BN_rand(number, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1,
            let serial = X509_get_serialNumber(x509), BN_to_ASN1_INTEGER(number, serial) != nil
        else { throw .openSSL(.certificate, "cannot set a random serial number") }
    }

    /// "IP:127.0.0.1,DNS:localhost" for OpenSSL's extension config syntax.
    private static func sanConfiguration(_ names: [String]) throws(TLSError) -> String {
        var entries: [String] = []
        for name in names {
            // The config syntax splits on commas; names with separators or spaces are not hostnames.
            guard !name.isEmpty, !name.contains(where: { $0 == "," || $0 == " " || $0 == "\n" }) else {
                throw TLSError(.invalidInput, "invalid subjectAltName \"\(name)\"")
            }
            if let octets = a2i_IPADDRESS(name) {
                ASN1_OCTET_STRING_free(octets)
                entries.append("IP:\(name)")
            } else {
                _ = drainOpenSSLErrorQueue()  // "not an IP address" is the expected answer here
                entries.append("DNS:\(name)")
            }
        }
        return entries.joined(separator: ",")
    }

    private static func addExtension(_ x509: OpaquePointer, nid: Int32, value: String) throws(TLSError) {
        var v3 = X509V3_CTX()  // zeroed: no config database
        X509V3_set_ctx(&v3, x509, x509, nil, nil, 0)  // self-signed: issuer is the subject
        guard let ext = X509V3_EXT_conf_nid(nil, &v3, nid, value) else {
            throw .openSSL(.certificate, "cannot build extension \(String(cString: OBJ_nid2sn(nid))) = \(value)")
        }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(x509, ext, -1) == 1 else {
            throw .openSSL(.certificate, "X509_add_ext failed")
        }
    }
}

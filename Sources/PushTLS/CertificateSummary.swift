import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// What an operator needs to recognise a certificate in a log line: its subject and when it
/// expires.
public struct CertificateSummary: Sendable, Equatable, CustomStringConvertible {
    /// The subject name, OpenSSL's one-line form (`/C=US/O=Example/CN=Apple Push Services: com.example`).
    public let subject: String
    /// notAfter, in Unix seconds (UTC).
    public let notAfter: Int64

    public init(subject: String, notAfter: Int64) {
        self.subject = subject
        self.notAfter = notAfter
    }

    /// notAfter as `2026-12-31T23:59:59Z`.
    public var expiry: String {
        var seconds = time_t(notAfter)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "\(notAfter)" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    public var description: String { "\(subject) (expires \(expiry))" }

    /// The first certificate (the leaf of a chain) in the PEM text.
    public init(pem: String) throws(TLSError) {
        let leaf = try X509Certificate.readAll(pem: pem)[0]
        // The certificate frees its X509 when released: kept until the summary is read.
        self = try withExtendedLifetime(leaf) { () throws(TLSError) in try CertificateSummary(leaf.x509) }
    }

    init(_ x509: OpaquePointer) throws(TLSError) {
        // X509_NAME_oneline writes into our buffer (no OPENSSL_free, which is a macro).
        var text = [CChar](repeating: 0, count: 1024)
        guard let name = X509_get_subject_name(x509), X509_NAME_oneline(name, &text, Int32(text.count)) != nil
        else { throw .openSSL(.certificate, "cannot read the certificate's subject") }
        var parts = tm()
        guard let notAfter = X509_get0_notAfter(x509), ASN1_TIME_to_tm(notAfter, &parts) == 1 else {
            throw .openSSL(.certificate, "cannot read the certificate's notAfter")
        }
        subject = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.notAfter = Int64(timegm(&parts))
    }
}

extension TLSContext {
    /// The client certificate this context presents (certificate auth), or nil when it has none.
    public var clientCertificate: CertificateSummary? {
        guard let x509 = SSL_CTX_get0_certificate(ctx) else { return nil }
        return try? CertificateSummary(x509)
    }
}

import PushTLS
import Testing

@testable import PushGateway

/// An APNs client certificate judged at start and on SIGHUP (issue #46): expiring within 30 days
/// is a warning, expired refuses the app unless `allow_expired_certificate`.
@Suite("APNs certificate expiry")
struct CertificateExpiryTests {
    static let now: Int64 = 1_800_000_000
    static let day: Int64 = 86_400

    static func certificate(expiringIn seconds: Int64) -> CertificateSummary {
        CertificateSummary(subject: "/CN=Apple Push Services: com.example", notAfter: now + seconds)
    }

    @Test("fine beyond 30 days; a warning within; expired at and after notAfter")
    func verdicts() {
        #expect(CertificateExpiry.verdict(Self.certificate(expiringIn: 31 * Self.day), now: Self.now) == .fine)
        #expect(CertificateExpiry.verdict(Self.certificate(expiringIn: 30 * Self.day), now: Self.now) == .expiresSoon)
        #expect(CertificateExpiry.verdict(Self.certificate(expiringIn: 1), now: Self.now) == .expiresSoon)
        #expect(CertificateExpiry.verdict(Self.certificate(expiringIn: 0), now: Self.now) == .expired)
        #expect(CertificateExpiry.verdict(Self.certificate(expiringIn: -Self.day), now: Self.now) == .expired)
    }

    @Test("an expired certificate refuses the app with a message naming the date and the key; allowed, it loads")
    func expiredRefusesUnlessAllowed() throws {
        let app = AppConfiguration(name: "certapp", bundleID: "com.example")
        let expired = Self.certificate(expiringIn: -Self.day)
        let error = try #require(throws: ConfigurationError.self) {
            try CertificateExpiry.check(
                expired, app: app, path: "config.apps[0]", allowExpired: false, now: Self.now, log: Log(level: .error))
        }
        #expect(error.description.contains("config.apps[0].cert_file"))
        #expect(error.description.contains(expired.expiry))
        #expect(error.description.contains("allow_expired_certificate"))
        #expect(throws: Never.self) {
            try CertificateExpiry.check(
                expired, app: app, path: "config.apps[0]", allowExpired: true, now: Self.now, log: Log(level: .error))
        }
    }
}

import PushPosix
import PushTLS

/// An APNs client certificate's expiry, judged when the gateway starts and on every SIGHUP: APNs
/// refuses an expired certificate, and the refusal only shows once a notification is sent, so the
/// operator hears of it before (issue #46).
enum CertificateExpiry {
    /// A certificate expiring within this is warned about. 30 days.
    static let warningWindow: Int64 = 30 * 86_400

    enum Verdict: Equatable {
        case fine
        /// Expires within ``warningWindow``: a warning naming the date.
        case expiresSoon
        /// Expired: a warning when `allow_expired_certificate` is set, else the app refuses to load.
        case expired
    }

    static func verdict(_ certificate: CertificateSummary, now: Int64) -> Verdict {
        if certificate.notAfter <= now { return .expired }
        return certificate.notAfter - now <= warningWindow ? .expiresSoon : .fine
    }

    /// Warns about (or, expired and not allowed, refuses) the certificate of an app.
    /// - Parameter path: where the app is in the config (`config.apps[0]`), for the error.
    static func check(
        _ certificate: CertificateSummary, app: AppConfiguration, path: String, allowExpired: Bool,
        now: Int64 = unixSeconds(), log: Log
    ) throws(ConfigurationError) {
        let fields: KeyValuePairs<String, String> = [
            "app": app.name, "certificate_subject": certificate.subject, "certificate_expiry": certificate.expiry,
        ]
        switch verdict(certificate, now: now) {
        case .fine:
            return
        case .expiresSoon:
            log.warning("the APNs client certificate expires on \(certificate.expiry); renew it", fields)
        case .expired where allowExpired:
            log.warning(
                "the APNs client certificate expired on \(certificate.expiry); APNs will refuse it "
                    + "(loaded anyway: allow_expired_certificate)", fields)
        case .expired:
            throw ConfigurationError(
                "\(path).cert_file: the APNs client certificate \(certificate.subject) expired on "
                    + "\(certificate.expiry); APNs refuses it. Renew it, or set allow_expired_certificate: true "
                    + "to load the app anyway")
        }
    }

    /// The same for the certificate in `file` (an app a reload kept running): warnings only.
    static func warn(file: String, app: AppConfiguration, log: Log) {
        guard let pem = try? FileContents.readText(file), let certificate = try? CertificateSummary(pem: pem) else {
            return
        }
        try? check(certificate, app: app, path: "", allowExpired: true, log: log)
    }
}

public import PushTLS
import PushTransport

/// A connection the provider ended during or right after its handshake, before it answered
/// anything on it: a TLS alert, a close (or reset) before its first HTTP/2 SETTINGS or HTTP/1.1
/// answer, or a GOAWAY before any stream was answered. It counts as a failed connect (backoff, not
/// an instant redial), and its cause is kept for the log, the metric and the FAILED reason.
///
/// With TLS 1.3 a client finishes its handshake before the server has judged the client
/// certificate; a server that refuses it says so with an alert right after, so "connected" alone
/// proves nothing about the credential (issue #46).
struct ConnectionRefusal: Error, CustomStringConvertible {
    enum Cause {
        /// The peer's fatal TLS alert.
        case alert(TLSAlert)
        /// A GOAWAY before any answer: its error code and debug data (APNs: `{"reason":"BadCertificate"}`).
        case goAway(String)
        /// Closed with no alert, before anything was answered; the transport's error, if any.
        case closed((any Error)?)
    }

    let cause: Cause

    /// The provider said it refuses our client certificate: an alert about the certificate, or an
    /// APNs GOAWAY `BadCertificate` / `BadCertificateEnvironment`. Reconnecting will not change
    /// that; only a new certificate (a reload) will.
    var refusesCertificate: Bool {
        switch cause {
        case .alert(let alert): alert.refusesCertificate
        case .goAway(let text): Self.certificateGoAwayReasons.contains { text.contains($0) }
        case .closed: false
        }
    }

    /// APNs reasons that condemn the certificate (docs/providers.md, "Certificate authentication").
    static let certificateGoAwayReasons = ["BadCertificate", "BadCertificateEnvironment"]

    /// A short name for metrics labels: the alert's name, `goaway` or `closed`.
    var label: String {
        switch cause {
        case .alert(let alert): alert.name
        case .goAway: "goaway"
        case .closed: "closed"
        }
    }

    /// What the FAILED reason and the log say after `ProviderUnreachable: `.
    var description: String {
        switch cause {
        case .alert(let alert) where alert.refusesCertificate:
            "the provider refused our client certificate (\(alert.name))"
        case .alert(let alert):
            "the provider ended the TLS handshake with the alert \(alert.name)"
        case .goAway(let text) where refusesCertificate:
            "the provider refused our client certificate (GOAWAY \(text))"
        case .goAway(let text):
            "the provider sent GOAWAY (\(text)) before answering anything"
        case .closed(let error?):
            "the provider closed the connection right after the handshake, before answering anything: \(error)"
        case .closed(nil):
            "the provider closed the connection right after the handshake, before answering anything"
        }
    }

    /// What `error` (a failed connect, or the close of a connection the provider never answered
    /// on) says: a refusal when it carries the peer's alert; nil for anything else (a refused TCP
    /// connect, a timeout, a certificate of the provider's that did not verify).
    static func reading(_ error: (any Error)?) -> ConnectionRefusal? {
        if let refusal = error as? ConnectionRefusal { return refusal }
        if let alert = (error as? TLSError)?.alert { return ConnectionRefusal(cause: .alert(alert)) }
        return nil
    }
}

/// What the log hears of a refused handshake (the error given to the app's logger): why, the
/// client certificate presented (certificate auth), and how many refusals this line stands for.
/// A gateway logs it at error level: nothing is delivered for the app until someone acts.
public struct ProviderRefusedHandshake: Error, Sendable, CustomStringConvertible {
    /// Why, as the FAILED reason says it after `ProviderUnreachable: `.
    public let reason: String
    /// The alert's name, `goaway` or `closed` (the metric's label).
    public let alert: String
    /// Whether the provider refused our certificate (not transient: fix the certificate).
    public let refusesCertificate: Bool
    /// The client certificate of the app's TLS context; nil with token auth.
    public let certificate: CertificateSummary?
    /// Refusals since the last such line, this one included.
    public let attempts: Int

    public var description: String {
        attempts > 1 ? "\(reason) (\(attempts) refused connects since the last report)" : reason
    }
}

import COpenSSL

/// A failure from this module. OpenSSL failures carry the text of OpenSSL's thread-local error
/// queue, drained when the error was made, so the queue never leaks into a later call.
public struct TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, coarse enough to branch on.
    public enum Kind: String, Sendable {
        /// Building a context: a file, option or protocol list OpenSSL refused.
        case configuration
        /// A certificate or key could not be loaded, parsed, generated or is of the wrong type.
        case certificate
        /// A file (a key, a certificate, a service account) could not be opened or read.
        case file
        /// The peer's certificate chain or name did not verify.
        case verification
        /// The TLS handshake failed for another reason (alert, protocol, no shared cipher…).
        case handshake
        /// A record could not be decrypted or the connection broke after the handshake.
        case connection
        /// Plaintext was written after close_notify was sent or received.
        case closed
        /// Signing or key handling for ES256 failed.
        case signing
        /// A caller-supplied value was malformed (for example a JWT key ID with quotes in it).
        case invalidInput
    }

    /// What went wrong.
    public let kind: Kind
    /// What we were doing, followed by OpenSSL's queued error text when there was any.
    public let message: String
    /// The fatal alert the peer sent, when that is what ended the connection (its name is also in
    /// `message`): a server that refuses our client certificate says why this way.
    public let alert: TLSAlert?

    /// Makes an error from a kind and message; OpenSSL's error queue is not consulted.
    public init(_ kind: Kind, _ message: String, alert: TLSAlert? = nil) {
        self.kind = kind
        self.message = message
        self.alert = alert
    }

    public var description: String { kind == .file ? message : "TLS \(kind.rawValue) error: \(message)" }

    /// Makes an error for a failed OpenSSL call: `context` says what we tried, and the whole
    /// OpenSSL error queue is drained into the message.
    static func openSSL(_ kind: Kind, _ context: String) -> TLSError {
        var alert: TLSAlert?
        let queued = drainOpenSSLErrorQueue { alert = alert ?? TLSAlert.received(in: $0) }
        return TLSError(kind, queued.isEmpty ? context : "\(context): \(queued)", alert: alert)
    }
}

/// Empties this thread's OpenSSL error queue and returns its entries joined by "; ".
/// Called wherever an OpenSSL failure is turned into a TLSError or deliberately ignored: stale
/// entries would make a later SSL_get_error report SSL_ERROR_SSL for an unrelated call.
/// `each` sees every error code drained.
func drainOpenSSLErrorQueue(_ each: (UInt) -> Void = { _ in }) -> String {
    var entries: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        each(code)
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        entries.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return entries.joined(separator: "; ")
}

import COpenSSL

/// A TLS alert the peer sent us (RFC 8446 §6, RFC 5246 §7.2), by its registered name.
///
/// OpenSSL reports a received fatal alert as an error whose reason is
/// `SSL_AD_REASON_OFFSET + description` (ssl/record/rec_layer_s3.c); ``received(in:)`` reads it
/// back from such an error code, so the name survives into ``TLSError/alert``.
public struct TLSAlert: Sendable, Equatable, CustomStringConvertible {
    /// The alert description byte.
    public let code: UInt8

    public init(code: UInt8) { self.code = code }

    /// The registered name (`certificate_expired`), or `alert_<n>` for one not registered.
    public var name: String { Self.names[code] ?? "alert_\(code)" }

    public var description: String { name }

    /// Whether the peer says it refuses the certificate we presented (or its absence): a verdict
    /// about our credential that reconnecting will not change, unlike `handshake_failure` or
    /// `internal_error`.
    public var refusesCertificate: Bool { Self.certificateRefusals.contains(code) }

    private static let certificateRefusals: Set<UInt8> = [42, 43, 44, 45, 46, 48, 49, 116]

    /// The IANA "TLS Alerts" registry (names as in RFC 8446 §6).
    private static let names: [UInt8: String] = [
        0: "close_notify", 10: "unexpected_message", 20: "bad_record_mac", 21: "decryption_failed",
        22: "record_overflow", 40: "handshake_failure", 42: "bad_certificate", 43: "unsupported_certificate",
        44: "certificate_revoked", 45: "certificate_expired", 46: "certificate_unknown", 47: "illegal_parameter",
        48: "unknown_ca", 49: "access_denied", 50: "decode_error", 51: "decrypt_error", 70: "protocol_version",
        71: "insufficient_security", 80: "internal_error", 86: "inappropriate_fallback", 90: "user_canceled",
        100: "no_renegotiation", 109: "missing_extension", 110: "unsupported_extension", 112: "unrecognized_name",
        113: "bad_certificate_status_response", 115: "unknown_psk_identity", 116: "certificate_required",
        120: "no_application_protocol",
    ]

    /// The alert an OpenSSL error code says was received, or nil when it says something else
    /// (an alert we sent is reported under other reasons, such as "certificate verify failed").
    public static func received(in errorCode: UInt) -> TLSAlert? {
        // ERR_GET_LIB / ERR_GET_REASON, spelled out (OpenSSL 3 err.h): system errors carry the
        // top bit and no library.
        guard errorCode & (UInt(1) << 31) == 0, (errorCode >> 23) & 0xFF == UInt(ERR_LIB_SSL) else { return nil }
        let reason = Int(errorCode & 0x7F_FFFF) - Int(SSL_AD_REASON_OFFSET)
        guard reason >= 0, reason <= 255 else { return nil }
        return TLSAlert(code: UInt8(reason))
    }
}

/// An HTTP/2 error code as carried by RST_STREAM and GOAWAY (RFC 9113 §7).
///
/// A struct rather than an enum because peers may send codes this module does not name;
/// those must round-trip rather than be folded into a catch-all.
public struct HTTP2ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let noError = Self(rawValue: 0x0)
    public static let protocolError = Self(rawValue: 0x1)
    public static let internalError = Self(rawValue: 0x2)
    public static let flowControlError = Self(rawValue: 0x3)
    public static let settingsTimeout = Self(rawValue: 0x4)
    public static let streamClosed = Self(rawValue: 0x5)
    public static let frameSizeError = Self(rawValue: 0x6)
    public static let refusedStream = Self(rawValue: 0x7)
    public static let cancel = Self(rawValue: 0x8)
    public static let compressionError = Self(rawValue: 0x9)
    public static let connectError = Self(rawValue: 0xa)
    public static let enhanceYourCalm = Self(rawValue: 0xb)
    public static let inadequateSecurity = Self(rawValue: 0xc)
    public static let http11Required = Self(rawValue: 0xd)

    public var description: String {
        switch self {
        case .noError: "NO_ERROR"
        case .protocolError: "PROTOCOL_ERROR"
        case .internalError: "INTERNAL_ERROR"
        case .flowControlError: "FLOW_CONTROL_ERROR"
        case .settingsTimeout: "SETTINGS_TIMEOUT"
        case .streamClosed: "STREAM_CLOSED"
        case .frameSizeError: "FRAME_SIZE_ERROR"
        case .refusedStream: "REFUSED_STREAM"
        case .cancel: "CANCEL"
        case .compressionError: "COMPRESSION_ERROR"
        case .connectError: "CONNECT_ERROR"
        case .enhanceYourCalm: "ENHANCE_YOUR_CALM"
        case .inadequateSecurity: "INADEQUATE_SECURITY"
        case .http11Required: "HTTP_1_1_REQUIRED"
        default: "0x" + String(rawValue, radix: 16)
        }
    }
}

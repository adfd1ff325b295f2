/// The outcome of a gRPC call: a code plus a human-readable message for `grpc-message`.
///
/// Thrown (typed) by the framing code and by handlers; the server turns it into trailers.
/// The message is plain text here; ``GRPCPercentEncoding`` encodes it for the wire.
public struct GRPCStatus: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status code.
    public var code: GRPCStatusCode
    /// Text for the caller; may be empty.
    public var message: String

    /// Creates a status from a code and an optional message.
    public init(_ code: GRPCStatusCode, _ message: String = "") {
        self.code = code
        self.message = message
    }

    /// `CODE_NAME: message`, or just the code name when there is no message.
    public var description: String {
        message.isEmpty ? code.name : "\(code.name): \(message)"
    }

    /// The successful status (`grpc-status: 0`), sent in trailers even when all went well.
    public static let ok = GRPCStatus(.ok)
}

// Factories, so call sites read like the gRPC docs: `throw .invalidArgument("...")`.
extension GRPCStatus {
    /// `CANCELLED`: the caller cancelled the call.
    public static func cancelled(_ message: String = "") -> GRPCStatus { GRPCStatus(.cancelled, message) }
    /// `UNKNOWN`: a handler failed for a reason with no better code.
    public static func unknown(_ message: String = "") -> GRPCStatus { GRPCStatus(.unknown, message) }
    /// `INVALID_ARGUMENT`: the request is malformed regardless of server state.
    public static func invalidArgument(_ message: String = "") -> GRPCStatus {
        GRPCStatus(.invalidArgument, message)
    }
    /// `DEADLINE_EXCEEDED`: the `grpc-timeout` deadline passed.
    public static func deadlineExceeded(_ message: String = "") -> GRPCStatus {
        GRPCStatus(.deadlineExceeded, message)
    }
    /// `NOT_FOUND`: an unknown app, endpoint, message or method target.
    public static func notFound(_ message: String = "") -> GRPCStatus { GRPCStatus(.notFound, message) }
    /// `ALREADY_EXISTS`: the entity exists with different attributes.
    public static func alreadyExists(_ message: String = "") -> GRPCStatus {
        GRPCStatus(.alreadyExists, message)
    }
    /// `PERMISSION_DENIED`: the caller is known but not allowed.
    public static func permissionDenied(_ message: String = "") -> GRPCStatus {
        GRPCStatus(.permissionDenied, message)
    }
    /// `RESOURCE_EXHAUSTED`: a quota, queue or size limit was hit.
    public static func resourceExhausted(_ message: String = "") -> GRPCStatus {
        GRPCStatus(.resourceExhausted, message)
    }
    /// `FAILED_PRECONDITION`: the system is in the wrong state; don't retry until it is fixed.
    public static func failedPrecondition(_ message: String = "") -> GRPCStatus {
        GRPCStatus(.failedPrecondition, message)
    }
    /// `ABORTED`: a concurrency conflict; retry at a higher level.
    public static func aborted(_ message: String = "") -> GRPCStatus { GRPCStatus(.aborted, message) }
    /// `OUT_OF_RANGE`: a value past the valid range.
    public static func outOfRange(_ message: String = "") -> GRPCStatus { GRPCStatus(.outOfRange, message) }
    /// `UNIMPLEMENTED`: unknown method or service, or unsupported compression.
    public static func unimplemented(_ message: String = "") -> GRPCStatus {
        GRPCStatus(.unimplemented, message)
    }
    /// `INTERNAL`: a broken invariant or a malformed frame.
    public static func internalError(_ message: String = "") -> GRPCStatus {
        GRPCStatus(.internalError, message)
    }
    /// `UNAVAILABLE`: transient; the same call may be retried.
    public static func unavailable(_ message: String = "") -> GRPCStatus { GRPCStatus(.unavailable, message) }
    /// `DATA_LOSS`: unrecoverable data loss or corruption.
    public static func dataLoss(_ message: String = "") -> GRPCStatus { GRPCStatus(.dataLoss, message) }
    /// `UNAUTHENTICATED`: missing or invalid caller credentials.
    public static func unauthenticated(_ message: String = "") -> GRPCStatus {
        GRPCStatus(.unauthenticated, message)
    }
}

import PushCore

/// An SNS error answer: its code, the HTTP status SNS gives that code (botocore's SNS service model,
/// docs/sns.md), who is at fault, and a message that names the parameter.
struct SNSError: Error, Sendable, Equatable {
    var code: String
    var status: Int
    /// `Sender` (the request) or `Receiver` (the gateway).
    var senderFault: Bool
    var message: String

    init(_ code: String, status: Int, senderFault: Bool = true, _ message: String) {
        self.code = code
        self.status = status
        self.senderFault = senderFault
        self.message = message
    }

    /// `InvalidParameter` (400) in SNS's words: "Invalid parameter: Name Reason: why".
    static func invalidParameter(_ name: String, _ reason: String? = nil) -> SNSError {
        SNSError(
            "InvalidParameter", status: 400, "Invalid parameter: \(name)" + (reason.map { " Reason: \($0)" } ?? ""))
    }

    /// A parameter SNS would take but Pushgate does not: named, with why.
    static func unsupported(_ name: String, _ why: String) -> SNSError {
        invalidParameter(name, "\(why) (not supported by Pushgate; docs/sns.md)")
    }

    /// `ParameterValueInvalid` (400): SNS's code for a bad message attribute.
    static func valueInvalid(_ message: String) -> SNSError { SNSError("ParameterValueInvalid", status: 400, message) }

    static func notFound(_ message: String) -> SNSError { SNSError("NotFound", status: 404, message) }

    static func authorization(_ message: String) -> SNSError { SNSError("AuthorizationError", status: 403, message) }

    static func missingParameter(_ name: String) -> SNSError {
        SNSError(
            "ValidationError", status: 400,
            "1 validation error detected: Value null at '\(lowerFirst(name))' failed "
                + "to satisfy constraint: Member must not be null")
    }

    static let gatewayFailure = SNSError(
        "InternalError", status: 500, senderFault: false, "the gateway failed; details are in its log")

    static let unavailable = SNSError(
        "ServiceUnavailable", status: 503, senderFault: false,
        "the store cannot be used right now (details in the gateway's log); try again")

    private static func lowerFirst(_ name: String) -> String {
        name.prefix(1).lowercased() + name.dropFirst()
    }
}

extension SNSError {
    /// The SNS form of a refusal made by the logic the gRPC API shares (validation, authorization,
    /// the store): its message names the gRPC field, so `parameter` says which SNS parameter that is.
    init(_ status: GRPCStatus, parameter: String) {
        switch status.code {
        case .invalidArgument, .alreadyExists, .failedPrecondition, .outOfRange:
            self = .invalidParameter(parameter, status.message)
        case .notFound: self = .notFound(status.message)
        case .permissionDenied, .unauthenticated: self = .authorization(status.message)
        case .resourceExhausted: self = SNSError("Throttled", status: 429, status.message)
        case .unavailable: self = .unavailable
        default: self = .gatewayFailure
        }
    }
}

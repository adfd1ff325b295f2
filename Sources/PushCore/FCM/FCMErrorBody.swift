/// The parts of an FCM HTTP v1 error body that classification needs (docs/providers.md B.3):
///
/// ```json
/// {"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND",
///   "details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"},
///              {"@type":"type.googleapis.com/google.rpc.BadRequest",
///               "fieldViolations":[{"field":"message.token","description":"…"}]}]}}
/// ```
public struct FCMErrorBody: Sendable, Equatable {
    /// `error.code`, the HTTP status FCM meant.
    public var code: Int?
    /// `error.message`, human-readable.
    public var message: String?
    /// `error.status`, the canonical gRPC code name (`NOT_FOUND`, `INVALID_ARGUMENT`, …).
    public var status: String?
    /// The first `details[].errorCode` (`UNREGISTERED`, …), from the `FcmError` detail.
    public var errorCode: String?
    /// Every `details[].fieldViolations[].field` (`message.token`, …), in order.
    public var fieldViolations: [String]

    /// Creates a body from its parts.
    public init(
        code: Int? = nil, message: String? = nil, status: String? = nil, errorCode: String? = nil,
        fieldViolations: [String] = []
    ) {
        self.code = code
        self.message = message
        self.status = status
        self.errorCode = errorCode
        self.fieldViolations = fieldViolations
    }

    /// Parses an error body; nil when it is not JSON or has no `error` object (a proxy's HTML
    /// page, an empty body), so the HTTP status has to decide.
    ///
    /// Members of the wrong type are skipped rather than failing the whole body: what is
    /// readable still beats the bare HTTP status.
    public static func parse(_ body: [UInt8]) -> FCMErrorBody? {
        guard let document = try? JSONParser.parse(body), let error = document["error"],
            error.objectMembers != nil
        else { return nil }
        var parsed = FCMErrorBody()
        if case .number(let text) = error["code"] { parsed.code = Int(text) }
        if case .string(let text) = error["message"] { parsed.message = text }
        if case .string(let text) = error["status"] { parsed.status = text }
        guard case .array(let details) = error["details"] else { return parsed }
        for detail in details {
            // Only FcmError carries errorCode; the @type isn't required, so a detail that
            // omits it still counts (the shape is unambiguous).
            if parsed.errorCode == nil, case .string(let code) = detail["errorCode"] { parsed.errorCode = code }
            guard case .array(let violations) = detail["fieldViolations"] else { continue }
            for violation in violations {
                if case .string(let field) = violation["field"] { parsed.fieldViolations.append(field) }
            }
        }
        return parsed
    }

    /// True when the error is about the registration token itself: a field violation on
    /// `message.token`, or FCM's wording "The registration token is not a valid FCM registration
    /// token" (sometimes sent without the BadRequest detail).
    public var concernsToken: Bool {
        if fieldViolations.contains("message.token") { return true }
        guard let lowered = message?.lowercased() else { return false }
        return lowered.contains("registration token")
            && (lowered.contains("not a valid") || lowered.contains("invalid"))
    }
}

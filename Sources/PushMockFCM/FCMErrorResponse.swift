import PushCore

/// An error answer of the FCM HTTP v1 API (docs/providers.md B.3):
/// `{"error":{"code":…,"message":"…","status":"…","details":[FcmError?, BadRequest?]}}`.
struct FCMErrorResponse: Error, Sendable, Equatable {
    /// HTTP status, also `error.code`.
    var httpStatus: Int
    /// The canonical gRPC status name (`INVALID_ARGUMENT`, `NOT_FOUND`, …).
    var status: String
    var message: String
    /// FCM's `errorCode` detail; nil for errors FCM answers without one (OAuth 401, project 403).
    var errorCode: String?
    /// `google.rpc.BadRequest` field violations: (field, description).
    var fieldViolations: [(field: String, description: String)] = []
    /// Sends `Retry-After` (503 and 429).
    var retryable = false

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.httpStatus == rhs.httpStatus && lhs.status == rhs.status && lhs.message == rhs.message
            && lhs.errorCode == rhs.errorCode && lhs.retryable == rhs.retryable
            && lhs.fieldViolations.map { [$0.field, $0.description] }
                == rhs.fieldViolations.map { [$0.field, $0.description] }
    }

    /// What stats count it under: the FCM errorCode, else the canonical status.
    var statsKey: String { errorCode ?? status }

    /// 400 INVALID_ARGUMENT naming the offending field.
    static func invalidArgument(field: String, _ description: String) -> Self {
        FCMErrorResponse(
            httpStatus: 400, status: "INVALID_ARGUMENT", message: description, errorCode: "INVALID_ARGUMENT",
            fieldViolations: [(field, description)])
    }

    static let invalidRegistrationToken = invalidArgument(
        field: "message.token", "The registration token is not a valid FCM registration token")

    static let unregistered = FCMErrorResponse(
        httpStatus: 404, status: "NOT_FOUND", message: "Requested entity was not found.", errorCode: "UNREGISTERED")

    static let senderIDMismatch = FCMErrorResponse(
        httpStatus: 403, status: "PERMISSION_DENIED", message: "SenderId mismatch", errorCode: "SENDER_ID_MISMATCH")

    static let quotaExceeded = FCMErrorResponse(
        httpStatus: 429, status: "RESOURCE_EXHAUSTED",
        message: "Quota exceeded for quota metric 'Send requests' and limit 'Send requests per minute'.",
        errorCode: "QUOTA_EXCEEDED", retryable: true)

    static let unavailable = FCMErrorResponse(
        httpStatus: 503, status: "UNAVAILABLE", message: "The service is currently unavailable.",
        errorCode: "UNAVAILABLE", retryable: true)

    static let internalError = FCMErrorResponse(
        httpStatus: 500, status: "INTERNAL", message: "Internal error encountered.", errorCode: "INTERNAL")

    /// A missing, unknown or expired OAuth2 access token: no FCM errorCode (docs/providers.md B.3 "(none) 401").
    static let unauthenticated = FCMErrorResponse(
        httpStatus: 401, status: "UNAUTHENTICATED",
        message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie "
            + "or other valid authentication credential. "
            + "See https://developers.google.com/identity/sign-in/web/devconsole-project.")

    /// A project the credentials do not cover (the mock serves one project).
    static func permissionDenied(project: String) -> Self {
        FCMErrorResponse(
            httpStatus: 403, status: "PERMISSION_DENIED",
            message: "Permission 'cloudmessaging.messages.create' denied on resource "
                + "'//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist).")
    }

    static let notFound = FCMErrorResponse(
        httpStatus: 404, status: "NOT_FOUND", message: "The requested URL was not found on this server.")

    /// The JSON body.
    var body: [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginObject()
        writer.key("error")
        writer.beginObject()
        writer.key("code")
        writer.int(httpStatus)
        writer.key("message")
        writer.string(message)
        writer.key("status")
        writer.string(status)
        if errorCode != nil || !fieldViolations.isEmpty {
            writer.key("details")
            writer.beginArray()
            if let errorCode {
                writer.beginObject()
                writer.key("@type")
                writer.string("type.googleapis.com/google.firebase.fcm.v1.FcmError")
                writer.key("errorCode")
                writer.string(errorCode)
                writer.endObject()
            }
            if !fieldViolations.isEmpty {
                writer.beginObject()
                writer.key("@type")
                writer.string("type.googleapis.com/google.rpc.BadRequest")
                writer.key("fieldViolations")
                writer.beginArray()
                for violation in fieldViolations {
                    writer.beginObject()
                    if !violation.field.isEmpty {  // Google names no field for unparsable JSON
                        writer.key("field")
                        writer.string(violation.field)
                    }
                    writer.key("description")
                    writer.string(violation.description)
                    writer.endObject()
                }
                writer.endArray()
                writer.endObject()
            }
            writer.endArray()
        }
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }
}

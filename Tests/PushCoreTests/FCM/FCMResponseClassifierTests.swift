import Testing

@testable import PushCore

@Suite("FCM response classification")
struct FCMResponseClassifierTests {
    static let now: Int64 = 1_700_000_000

    /// An FCM error body as the v1 API sends it.
    static func errorBody(
        code: Int, status: String, message: String = "m", errorCode: String? = nil, violations: [String] = []
    ) -> [UInt8] {
        var details: [String] = []
        if let errorCode {
            details.append(
                #"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":""# + errorCode + #""}"#)
        }
        if !violations.isEmpty {
            let fields = violations.map { #"{"field":""# + $0 + #"","description":"d"}"# }.joined(separator: ",")
            details.append(#"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":["# + fields + "]}")
        }
        let json =
            #"{"error":{"code":"# + String(code) + #","message":""# + message + #"","status":""# + status
            + #"","details":["# + details.joined(separator: ",") + "]}}"
        return Array(json.utf8)
    }

    func outcome(_ status: Int, _ body: [UInt8], retryAfter: String? = nil) -> ClassifiedAnswer {
        FCMResponseClassifier.outcome(status: status, body: body, retryAfter: retryAfter, now: Self.now)
    }

    @Test("200: delivered, with the message name from the body")
    func delivered() {
        let body = Array(#"{"name":"projects/p/messages/0:1500415314455276%31bd1c9631bd1c96"}"#.utf8)
        #expect(outcome(200, body) == .delivered(id: "projects/p/messages/0:1500415314455276%31bd1c9631bd1c96"))
        #expect(outcome(200, Array("not json".utf8)) == .delivered(id: ""))
        #expect(FCMResponseClassifier.parseName(Array(#"{"name":7}"#.utf8)) == nil)
    }

    @Test("UNREGISTERED and SENDER_ID_MISMATCH reject and invalidate the token")
    func deadTokens() {
        #expect(
            outcome(404, Self.errorBody(code: 404, status: "NOT_FOUND", errorCode: "UNREGISTERED"))
                == .rejected(reason: "UNREGISTERED", httpStatus: 404, invalidatesToken: true))
        #expect(
            outcome(403, Self.errorBody(code: 403, status: "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH"))
                == .rejected(reason: "SENDER_ID_MISMATCH", httpStatus: 403, invalidatesToken: true))
    }

    @Test("INVALID_ARGUMENT invalidates only when it is about message.token")
    func invalidArgument() {
        #expect(
            outcome(
                400,
                Self.errorBody(
                    code: 400, status: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT",
                    violations: ["message.token"]))
                == .rejected(reason: "INVALID_ARGUMENT", httpStatus: 400, invalidatesToken: true))
        #expect(
            outcome(
                400,
                Self.errorBody(
                    code: 400, status: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT",
                    violations: ["message.android.ttl"]))
                == .rejected(reason: "INVALID_ARGUMENT", httpStatus: 400, invalidatesToken: false))
        let wording = Self.errorBody(
            code: 400, status: "INVALID_ARGUMENT",
            message: "The registration token is not a valid FCM registration token", errorCode: "INVALID_ARGUMENT")
        #expect(outcome(400, wording) == .rejected(reason: "INVALID_ARGUMENT", httpStatus: 400, invalidatesToken: true))
        let dataError = Self.errorBody(
            code: 400, status: "INVALID_ARGUMENT", message: "Invalid value at 'message.data[0].value' (TYPE_STRING), 1",
            errorCode: "INVALID_ARGUMENT")
        #expect(
            outcome(400, dataError) == .rejected(reason: "INVALID_ARGUMENT", httpStatus: 400, invalidatesToken: false))
        // Without the FcmError detail the status decides, with the same token rule.
        let statusOnly = Self.errorBody(code: 400, status: "INVALID_ARGUMENT", violations: ["message.token"])
        #expect(
            outcome(400, statusOnly) == .rejected(reason: "INVALID_ARGUMENT", httpStatus: 400, invalidatesToken: true))
    }

    @Test("THIRD_PARTY_AUTH_ERROR is a rejection that keeps the token, not an OAuth problem")
    func thirdPartyAuth() {
        #expect(
            outcome(401, Self.errorBody(code: 401, status: "UNAUTHENTICATED", errorCode: "THIRD_PARTY_AUTH_ERROR"))
                == .rejected(
                    reason: "THIRD_PARTY_AUTH_ERROR", httpStatus: 401, invalidatesToken: false,
                    code: .firebaseCredentialsRefused))
        #expect(
            outcome(401, Self.errorBody(code: 401, status: "UNAUTHENTICATED", errorCode: "APNS_AUTH_ERROR"))
                == .rejected(
                    reason: "APNS_AUTH_ERROR", httpStatus: 401, invalidatesToken: false,
                    code: .firebaseCredentialsRefused))
    }

    @Test("QUOTA_EXCEEDED, UNAVAILABLE and INTERNAL are transient with Retry-After")
    func transientCodes() {
        #expect(
            outcome(
                429, Self.errorBody(code: 429, status: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED"),
                retryAfter: "60")
                == .transient(reason: "QUOTA_EXCEEDED", httpStatus: 429, retryAfter: .seconds(60)))
        #expect(
            outcome(503, Self.errorBody(code: 503, status: "UNAVAILABLE", errorCode: "UNAVAILABLE"))
                == .transient(reason: "UNAVAILABLE", httpStatus: 503, retryAfter: nil))
        #expect(
            outcome(500, Self.errorBody(code: 500, status: "INTERNAL", errorCode: "INTERNAL"), retryAfter: "2")
                == .transient(reason: "INTERNAL", httpStatus: 500, retryAfter: .seconds(2)))
    }

    @Test("401 without an FCM errorCode: renew the OAuth2 token")
    func unauthenticated() {
        #expect(
            outcome(401, Self.errorBody(code: 401, status: "UNAUTHENTICATED"))
                == .unauthenticated(reason: "UNAUTHENTICATED"))
        #expect(outcome(401, []) == .unauthenticated(reason: "HTTP 401"))
        #expect(outcome(401, Array("<html>Unauthorized</html>".utf8)) == .unauthenticated(reason: "HTTP 401"))
        // UNSPECIFIED_ERROR carries no information, so it is treated as no errorCode.
        #expect(
            outcome(401, Self.errorBody(code: 401, status: "UNAUTHENTICATED", errorCode: "UNSPECIFIED_ERROR"))
                == .unauthenticated(reason: "UNAUTHENTICATED"))
    }

    @Test("403 PERMISSION_DENIED without an errorCode is a rejection that keeps the token")
    func permissionDenied() {
        #expect(
            outcome(403, Self.errorBody(code: 403, status: "PERMISSION_DENIED"))
                == .rejected(
                    reason: "PERMISSION_DENIED", httpStatus: 403, invalidatesToken: false, code: .sendingNotPermitted))
        // With an errorCode FCM names something more precise: the reason is that, and no permission hint.
        #expect(
            outcome(403, Self.errorBody(code: 403, status: "PERMISSION_DENIED", errorCode: "SOMETHING_NEW"))
                == .rejected(
                    reason: "SOMETHING_NEW", httpStatus: 403, invalidatesToken: false, code: .rejectedByProvider))
    }

    @Test("the status decides when the errorCode is unknown")
    func unknownErrorCode() {
        #expect(
            outcome(503, Self.errorBody(code: 503, status: "UNAVAILABLE", errorCode: "SOMETHING_NEW"))
                == .transient(reason: "SOMETHING_NEW", httpStatus: 503, retryAfter: nil))
        #expect(
            outcome(429, Self.errorBody(code: 429, status: "RESOURCE_EXHAUSTED"), retryAfter: "5")
                == .transient(reason: "RESOURCE_EXHAUSTED", httpStatus: 429, retryAfter: .seconds(5)))
        #expect(
            outcome(500, Self.errorBody(code: 500, status: "INTERNAL", errorCode: "UNSPECIFIED_ERROR"))
                == .transient(reason: "INTERNAL", httpStatus: 500, retryAfter: nil))
    }

    @Test("an unparsable body: the HTTP status decides and the reason is HTTP <n>")
    func httpFallback() {
        let html = Array("<html>oops</html>".utf8)
        #expect(
            outcome(429, html, retryAfter: "3")
                == .transient(reason: "HTTP 429", httpStatus: 429, retryAfter: .seconds(3)))
        #expect(outcome(500, html) == .transient(reason: "HTTP 500", httpStatus: 500, retryAfter: nil))
        #expect(outcome(502, html) == .transient(reason: "HTTP 502", httpStatus: 502, retryAfter: nil))
        #expect(outcome(503, []) == .transient(reason: "HTTP 503", httpStatus: 503, retryAfter: nil))
        #expect(outcome(400, html) == .rejected(reason: "HTTP 400", httpStatus: 400, invalidatesToken: false))
        #expect(outcome(404, html) == .rejected(reason: "HTTP 404", httpStatus: 404, invalidatesToken: false))
        #expect(outcome(413, []) == .rejected(reason: "HTTP 413", httpStatus: 413, invalidatesToken: false))
        // An error object of the wrong shape counts as unparsable.
        #expect(
            outcome(400, Array(#"{"error":"bad"}"#.utf8))
                == .rejected(reason: "HTTP 400", httpStatus: 400, invalidatesToken: false))
    }

    @Test("an unknown status string falls back to the HTTP status, keeping FCM's string as the reason")
    func unknownStatus() {
        #expect(
            outcome(404, Self.errorBody(code: 404, status: "NOT_FOUND"))
                == .rejected(reason: "NOT_FOUND", httpStatus: 404, invalidatesToken: false))
        #expect(
            outcome(504, Self.errorBody(code: 504, status: "DEADLINE_EXCEEDED"))
                == .transient(reason: "DEADLINE_EXCEEDED", httpStatus: 504, retryAfter: nil))
    }

    @Test("Retry-After is ignored on rejections and parsed only for transient outcomes")
    func retryAfterOnlyTransient() {
        #expect(
            outcome(404, Self.errorBody(code: 404, status: "NOT_FOUND", errorCode: "UNREGISTERED"), retryAfter: "10")
                == .rejected(reason: "UNREGISTERED", httpStatus: 404, invalidatesToken: true))
    }

    @Test("the error body parser reads every part")
    func errorBody() throws {
        let body = Self.errorBody(
            code: 400, status: "INVALID_ARGUMENT", message: "bad", errorCode: "INVALID_ARGUMENT",
            violations: ["message.token", "message.data"])
        let parsed = try #require(FCMErrorBody.parse(body))
        #expect(
            parsed
                == FCMErrorBody(
                    code: 400, message: "bad", status: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT",
                    fieldViolations: ["message.token", "message.data"]))
        #expect(FCMErrorBody.parse(Array("[]".utf8)) == nil)
        #expect(FCMErrorBody.parse([]) == nil)
    }
}

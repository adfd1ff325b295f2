import Testing

@testable import PushCore

@Suite("ADM response classification")
struct ADMResponseClassifierTests {
    static let now: Int64 = 1_700_000_000

    static func reasonBody(_ reason: String) -> [UInt8] {
        Array(#"{"reason":""#.utf8) + Array(reason.utf8) + Array(#""}"#.utf8)
    }

    func outcome(_ status: Int, _ body: [UInt8] = [], retryAfter: String? = nil) -> ClassifiedAnswer {
        ADMResponseClassifier.outcome(status: status, body: body, retryAfter: retryAfter, now: Self.now)
    }

    func outcome(_ status: Int, reason: String, retryAfter: String? = nil) -> ClassifiedAnswer {
        outcome(status, Self.reasonBody(reason), retryAfter: retryAfter)
    }

    @Test("200: delivered with the registration id ADM answered, or \"\" without one")
    func delivered() {
        let canonical = "amzn1.adm-registration.v3.Y2Fub25pY2Fs"
        #expect(outcome(200, Array(#"{"registrationID":"\#(canonical)"}"#.utf8)) == .delivered(id: canonical))
        #expect(outcome(200) == .delivered(id: ""))
        #expect(outcome(200, Array("OK".utf8)) == .delivered(id: ""))
        #expect(outcome(200, Array(#"{"registrationID":7}"#.utf8)) == .delivered(id: ""))
        // A Retry-After or a stray reason on a success changes nothing.
        #expect(outcome(200, Self.reasonBody("Unregistered"), retryAfter: "5") == .delivered(id: ""))
        #expect(outcome(201, Array(#"{"registrationID":"r"}"#.utf8)) == .delivered(id: "r"))
    }

    @Test("InvalidRegistrationId (400) and Unregistered (410, or 400) reject and invalidate the token")
    func deadTokens() {
        #expect(
            outcome(400, reason: "InvalidRegistrationId")
                == .rejected(reason: "InvalidRegistrationId", httpStatus: 400, invalidatesToken: true))
        #expect(
            outcome(410, reason: "Unregistered")
                == .rejected(reason: "Unregistered", httpStatus: 410, invalidatesToken: true))
        #expect(
            outcome(400, reason: "Unregistered")
                == .rejected(reason: "Unregistered", httpStatus: 400, invalidatesToken: true))
    }

    @Test("message errors reject without touching the token")
    func messageErrors() {
        for reason in ["InvalidData", "InvalidConsolidationKey", "InvalidExpiration", "InvalidChecksum", "InvalidType"]
        {
            #expect(outcome(400, reason: reason) == .rejected(reason: reason, httpStatus: 400, invalidatesToken: false))
        }
        #expect(
            outcome(413, reason: "MessageTooLarge")
                == .rejected(reason: "MessageTooLarge", httpStatus: 413, invalidatesToken: false))
        // Known reasons decide even with a Retry-After or an odd status.
        #expect(
            outcome(500, reason: "InvalidData", retryAfter: "1")
                == .rejected(reason: "InvalidData", httpStatus: 500, invalidatesToken: false))
    }

    @Test("401: AccessTokenExpired, no reason or another reason all mean renew the access token")
    func unauthenticated() {
        #expect(outcome(401, reason: "AccessTokenExpired") == .unauthenticated(reason: "AccessTokenExpired"))
        #expect(outcome(401) == .unauthenticated(reason: "HTTP 401"))
        #expect(outcome(401, Array("<html>Unauthorized</html>".utf8)) == .unauthenticated(reason: "HTTP 401"))
        #expect(outcome(401, reason: "InvalidAccessToken") == .unauthenticated(reason: "InvalidAccessToken"))
        #expect(outcome(403, reason: "AccessTokenExpired") == .unauthenticated(reason: "AccessTokenExpired"))
    }

    @Test("429 MaxRateExceeded, 500 and 503 are transient with Retry-After, seconds or a date")
    func transient() {
        #expect(
            outcome(429, reason: "MaxRateExceeded", retryAfter: "30")
                == .transient(reason: "MaxRateExceeded", httpStatus: 429, retryAfter: .seconds(30)))
        #expect(
            outcome(429, reason: "MaxRateExceeded")
                == .transient(reason: "MaxRateExceeded", httpStatus: 429, retryAfter: nil))
        #expect(outcome(500) == .transient(reason: "HTTP 500", httpStatus: 500, retryAfter: nil))
        #expect(
            outcome(503, retryAfter: "Tue, 14 Nov 2023 22:13:27 GMT")
                == .transient(reason: "HTTP 503", httpStatus: 503, retryAfter: .seconds(7)))
        #expect(
            outcome(503, retryAfter: "soon") == .transient(reason: "HTTP 503", httpStatus: 503, retryAfter: nil))
        #expect(
            outcome(500, reason: "InternalServerError", retryAfter: "2")
                == .transient(reason: "InternalServerError", httpStatus: 500, retryAfter: .seconds(2)))
        // MaxRateExceeded is transient whatever the status says.
        #expect(
            outcome(400, reason: "MaxRateExceeded", retryAfter: "1")
                == .transient(reason: "MaxRateExceeded", httpStatus: 400, retryAfter: .seconds(1)))
    }

    @Test("unknown reasons and bare statuses fall back on the HTTP status")
    func byStatus() {
        #expect(outcome(400, reason: "Novel") == .rejected(reason: "Novel", httpStatus: 400, invalidatesToken: false))
        #expect(outcome(404) == .rejected(reason: "HTTP 404", httpStatus: 404, invalidatesToken: false))
        // A bare 410 rejects but does not disable the endpoint: only ADM's reasons do.
        #expect(outcome(410) == .rejected(reason: "HTTP 410", httpStatus: 410, invalidatesToken: false))
        #expect(outcome(413) == .rejected(reason: "HTTP 413", httpStatus: 413, invalidatesToken: false))
        #expect(
            outcome(429, retryAfter: "3") == .transient(reason: "HTTP 429", httpStatus: 429, retryAfter: .seconds(3)))
        #expect(outcome(502, reason: "Novel") == .transient(reason: "Novel", httpStatus: 502, retryAfter: nil))
        #expect(outcome(302) == .rejected(reason: "HTTP 302", httpStatus: 302, invalidatesToken: false))
        // An empty or non-string reason is no reason.
        #expect(
            outcome(400, Self.reasonBody("")) == .rejected(reason: "HTTP 400", httpStatus: 400, invalidatesToken: false)
        )
        #expect(
            outcome(400, Array(#"{"reason":4}"#.utf8))
                == .rejected(reason: "HTTP 400", httpStatus: 400, invalidatesToken: false))
    }

    @Test("body parsing helpers")
    func parsing() {
        #expect(ADMResponseClassifier.parseReason(Self.reasonBody("Unregistered")) == "Unregistered")
        #expect(ADMResponseClassifier.parseReason(Array(#"{"reason":"x","extra":[1]}"#.utf8)) == "x")
        #expect(ADMResponseClassifier.parseReason([]) == nil)
        #expect(ADMResponseClassifier.parseReason(Array("[]".utf8)) == nil)
        #expect(ADMResponseClassifier.parseRegistrationID(Array(#"{"registrationID":"a.b"}"#.utf8)) == "a.b")
        #expect(ADMResponseClassifier.parseRegistrationID(Array(#"{"registrationId":"a.b"}"#.utf8)) == nil)
    }
}

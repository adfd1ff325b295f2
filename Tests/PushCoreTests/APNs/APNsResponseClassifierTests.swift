import Testing

@testable import PushCore

@Suite("APNs response classification")
struct APNsResponseClassifierTests {
    func outcome(_ status: Int, _ body: String) -> ClassifiedAnswer {
        APNsResponseClassifier.outcome(status: status, body: Array(body.utf8))
    }

    func outcome(_ status: Int, reason: String) -> ClassifiedAnswer {
        outcome(status, #"{"reason":"\#(reason)"}"#)
    }

    /// Every reason APNs documents, with its status, and what it must come to.
    static let table: [(reason: String, status: Int, answer: ClassifiedAnswer)] = {
        func rejected(_ reason: String, _ status: Int, _ code: DeliveryCode = .rejectedByProvider) -> ClassifiedAnswer {
            .rejected(reason: reason, httpStatus: status, invalidatesToken: false, code: code)
        }
        func deadToken(_ reason: String, _ status: Int) -> ClassifiedAnswer {
            .rejected(reason: reason, httpStatus: status, invalidatesToken: true, code: .rejectedByProvider)
        }
        func transient(_ reason: String, _ status: Int) -> ClassifiedAnswer {
            .transient(reason: reason, httpStatus: status, retryAfter: nil)
        }
        let rows: [(String, Int, (String, Int) -> ClassifiedAnswer)] = [
            ("BadCollapseId", 400, { rejected($0, $1) }),
            ("BadDeviceToken", 400, deadToken),
            ("BadExpirationDate", 400, { rejected($0, $1) }),
            ("BadMessageId", 400, { rejected($0, $1) }),
            ("BadPriority", 400, { rejected($0, $1) }),
            ("BadTopic", 400, { rejected($0, $1) }),
            ("DeviceTokenNotForTopic", 400, deadToken),
            ("DuplicateHeaders", 400, { rejected($0, $1) }),
            ("IdleTimeout", 400, { .connectionClosing(reason: $0, httpStatus: $1) }),
            ("InvalidPushType", 400, { rejected($0, $1) }),
            ("MissingDeviceToken", 400, { rejected($0, $1) }),
            ("MissingTopic", 400, { rejected($0, $1) }),
            ("PayloadEmpty", 400, { rejected($0, $1) }),
            ("TopicDisallowed", 400, { rejected($0, $1) }),
            ("BadCertificate", 403, { rejected($0, $1, .credentialsRefused) }),
            ("BadCertificateEnvironment", 403, { rejected($0, $1, .credentialsRefused) }),
            ("ExpiredProviderToken", 403, { .unauthenticated(reason: $0, httpStatus: $1) }),
            ("Forbidden", 403, { rejected($0, $1) }),
            ("InvalidProviderToken", 403, { rejected($0, $1, .credentialsRefused) }),
            ("MissingProviderToken", 403, { rejected($0, $1) }),
            ("UnrelatedKeyIdInToken", 403, { rejected($0, $1, .credentialsRefused) }),
            ("BadEnvironmentKeyIdInToken", 403, { rejected($0, $1, .credentialsRefused) }),
            ("BadEnvironmentKeyInToken", 403, { rejected($0, $1, .credentialsRefused) }),
            ("BadPath", 404, { rejected($0, $1) }),
            ("MethodNotAllowed", 405, { rejected($0, $1) }),
            ("ExpiredToken", 410, deadToken),
            ("Unregistered", 410, deadToken),
            ("PayloadTooLarge", 413, { rejected($0, $1) }),
            ("TooManyProviderTokenUpdates", 429, transient),
            ("TooManyRequests", 429, transient),
            ("InternalServerError", 500, transient),
            ("ServiceUnavailable", 503, transient),
            ("Shutdown", 503, { .connectionClosing(reason: $0, httpStatus: $1) }),
        ]
        return rows.map { ($0.0, $0.1, $0.2($0.0, $0.1)) }
    }()

    @Test("the table covers every reason APNs documents")
    func tableIsComplete() {
        #expect(Set(Self.table.map(\.reason)) == Set(APNsReason.known.map(\.string)))
        for row in Self.table { #expect(APNsReason(row.reason).httpStatus == row.status, "\(row.reason)") }
    }

    @Test("every reason with its documented status")
    func everyReason() {
        for row in Self.table {
            #expect(outcome(row.status, reason: row.reason) == row.answer, "\(row.reason)")
        }
    }

    @Test("2xx is delivered, the id being the dialect's to read from the header")
    func delivered() {
        #expect(outcome(200, "") == .delivered(id: ""))
        // The channel API: 201 created, 204 deleted.
        #expect(outcome(201, #"{"reason":"BadChannelId"}"#) == .delivered(id: ""))
        #expect(outcome(204, "") == .delivered(id: ""))
    }

    @Test("a 410 carries its timestamp as unregisteredAt; other statuses do not")
    func unregisteredAt() {
        #expect(
            outcome(410, #"{"reason":"Unregistered","timestamp":1700000000123}"#)
                == .rejected(
                    reason: "Unregistered", httpStatus: 410, invalidatesToken: true, unregisteredAt: 1_700_000_000_123,
                    code: .rejectedByProvider))
        #expect(
            outcome(400, #"{"reason":"BadDeviceToken","timestamp":1700000000123}"#)
                == .rejected(
                    reason: "BadDeviceToken", httpStatus: 400, invalidatesToken: true, code: .rejectedByProvider))
        // An unknown reason with 410: rejected, with the timestamp, the token kept.
        #expect(
            outcome(410, #"{"reason":"GoneSomehow","timestamp":5}"#)
                == .rejected(
                    reason: "GoneSomehow", httpStatus: 410, invalidatesToken: false, unregisteredAt: 5,
                    code: .rejectedByProvider))
    }

    @Test("an unknown reason or a missing body: the HTTP status decides, the reason stays verbatim")
    func byStatus() {
        for status in [429, 500, 502, 503, 504] {
            #expect(
                outcome(status, reason: "SomethingNew")
                    == .transient(reason: "SomethingNew", httpStatus: status, retryAfter: nil), "\(status)")
            #expect(
                outcome(status, "<html>proxy</html>")
                    == .transient(reason: "HTTP \(status)", httpStatus: status, retryAfter: nil), "\(status)")
        }
        for status in [400, 401, 403, 404, 413, 501] {
            #expect(
                outcome(status, reason: "SomethingNew")
                    == .rejected(
                        reason: "SomethingNew", httpStatus: status, invalidatesToken: false, code: .rejectedByProvider),
                "\(status)")
            #expect(
                outcome(status, "")
                    == .rejected(
                        reason: "HTTP \(status)", httpStatus: status, invalidatesToken: false,
                        code: .rejectedByProvider),
                "\(status)")
        }
        // An empty reason is no reason.
        #expect(outcome(503, #"{"reason":""}"#) == .transient(reason: "HTTP 503", httpStatus: 503, retryAfter: nil))
        // A known reason decides whatever the status says.
        #expect(
            outcome(500, reason: "BadTopic")
                == .rejected(reason: "BadTopic", httpStatus: 500, invalidatesToken: false, code: .rejectedByProvider))
    }
}

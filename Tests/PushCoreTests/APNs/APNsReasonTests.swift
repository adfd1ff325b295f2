import Testing

@testable import PushCore

@Suite("APNsReason")
struct APNsReasonTests {
    @Test("every A.6 reason string maps to its case and HTTP status")
    func table() {
        let expected: [(String, Int)] = [
            ("BadCollapseId", 400), ("BadDeviceToken", 400), ("BadExpirationDate", 400), ("BadMessageId", 400),
            ("BadPriority", 400), ("BadTopic", 400), ("DeviceTokenNotForTopic", 400), ("DuplicateHeaders", 400),
            ("IdleTimeout", 400), ("InvalidPushType", 400), ("MissingDeviceToken", 400), ("MissingTopic", 400),
            ("PayloadEmpty", 400), ("TopicDisallowed", 400), ("BadCertificate", 403),
            ("BadCertificateEnvironment", 403), ("ExpiredProviderToken", 403), ("Forbidden", 403),
            ("InvalidProviderToken", 403), ("MissingProviderToken", 403), ("UnrelatedKeyIdInToken", 403),
            ("BadEnvironmentKeyIdInToken", 403), ("BadEnvironmentKeyInToken", 403), ("BadPath", 404),
            ("MethodNotAllowed", 405), ("ExpiredToken", 410), ("Unregistered", 410), ("PayloadTooLarge", 413),
            ("TooManyProviderTokenUpdates", 429), ("TooManyRequests", 429), ("InternalServerError", 500),
            ("ServiceUnavailable", 503), ("Shutdown", 503),
        ]
        #expect(APNsReason.known.count == expected.count)
        for (string, status) in expected {
            let reason = APNsReason(string)
            #expect(reason != .other(string), "\(string)")
            #expect(reason.string == string)
            #expect(reason.httpStatus == status, "\(string)")
        }
    }

    @Test("unknown strings are kept verbatim")
    func unknown() {
        let reason = APNsReason("SomethingNew")
        #expect(reason == .other("SomethingNew"))
        #expect(reason.description == "SomethingNew")
        #expect(reason.httpStatus == nil)
        #expect(reason.retry == .never)
        #expect(!reason.invalidatesToken)
        // Matching is exact: APNs spells reasons in one way.
        #expect(APNsReason("unregistered") == .other("unregistered"))
    }

    @Test("retry classes")
    func retry() {
        for reason in [APNsReason.tooManyRequests, .internalServerError, .serviceUnavailable] {
            #expect(reason.retry == .afterBackoff)
        }
        #expect(APNsReason.idleTimeout.retry == .onNewConnection)
        #expect(APNsReason.shutdown.retry == .onNewConnection)
        #expect(APNsReason.expiredProviderToken.retry == .afterProviderTokenHandling)
        #expect(APNsReason.tooManyProviderTokenUpdates.retry == .afterProviderTokenHandling)
        let retryable: Set<APNsReason> = [
            .tooManyRequests, .internalServerError, .serviceUnavailable, .idleTimeout, .shutdown,
            .expiredProviderToken, .tooManyProviderTokenUpdates,
        ]
        for reason in APNsReason.known {
            #expect(reason.isRetryable == retryable.contains(reason), "\(reason)")
        }
    }

    @Test("only the four dead-token reasons invalidate the token")
    func deadTokens() {
        let dead: Set<APNsReason> = [.unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic]
        for reason in APNsReason.known {
            #expect(reason.invalidatesToken == dead.contains(reason), "\(reason)")
        }
    }

    @Test("retry from the HTTP status alone")
    func retryFromStatus() {
        for status in [429, 500, 502, 503, 504] {
            #expect(APNsReason.Retry(httpStatus: status) == .afterBackoff)
        }
        for status in [400, 403, 404, 410, 413, 200] {
            #expect(APNsReason.Retry(httpStatus: status) == .never)
        }
    }

    @Test("a delivery result defaults to no HTTP exchange")
    func deliveryResult() {
        let result = DeliveryResult(
            notificationIndex: 2, token: "ab", status: .failed, code: .deadlineExceeded, reason: "DeadlineExceeded")
        #expect(result.httpStatus == 0)
        #expect(result.attempts == 0)
        #expect(result.unregisteredAt == 0)
        #expect(result.providerID == "")
    }
}

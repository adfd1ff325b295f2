import PushCore
import Testing

@testable import PushGateway

@Suite("Fan-out holds")
struct FanOutHoldsForTests {
    func result(_ status: DeliveryStatus, _ code: DeliveryCode, _ reason: String) -> DeliveryResult {
        DeliveryResult(notificationIndex: 0, token: "t", status: status, code: code, reason: reason)
    }

    @Test("a provider that cannot take the message now is held for; the code decides, not the words")
    func holdsForProviderTrouble() {
        for (code, reason) in [
            (DeliveryCode.unreachable, "ProviderUnreachable: connect: refused"),
            (.providerUnavailable, "ServiceUnavailable"),
            // APNs' own Shutdown after the retries: the provider's trouble, not the gateway stopping.
            (.providerUnavailable, "Shutdown"),
            (.connectionLost, "ConnectionLost"),
            (.streamReset, "StreamReset(internalError)"),
            (.streamRefused, "StreamRefused: the provider refused the stream 9 times without processing it"),
            (.noCredential, "OAuthTokenError: no answer"),
            (.deadlineExceeded, "DeadlineExceeded"),
        ] {
            #expect(FanOut.holdsFor(result(.failed, code, reason)), "\(code)")
        }
    }

    @Test("not held: an expiration passed, a wrong platform, the gateway stopping, taken back, anything not FAILED")
    func doesNotHold() {
        #expect(!FanOut.holdsFor(result(.failed, .expired, "Expired")))
        #expect(!FanOut.holdsFor(result(.failed, .wrongPlatform, "WrongPlatform: app a is not a FCM app")))
        #expect(!FanOut.holdsFor(result(.failed, .shutdown, "Shutdown")))
        #expect(!FanOut.holdsFor(result(.failed, .cancelled, "Cancelled")))
        #expect(!FanOut.holdsFor(result(.rejected, .rejectedByProvider, "ServiceUnavailable")))
        #expect(!FanOut.holdsFor(result(.delivered, .delivered, "")))
    }
}

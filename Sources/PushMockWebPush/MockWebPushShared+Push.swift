import PushHTTP2
import PushMockSupport
import PushTLS
import PushWebPushCrypto

extension MockWebPushShared {
    static let pushPrefix = "/wpush/v2/"
    static let subscriptionsPath = "/_mock/subscriptions"
    /// RFC 8030 §7.2: a push service must accept 4096 bytes; the bound FCM and Apple keep.
    static let maxBodyBytes = 4096

    /// Routes and answers one request. `now` is the loop's monotonic clock.
    func handle(_ request: MockRequest, now: UInt64) -> MockResponse {
        let path = request.route
        if path == Self.subscriptionsPath { return issueSubscriptions(request) }
        if path.utf8.starts(with: Self.pushPrefix.utf8) {
            stats.update { $0.pushRequests += 1 }
            let id = String(path[path.utf8.index(path.startIndex, offsetBy: Self.pushPrefix.utf8.count)...])
            switch push(request, id: id) {
            case .success(let response): return response
            case .failure(let refusal): return refusal.response(retryAfter: configuration.retryAfterSeconds)
            }
        }
        return WebPushRefusal(.invalidToken, "Invalid token").response(retryAfter: nil)
    }

    /// The checks in autopush's order (endpoint, VAPID, subscription, size, headers), then the
    /// mock's own (decryption), then the injected faults.
    private func push(_ request: MockRequest, id: String) -> Result<MockResponse, WebPushRefusal> {
        guard request.method == "POST" else {
            return .failure(WebPushRefusal(.methodNotAllowed, "Pushes are POSTed"))
        }
        guard SubscriptionID.isValid(id), !configuration.isNotFound(id) else {
            return .failure(WebPushRefusal(.invalidToken, "Invalid token"))
        }
        let vapid: PresentedVAPIDToken
        switch vapidTokens.token(for: request.authorization) {
        case .failure(let failure): return .failure(failure.refusal)
        case .success(let (token, firstSeen)):
            if let failure = token.check(origin: Self.origin(request.authority), now: wallClockSeconds()) {
                return .failure(failure.refusal)
            }
            if firstSeen { stats.update { $0.vapidTokensByAudience[token.audience, default: 0] += 1 } }
            vapid = token
        }
        if configuration.isGone(id) {
            return .failure(WebPushRefusal(.noSubscription, "No such subscription"))
        }
        guard request.bodyLength <= Self.maxBodyBytes else {
            return .failure(
                WebPushRefusal(
                    .payloadTooLarge, "Payload too large: \(request.bodyLength) bytes, at most \(Self.maxBodyBytes)"))
        }
        let headers: PushHeaders
        switch PushHeaders.read(request) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let read): headers = read
        }
        var plaintext: [UInt8]?
        if !request.body.isEmpty, shouldDecrypt() {
            switch decrypt(request.body, id: id) {
            case .failure(let refusal): return .failure(refusal)
            case .success(let read): plaintext = read
            }
        }
        if let fault = faults.next() {
            return .failure(WebPushRefusal(fault, "Injected fault (--rate-limit-every / --fail-500 / --fail-503)"))
        }
        let messageID = nextMessageID()
        let message = MockWebPushMessage(
            connectionID: request.connectionID, streamID: request.streamID, messageID: messageID, subscriptionID: id,
            ttl: headers.ttl, urgency: headers.urgency, topic: headers.topic, vapidAudience: vapid.audience,
            vapidSubject: vapid.subject, vapidExpiry: vapid.expiry, vapidJWT: vapid.jwt, plaintext: plaintext,
            body: request.body)
        stats.record(message) { stats in
            stats.delivered += 1
            if plaintext != nil { stats.decrypted += 1 }
        }
        return .success(
            MockResponse(
                status: 201,
                headers: [
                    HTTP2Header("location", "https://\(request.authority)/m/\(messageID)"),
                    HTTP2Header("ttl", String(headers.ttl)),
                ]))
    }

    /// The plaintext, or 400 `DecryptionFailed` saying why. A real push service cannot do this: it
    /// never holds the browser's private key.
    private func decrypt(_ body: [UInt8], id: String) -> Result<[UInt8], WebPushRefusal> {
        let keys: SubscriptionKeys
        do {
            keys = try self.keys.keys(for: id)
        } catch {
            return .failure(WebPushRefusal(.internalError, "Cannot derive the subscription's keys: \(error)"))
        }
        do {
            return .success(try WebPushDecryption.decrypt(body, receiver: keys.receiver, authSecret: keys.authSecret))
        } catch {
            return .failure(
                WebPushRefusal(
                    .decryptionFailed, "The body does not decrypt with the subscription's keys (aes128gcm): \(error)"))
        }
    }

    /// The origin a VAPID `aud` must name: `https://` + the authority, without the default port.
    static func origin(_ authority: String) -> String {
        "https://" + (authority.hasSuffix(":443") ? String(authority.dropLast(4)) : authority)
    }
}

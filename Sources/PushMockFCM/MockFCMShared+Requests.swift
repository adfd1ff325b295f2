import PushCore
import PushCredentials
import PushHTTP2
import PushMockSupport
import PushTLS

extension MockResponse {
    /// An FCM API error, with `Retry-After` when it is a retryable one and the mock sends it.
    static func fcm(_ error: FCMErrorResponse, retryAfter: Int?) -> Self {
        json(error.httpStatus, error.body, statsError: error.statsKey).retryingAfter(error.retryable ? retryAfter : nil)
    }
}

extension MockFCMShared {
    static let jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// Routes and answers one request. `now` is the loop's monotonic clock.
    func handle(_ request: MockRequest, now: UInt64) -> MockResponse {
        let path = request.route
        if path == configuration.tokenPath { return exchangeToken(request, now: now) }
        if path.hasPrefix(sendPrefix), path.hasSuffix(sendSuffix), request.method == "POST",
            path.count > sendPrefix.count + sendSuffix.count
        {
            return send(request, project: String(path.dropFirst(sendPrefix.count).dropLast(sendSuffix.count)), now: now)
        }
        return .fcm(.notFound, retryAfter: nil)
    }

    // MARK: Token endpoint

    private func exchangeToken(_ request: MockRequest, now: UInt64) -> MockResponse {
        stats.update { $0.tokenRequests += 1 }
        let form: [(name: String, value: String)]
        switch request.oauthForm(grantType: Self.jwtBearerGrant, maxBodyBytes: configuration.maxBodyBytes) {
        case .failure(let refusal): return refusal
        case .success(let valid): form = valid
        }
        guard let assertion = FormURLEncoding.value("assertion", in: form) else {
            return .oauth(400, error: "invalid_request", "Missing required parameter: assertion")
        }
        let claims: OAuthAssertion.Claims
        switch OAuthAssertion.verify(assertion, verifier: configuration.assertionVerifier, now: wallClockSeconds()) {
        case .failure(let error): return .oauth(400, error: "invalid_grant", error.description)
        case .success(let verified): claims = verified
        }
        guard claims.issuer == configuration.clientEmail else {
            return .oauth(400, error: "invalid_grant", "Invalid grant: account not found")
        }
        let addressed = "https://\(request.authority)\(configuration.tokenPath)"
        guard claims.audience == addressed || configuration.extraAudiences.contains(claims.audience) else {
            return .oauth(
                400, error: "invalid_grant",
                "Invalid JWT: Failed audience check. The right audience is \(addressed)")
        }
        guard claims.scopes.contains(where: configuration.acceptedScopes.contains) else {
            // Google refuses an assertion whose scopes it cannot grant with invalid_scope.
            return .oauth(
                400, error: "invalid_scope",
                "Invalid OAuth scope or ID token audience provided: \(OAuthAssertion.firebaseMessagingScope) is required."
            )
        }
        let answer = accessTokens.grant(lifetime: configuration.accessTokenLifetime, now: now, tokenType: "Bearer")
        if answer.status == 200 { stats.update { $0.tokensIssued += 1 } }
        return answer
    }

    // MARK: messages:send

    private func send(_ request: MockRequest, project: String, now: UInt64) -> MockResponse {
        stats.update { $0.sendRequests += 1 }
        let retryAfter = configuration.retryAfterSeconds
        guard accessTokens.authorizes(request, now: now) else { return .fcm(.unauthenticated, retryAfter: nil) }
        guard project == configuration.projectID else {
            return .fcm(.permissionDenied(project: project), retryAfter: nil)
        }
        guard request.bodyLength <= configuration.maxBodyBytes else {
            return .fcm(.invalidArgument(field: "message", "Message is too big"), retryAfter: nil)
        }
        let send: FCMSendValidator.Send
        switch FCMSendValidator.validate(request.body) {
        case .failure(let error): return .fcm(error, retryAfter: nil)
        case .success(let valid): send = valid
        }
        if let fault = faults.next() { return .fcm(fault, retryAfter: retryAfter) }
        let (kind, target): (String, String)
        switch send.target {
        case .token(let token):
            if let refusal = configuration.tokenRule(token) { return .fcm(refusal, retryAfter: nil) }
            (kind, target) = ("token", token)
        case .fid(let fid):
            // The token rules (unregistered, invalid, …) hold for installation ids as for tokens.
            if let refusal = configuration.tokenRule(fid) { return .fcm(refusal, retryAfter: nil) }
            (kind, target) = ("fid", fid)
        case .topic(let topic): (kind, target) = ("topic", topic)
        case .condition(let condition): (kind, target) = ("condition", condition)
        }
        // FCM answers a dry run with this fixed id.
        let name = "projects/\(project)/messages/" + (send.validateOnly ? "fake_message_id" : nextMessageID())
        accepted(
            MockFCMMessage(
                connectionID: request.connectionID, streamID: request.streamID, targetKind: kind, target: target,
                validateOnly: send.validateOnly, body: request.body, name: name))
        var writer = JSONWriter(reservingCapacity: 96)
        writer.beginObject()
        writer.key("name")
        writer.string(name)
        writer.endObject()
        return .json(200, writer.bytes)
    }

    /// Counts and records an accepted send.
    private func accepted(_ message: MockFCMMessage) {
        let tokenLimit = configuration.maxTrackedTokens
        stats.record(message) { stats in
            if message.validateOnly {
                stats.validatedOnly += 1
                return
            }
            stats.delivered += 1
            if message.targetKind == "token" { stats.tokenTally.add(message.target, limit: tokenLimit) }
        }
    }
}

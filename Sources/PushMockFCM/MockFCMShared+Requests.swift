import PushCore
import PushHTTP2
import PushMockSupport
import PushTLS

/// One request as a connection hands it over: the headers the mock reads and the body.
struct MockFCMRequest {
    var method = ""
    var path = ""
    var authority = ""
    var contentType = ""
    var authorization: String?
    /// The first `maxBodyBytes + 1` bytes; `bodyLength` counts all of them.
    var body: [UInt8] = []
    var bodyLength = 0
    var connectionID = 0
    var streamID: Int32 = 0
}

/// An answer: status, headers (after `:status`), body; `statsError` is what stats count it as.
struct MockFCMResponse {
    var status: Int
    var headers: [HTTP2Header] = []
    var body: [UInt8] = []
    var statsError: String?

    static let jsonContentType = HTTP2Header("content-type", "application/json; charset=UTF-8")

    static func json(_ status: Int, _ body: [UInt8], statsError: String? = nil) -> Self {
        MockFCMResponse(status: status, headers: [jsonContentType], body: body, statsError: statsError)
    }

    /// An FCM API error, with `Retry-After` when it is a retryable one and the mock sends it.
    static func fcm(_ error: FCMErrorResponse, retryAfter: Int?) -> Self {
        var response = json(error.httpStatus, error.body, statsError: error.statsKey)
        if error.retryable, let retryAfter { response.headers.append(HTTP2Header("retry-after", String(retryAfter))) }
        return response
    }

    /// A token-endpoint error as Google's OAuth2 server writes it.
    static func oauth(_ status: Int, error: String, _ description: String) -> Self {
        var writer = JSONWriter(reservingCapacity: 128)
        writer.beginObject()
        writer.key("error")
        writer.string(error)
        writer.key("error_description")
        writer.string(description)
        writer.endObject()
        return json(status, writer.bytes, statsError: error)
    }
}

extension MockFCMShared {
    static let jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// Routes and answers one request, and counts it. `now` is the loop's monotonic clock.
    func handle(_ request: MockFCMRequest, now: UInt64) -> MockFCMResponse {
        let path = request.path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let response: MockFCMResponse
        if path == configuration.tokenPath {
            response = exchangeToken(request, now: now)
        } else if path.hasPrefix(sendPrefix), path.hasSuffix(sendSuffix), request.method == "POST",
            path.count > sendPrefix.count + sendSuffix.count
        {
            let project = String(path.dropFirst(sendPrefix.count).dropLast(sendSuffix.count))
            response = send(request, project: project, now: now)
        } else {
            response = .fcm(.notFound, retryAfter: nil)
        }
        stats.answered(status: response.status, error: response.statsError)
        return response
    }

    // MARK: Token endpoint

    private func exchangeToken(_ request: MockFCMRequest, now: UInt64) -> MockFCMResponse {
        stats.update { $0.tokenRequests += 1 }
        guard request.method == "POST" else {
            return .oauth(405, error: "invalid_request", "The token endpoint only accepts POST.")
        }
        guard request.contentType.lowercased().hasPrefix("application/x-www-form-urlencoded") else {
            return .oauth(400, error: "invalid_request", "Content-Type must be application/x-www-form-urlencoded.")
        }
        guard request.bodyLength <= configuration.maxBodyBytes, let form = FormURLEncoding.decode(request.body) else {
            return .oauth(400, error: "invalid_request", "The request body is not a valid form.")
        }
        guard let grantType = FormURLEncoding.value("grant_type", in: form) else {
            return .oauth(400, error: "invalid_request", "Missing required parameter: grant_type")
        }
        guard grantType == Self.jwtBearerGrant else {
            return .oauth(400, error: "unsupported_grant_type", "Invalid grant_type: \(grantType)")
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
                "Invalid OAuth scope or ID token audience provided: \(OAuthAssertion.firebaseMessagingScope) is required.")
        }
        let lifetime = max(1, configuration.accessTokenLifetime)
        let token: String
        do {
            token = try accessTokens.issue(expiresAt: now &+ UInt64(lifetime) &* 1_000_000_000, now: now)
        } catch {
            return .oauth(500, error: "internal_failure", "Could not make a token: \(error)")
        }
        stats.update { $0.tokensIssued += 1 }
        var writer = JSONWriter(reservingCapacity: 128)
        writer.beginObject()
        writer.key("access_token")
        writer.string(token)
        writer.key("expires_in")
        writer.int(lifetime)
        writer.key("token_type")
        writer.string("Bearer")
        writer.endObject()
        return .json(200, writer.bytes)
    }

    // MARK: messages:send

    private func send(_ request: MockFCMRequest, project: String, now: UInt64) -> MockFCMResponse {
        stats.update { $0.sendRequests += 1 }
        let retryAfter = configuration.retryAfterSeconds
        guard let authorization = request.authorization, authorization.count > 7,
            authorization.prefix(7).lowercased() == "bearer ",
            accessTokens.isValid(authorization.dropFirst(7), now: now)
        else { return .fcm(.unauthenticated, retryAfter: nil) }
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
        if let fault = nextFault() { return .fcm(fault, retryAfter: retryAfter) }
        let (kind, target): (String, String)
        switch send.target {
        case .token(let token):
            if let refusal = configuration.tokenRule(token) { return .fcm(refusal, retryAfter: nil) }
            (kind, target) = ("token", token)
        case .topic(let topic): (kind, target) = ("topic", topic)
        case .condition(let condition): (kind, target) = ("condition", condition)
        }
        // FCM answers a dry run with this fixed id.
        let name = "projects/\(project)/messages/" + (send.validateOnly ? "fake_message_id" : nextMessageID())
        stats.accepted(
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
}

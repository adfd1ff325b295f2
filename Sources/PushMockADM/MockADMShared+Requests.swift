import PushCore
import PushCredentials
import PushHTTP2
import PushMockSupport
import PushTLS

extension MockADMShared {
    static let clientCredentialsGrant = "client_credentials"
    static let typeVersion = "com.amazon.device.messaging.ADMMessage@1.0"
    static let acceptType = "com.amazon.device.messaging.ADMSendResult@1.0"
    static let sendPrefix = "/messaging/registrations/"
    static let sendSuffix = "/messages"

    /// Routes and answers one request. `now` is the loop's monotonic clock.
    func handle(_ request: MockRequest, now: UInt64) -> MockResponse {
        let path = request.route
        if equalsIgnoringASCIICase(path.utf8, configuration.tokenPath.utf8) {
            // Amazon's JSON type on every token answer, the OAuth2 errors included.
            var answer = exchangeToken(request, now: now)
            answer.headers = [HTTP2Header("content-type", MockResponse.admJSON)]
            return answer
        }
        if let registrationID = Self.registrationSegment(of: path) {
            let requestID = nextRequestID()
            var response = send(request, registrationID: registrationID, requestID: requestID, now: now)
            response.headers.append(HTTP2Header("x-amzn-requestid", requestID))
            return response
        }
        return .adm(.notFound, retryAfter: nil)
    }

    /// The `{registrationId}` of `/messaging/registrations/{registrationId}/messages` (still
    /// percent-encoded), nil for any other path.
    ///
    /// On UTF-8 bytes: Character-wise `hasPrefix`, `count` and `dropFirst` on a 700-byte id were
    /// most of the mock's time per request (perf).
    static func registrationSegment(of path: Substring) -> Substring? {
        let bytes = path.utf8
        let prefix = sendPrefix.utf8.count
        let suffix = sendSuffix.utf8.count
        guard bytes.count > prefix + suffix, bytes.starts(with: sendPrefix.utf8),
            bytes.suffix(suffix).elementsEqual(sendSuffix.utf8)
        else { return nil }
        let segment = path[
            bytes.index(bytes.startIndex, offsetBy: prefix)..<bytes.index(bytes.endIndex, offsetBy: -suffix)]
        return segment.utf8.contains(UInt8(ascii: "/")) ? nil : segment
    }

    // MARK: Token endpoint (Login with Amazon)

    private func exchangeToken(_ request: MockRequest, now: UInt64) -> MockResponse {
        stats.update { $0.tokenRequests += 1 }
        let form: [(name: String, value: String)]
        switch request.oauthForm(grantType: Self.clientCredentialsGrant, maxBodyBytes: configuration.maxBodyBytes) {
        case .failure(let refusal): return refusal
        case .success(let valid): form = valid
        }
        for name in ["client_id", "client_secret"] where FormURLEncoding.value(name, in: form) == nil {
            return .oauth(400, error: "invalid_request", "Missing required parameter: \(name)")
        }
        guard FormURLEncoding.value("client_id", in: form) == configuration.credentials.clientID,
            FormURLEncoding.value("client_secret", in: form) == configuration.credentials.clientSecret
        else {
            // RFC 6749 §5.2 allows 401 for a failed client authentication.
            return .oauth(401, error: "invalid_client", "Client authentication failed")
        }
        guard let scope = FormURLEncoding.value("scope", in: form) else {
            return .oauth(400, error: "invalid_request", "Missing required parameter: scope")
        }
        guard scope.split(separator: " ").contains(Substring(configuration.scope)) else {
            return .oauth(
                400, error: "invalid_scope",
                "An unknown scope was requested: \(scope) (this client may request \(configuration.scope))")
        }
        let answer = accessTokens.grant(
            lifetime: configuration.accessTokenLifetime, now: now, tokenType: "bearer", scope: configuration.scope)
        if answer.status == 200 { stats.update { $0.tokensIssued += 1 } }
        return answer
    }

    // MARK: Sends

    private func send(
        _ request: MockRequest, registrationID encoded: Substring, requestID: String, now: UInt64
    ) -> MockResponse {
        stats.update { $0.sendRequests += 1 }
        let retryAfter = configuration.retryAfterSeconds
        guard request.method == "POST" else { return .adm(.notFound, retryAfter: nil) }
        guard accessTokens.authorizes(request, now: now) else { return .adm(.accessTokenExpired, retryAfter: nil) }
        guard request.headers["x-amzn-type-version"] == Self.typeVersion else {
            return .adm(.invalidTypeVersion, retryAfter: nil)
        }
        guard request.headers["x-amzn-accept-type"] == Self.acceptType else {
            return .adm(.invalidAcceptType, retryAfter: nil)
        }
        guard let registrationID = FormURLEncoding.decodePathSegment(encoded), !registrationID.isEmpty else {
            return .adm(.invalidRegistrationId, retryAfter: nil)
        }
        guard request.bodyLength <= ADMSendValidator.maxBodyBytes else {
            return .adm(.messageTooLarge, retryAfter: nil)
        }
        if let reason = ADMSendValidator.validate(request.body) { return .adm(reason, retryAfter: nil) }
        if let fault = faults.next() { return .adm(fault, retryAfter: retryAfter) }
        let answered: String
        switch configuration.registrationRule(registrationID) {
        case .failure(let reason): return .adm(reason, retryAfter: nil)
        case .success(let id): answered = id
        }
        let message = MockADMMessage(
            connectionID: request.connectionID, streamID: request.streamID, registrationID: registrationID,
            answeredRegistrationID: answered, requestID: requestID, body: request.body)
        stats.record(message) { stats in
            stats.delivered += 1
            if message.isCanonical { stats.canonicalIDs += 1 }
        }
        var writer = JSONWriter(reservingCapacity: answered.utf8.count + 24)
        writer.beginObject()
        writer.key("registrationID")
        writer.string(answered)
        writer.endObject()
        return .json(200, writer.bytes, contentType: MockResponse.admJSON)
    }
}

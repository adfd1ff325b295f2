import PushCore
import PushCredentials
import PushHTTP2
import PushMockSupport
import PushSync
import PushTLS

extension MockHMSShared {
    static let clientCredentialsGrant = "client_credentials"
    static let sendSuffix = "/messages:send"

    /// Routes and answers one request. `now` is the loop's monotonic clock.
    func handle(_ request: MockRequest, now: UInt64) -> MockResponse {
        let path = request.route
        if path == configuration.tokenPath { return exchangeToken(request, now: now) }
        if let (api, id) = Self.sendTarget(of: path), request.method == "POST" {
            let requestID = nextRequestID()
            return api == "v3"
                ? sendV3(request, projectID: id, requestID: requestID)
                : sendV1(request, appID: id, requestID: requestID, now: now)
        }
        return .hmsBare(404, statsError: "NotFound")
    }

    /// `("v3", projectId)` or `("v1", appId)` for `/v3/{projectId}/messages:send` and
    /// `/v1/{appId}/messages:send`, nil for any other path. On UTF-8 bytes (a Character-wise
    /// walk costs grapheme breaking per request).
    static func sendTarget(of path: Substring) -> (api: String, id: Substring)? {
        let bytes = path.utf8
        let prefix = 4  // "/v3/" or "/v1/"
        let suffix = sendSuffix.utf8.count
        guard bytes.count > prefix + suffix, bytes.suffix(suffix).elementsEqual(sendSuffix.utf8) else { return nil }
        let api: String
        if bytes.starts(with: "/v3/".utf8) {
            api = "v3"
        } else if bytes.starts(with: "/v1/".utf8) {
            api = "v1"
        } else {
            return nil
        }
        let id = path[bytes.index(bytes.startIndex, offsetBy: prefix)..<bytes.index(bytes.endIndex, offsetBy: -suffix)]
        return id.utf8.contains(UInt8(ascii: "/")) ? nil : (api, id)
    }

    // MARK: Token endpoint (OAuth 2.0 client credentials)

    private func exchangeToken(_ request: MockRequest, now: UInt64) -> MockResponse {
        stats.update { $0.tokenRequests += 1 }
        let form: [(name: String, value: String)]
        switch request.oauthForm(grantType: Self.clientCredentialsGrant, maxBodyBytes: configuration.maxBodyBytes) {
        case .failure(let refusal): return refusal
        case .success(let valid): form = valid
        }
        // Huawei's sub-errors (Account Kit's server error codes): 20002 a client_id not of digits,
        // 20003 an unknown client_id, 20171 an empty secret, 12304 a secret that does not match.
        guard let clientID = FormURLEncoding.value("client_id", in: form), !clientID.isEmpty, clientID.utf8.count <= 64,
            clientID.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return .huaweiOAuth(400, subError: 20002, "the value of client_id is in an invalid format") }
        guard clientID == configuration.appID else {
            return .huaweiOAuth(400, subError: 20003, "the client_id does not exist")
        }
        guard let secret = FormURLEncoding.value("client_secret", in: form), !secret.isEmpty else {
            return .huaweiOAuth(400, subError: 20171, "the client_secret is empty")
        }
        guard secret == configuration.clientSecret else {
            return .huaweiOAuth(400, subError: 12304, "the client_secret is wrong or does not match the client_id")
        }
        var answer = accessTokens.grant(lifetime: configuration.accessTokenLifetime, now: now, tokenType: "Bearer")
        if answer.status == 200 { stats.update { $0.tokensIssued += 1 } }
        answer.headers = [HTTP2Header("content-type", MockResponse.hmsJSON)]
        return answer
    }

    // MARK: Sends

    private func sendV3(_ request: MockRequest, projectID: Substring, requestID: String) -> MockResponse {
        stats.update { $0.v3Sends += 1 }
        guard let jwt = request.bearerToken else { return .hms(.authenticationError, requestID: requestID) }
        if let refusal = jwts.refusal(jwt, now: wallClockSeconds()) { return .hms(refusal, requestID: requestID) }
        // 80200001 names a project other than the JWT's among its causes (H-resp).
        guard projectID == configuration.serviceAccount.projectID else {
            return .hms(.authenticationError, requestID: requestID)
        }
        guard let header = request.headers["push-type"], let pushType = Int(header),
            HMSSendValidator.pushTypes.contains(pushType)
        else { return .hms(.parameterError, msg: "Check Parameter Error. push-type", requestID: requestID) }
        let send: HMSSend
        switch validated("v3", request, pushType: pushType) {
        case .failure(let refusal): return .hms(refusal.code, msg: refusal.msg, requestID: requestID)
        case .success(let valid): send = valid
        }
        return answer(request, send, api: "v3", pushType: pushType, requestID: requestID)
    }

    private func sendV1(_ request: MockRequest, appID: Substring, requestID: String, now: UInt64) -> MockResponse {
        stats.update { $0.v1Sends += 1 }
        guard let token = request.bearerToken else { return .hms(.authenticationError, requestID: requestID) }
        guard accessTokens.isValid(token, now: now) else {
            // A token this mock issued that is no longer valid has expired (or was revoked); any
            // other is not one of this app's.
            let issuedHere = token.utf8.starts(with: Self.accessTokenPrefix.utf8)
            return .hms(issuedHere ? .accessTokenExpired : .authenticationError, requestID: requestID)
        }
        // An access token of app A used for app B: 80200001 (Huawei's FAQ).
        guard appID == configuration.appID else { return .hms(.authenticationError, requestID: requestID) }
        let send: HMSSend
        switch validated("v1", request, pushType: -1) {
        case .failure(let refusal): return .hms(refusal.code, msg: refusal.msg, requestID: requestID)
        case .success(let valid): send = valid
        }
        return answer(request, send, api: "v1", pushType: nil, requestID: requestID)
    }

    /// The body's send, from the last valid body of `api` when this one is the same bytes.
    private func validated(_ api: String, _ request: MockRequest, pushType: Int) -> Result<HMSSend, HMSRefusal> {
        guard request.bodyLength <= configuration.maxBodyBytes else { return .failure(HMSRefusal(.messageTooLong)) }
        if let last = lastValid.withLock({ $0[api] }), last.pushType == pushType {
            if last.body == request.body { return .success(last.send) }
            if let send = last.send(ofSameBodyWithAnotherToken: request.body) { return .success(send) }
        }
        let result =
            api == "v3"
            ? HMSSendValidator.validateV3(request.body, bodyLength: request.bodyLength, pushType: pushType)
            : HMSSendValidator.validateV1(request.body, bodyLength: request.bodyLength)
        if case .success(let send) = result {
            lastValid.withLock { $0[api] = MockHMSValidBody(body: request.body, pushType: pushType, send: send) }
        }
        return result
    }

    /// A valid send: faults, then the token rules, then 80000000 / 80100000 / 80300007.
    private func answer(
        _ request: MockRequest, _ send: HMSSend, api: String, pushType: Int?, requestID: String
    ) -> MockResponse {
        switch faults.next() {
        case .innerError?: return .hms(.innerError, requestID: requestID)
        case .flowControl?:
            return MockResponse.hmsBare(503, statsError: "FlowControl").retryingAfter(
                configuration.retryAfterSeconds)
        case nil: break
        }
        var delivered = send.tokens
        var failed: [String] = []
        if configuration.hasTokenRules {
            delivered = []
            for token in send.tokens {
                if configuration.isBad(token) { failed.append(token) } else { delivered.append(token) }
            }
        }
        if !failed.isEmpty { stats.update { $0.tokensRefused += failed.count } }
        if delivered.isEmpty, !failed.isEmpty {
            // v1's msg is Huawei's sentence; v3's names the tokens by reason (the notes, 1.5).
            let msg = api == "v3" ? failureList(api, failed, succeeded: nil) : HMSCode.allTokensInvalid.message
            return .hms(.allTokensInvalid, msg: msg, requestID: requestID, status: configuration.allInvalidStatus)
        }
        let message = MockHMSMessage(
            api: api, connectionID: request.connectionID, streamID: request.streamID, pushType: pushType,
            deliveredTokens: delivered, failedTokens: failed, validateOnly: send.validateOnly, requestID: requestID,
            body: request.body)
        let tokenLimit = configuration.maxTrackedTokens
        stats.record(message) { stats in
            if message.validateOnly {
                stats.validatedOnly += 1
                return
            }
            stats.accepted += 1
            if !message.failedTokens.isEmpty { stats.partialSuccesses += 1 }
            stats.tokensDelivered += message.deliveredTokens.count
            for token in message.deliveredTokens { stats.tokenTally.add(token, limit: tokenLimit) }
        }
        guard failed.isEmpty else {
            return .hms(
                .partialSuccess, msg: failureList(api, failed, succeeded: delivered.count), requestID: requestID)
        }
        return .hms(.success, requestID: requestID)
    }

    /// The JSON text of a partial or total failure's `msg`: v3 `{"success":N,"failure":M,
    /// "illegalTokens":{"<reason>":[…]}}` (no `success` when all failed), v1 `{"success":N,
    /// "failure":M,"illegal_tokens":[…]}`.
    private func failureList(_ api: String, _ failed: [String], succeeded: Int?) -> String {
        var writer = JSONWriter(reservingCapacity: 64 + failed.reduce(0) { $0 + $1.utf8.count + 3 })
        writer.beginObject()
        if let succeeded {
            writer.key("success")
            writer.int(succeeded)
        }
        writer.key("failure")
        writer.int(failed.count)
        if api == "v3" {
            writer.key("illegalTokens")
            writer.beginObject()
            writer.key(configuration.badTokenReason)
            writer.stringArray(failed)
            writer.endObject()
        } else {
            writer.key("illegal_tokens")
            writer.stringArray(failed)
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

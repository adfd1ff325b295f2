/// Decides what a Push Kit answer means for its (one-token) request (docs/providers.md, Huawei H.5).
///
/// Huawei answers `{"code":"<business code>","msg":"…","requestId":"…"}`; the code decides first
/// (which HTTP status comes with which code is not documented), then the status:
///
/// | Code (else HTTP status)                                       | Outcome                                       |
/// |---------------------------------------------------------------|-----------------------------------------------|
/// | `80000000`, or 2xx without a code                             | delivered (id: `requestId`)                   |
/// | `80300007` all tokens invalid, `80100000` partial success: `msg` listing the token under `tokenFormatError`, `tokenPlatformNotSupport` or `noRight` (v3's JSON), or v2's plain "All the tokens are invalid" | rejected, invalidates the token |
/// | the same codes for another reason (`noPushTypeRight`, `appinfoError`, `countryNotSupport`, a penalty…: not the token's fault) | rejected, the token kept |
/// | `80200001`, `80200003`, `80200005` (credential refused or expired) | unauthenticated: renew it once, send again |
/// | `81000001` internal error, `80300029` test-message limit, `80100017` | transient                     |
/// | any other code                                                | rejected (the message, not the token)         |
/// | HTTP 401                                                      | unauthenticated                               |
/// | HTTP 429, 5xx (503 is Huawei's flow control)                  | transient, with `Retry-After` if given        |
/// | other                                                         | rejected                                      |
///
/// The reason is the code and Huawei's message (`80300007 All the tokens are invalid`), capped.
public enum HMSResponseClassifier {
    public static let success = "80000000"
    public static let allTokensInvalid = "80300007"
    public static let partialSuccess = "80100000"
    public static let credentialCodes: Set<String> = ["80200001", "80200003", "80200005"]
    public static let transientCodes: Set<String> = ["81000001", "80300029", "80100017"]
    /// The per-token reasons of a partial success after which the token is dead (for this app).
    public static let deadTokenReasons = ["tokenFormatError", "tokenPlatformNotSupport", "noRight"]
    static let maxReasonBytes = 200

    public static func outcome(status: Int, body: [UInt8], retryAfter: String?, now: Int64) -> ClassifiedAnswer {
        let document = try? JSONParser.parse(body)
        let code = document.flatMap { stringOrNumber($0["code"]) }
        let message =
            document.flatMap { value -> String? in
                if case .string(let text) = value["msg"] { return text }
                return nil
            } ?? ""
        if (200..<300).contains(status), code == nil || code == success {
            var id = ""
            if let document, case .string(let requestID) = document["requestId"] { id = requestID }
            return .delivered(id: id)
        }
        let reason = code.map { reasonText($0, message) } ?? "HTTP \(status)"
        let transient = ClassifiedAnswer.transient(
            reason: reason, httpStatus: status, retryAfter: RetryAfter.parse(retryAfter, now: now))
        if let code {
            switch code {
            case success: return .delivered(id: "")
            case allTokensInvalid, partialSuccess:
                return .rejected(
                    reason: reason, httpStatus: status,
                    invalidatesToken: tokenIsDead(message: message, allInvalid: code == allTokensInvalid))
            case let known where credentialCodes.contains(known):
                return .unauthenticated(reason: reason, httpStatus: status)
            case let known where transientCodes.contains(known):
                return transient
            default:
                if status == 503 || status == 502 { return transient }
                return .rejected(reason: reason, httpStatus: status, invalidatesToken: false)
            }
        }
        switch status {
        case 401: return .unauthenticated(reason: reason, httpStatus: status)
        case 429, 500...599: return transient
        default: return .rejected(reason: reason, httpStatus: status, invalidatesToken: false)
        }
    }

    /// Whether the failed token is dead: v3 lists it under reasons (`{"illegalTokens":{"noRight":[…]}}`,
    /// or an array of objects), dead only under ``deadTokenReasons`` exactly; v2 says only "All the
    /// tokens are invalid" (dead, for `80300007`).
    static func tokenIsDead(message: String, allInvalid: Bool) -> Bool {
        guard let document = try? JSONParser.parse(message.utf8), let illegal = document["illegalTokens"] else {
            return allInvalid
        }
        switch illegal {
        case .object(let reasons): return reasons.contains { deadTokenReasons.contains($0.0) }
        default: return false
        }
    }

    private static func stringOrNumber(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text.isEmpty ? nil : text
        case .number(let text)?: text
        default: nil
        }
    }

    private static func reasonText(_ code: String, _ message: String) -> String {
        let text = message.isEmpty ? code : code + " " + message
        guard text.utf8.count > maxReasonBytes else { return text }
        return String(decoding: text.utf8.prefix(maxReasonBytes), as: UTF8.self)
    }
}

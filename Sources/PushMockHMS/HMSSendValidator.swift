import PushCore

/// What a valid send asks for, once its body checked out.
struct HMSSend: Sendable {
    /// The push tokens (empty for a v1 topic or condition send).
    var tokens: [String]
    /// v1 `validate_only`: checked, answered, not delivered.
    var validateOnly = false
    /// v3 `pushOptions.testMessage`.
    var testMessage = false
    /// v1: `token`, `topic` or `condition`; v3: `token`.
    var targetKind = "token"
}

/// A refusal of a send body: the code and, for some codes, Huawei's `{errorTips}` in `msg`.
struct HMSRefusal: Error, Sendable {
    let code: HMSCode
    let msg: String?

    init(_ code: HMSCode, _ msg: String? = nil) {
        self.code = code
        self.msg = msg
    }

    /// 80100003 "Illegal payload, <tips>".
    static func payload(_ tips: String) -> Self { HMSRefusal(.illegalPayload, "Illegal payload, \(tips)") }
}

/// Checks send bodies as far as Huawei's pages document them (docs/notes/hms-push-kit.md 1.4, 2.2):
/// shape, the push-type's payload, 1–1000 tokens, 4096 bytes not counting the tokens. Members the
/// pages do not list are let through.
enum HMSSendValidator {
    /// "The message body, Push Tokens not counted, at most 4096 bytes."
    static let maxBodyBytes = 4096
    static let maxTokens = 1000
    static let maxTestMessageTokens = 10
    /// `push-type` values v3 documents: alert, widget, extension/voice, background, Live View, VoIP.
    static let pushTypes: Set<Int> = [0, 1, 2, 6, 7, 10]
    /// `notification.category` values (PLAY_VOICE is push-type 2's).
    static let categories: Set<String> = [
        "IM", "VOIP", "MISS_CALL", "SUBSCRIPTION", "TRAVEL", "HEALTH", "WORK", "ACCOUNT", "EXPRESS", "FINANCE",
        "DEVICE_REMINDER", "MAIL", "PLAY_VOICE", "MARKETING",
    ]

    /// A v3 body (`{"payload":{…},"target":{"token":[…]},"pushOptions":{…}}`) for `pushType`.
    static func validateV3(_ body: [UInt8], bodyLength: Int, pushType: Int) -> Result<HMSSend, HMSRefusal> {
        guard let document = try? JSONParser.parse(body), document.objectMembers != nil else {
            return .failure(HMSRefusal(.parameterError))
        }
        guard let payload = document["payload"], payload.objectMembers != nil else {
            return .failure(.payload("payload is required and must be an object"))
        }
        guard let target = document["target"], target.objectMembers != nil, case .array(let list)? = target["token"]
        else { return .failure(HMSRefusal(.tokenCount)) }
        let tokens: [String]
        switch strings(list) {
        case nil: return .failure(HMSRefusal(.parameterError))
        case let found?: tokens = found
        }
        var send = HMSSend(tokens: tokens)
        if let options = document["pushOptions"] {
            guard options.objectMembers != nil else { return .failure(HMSRefusal(.parameterError)) }
            if let test = options["testMessage"] {
                guard case .bool(let flag) = test else { return .failure(HMSRefusal(.parameterError)) }
                send.testMessage = flag
            }
            if let ttl = options["ttl"] {
                guard case .number(let text) = ttl, let seconds = Int(text), (0...1_296_000).contains(seconds) else {
                    return .failure(HMSRefusal(.parameterError))
                }
            }
        }
        if let refusal = payloadRefusal(payload, pushType: pushType) { return .failure(refusal) }
        if let refusal = countAndSize(tokens, bodyLength: bodyLength) { return .failure(refusal) }
        if send.testMessage, tokens.count > maxTestMessageTokens {
            return .failure(HMSRefusal(.testMessageTokenCount))
        }
        return .success(send)
    }

    /// v3: what the push-type's payload must hold (alert: a notification with category, title,
    /// body and clickAction; background: an `extraData` string).
    private static func payloadRefusal(_ payload: JSONValue, pushType: Int) -> HMSRefusal? {
        switch pushType {
        case 0:
            guard let notification = payload["notification"], notification.objectMembers != nil else {
                return .payload("notification is required for push-type 0")
            }
            guard case .string(let category)? = notification["category"], categories.contains(category) else {
                return .payload("notification.category is missing or unknown")
            }
            for name in ["title", "body"] {
                guard case .string? = notification[name] else { return .payload("notification.\(name) is required") }
            }
            guard let click = notification["clickAction"], case .number? = click["actionType"] else {
                return .payload("notification.clickAction.actionType is required")
            }
            return nil
        case 6:
            guard case .string? = payload["extraData"] else { return .payload("extraData is required for push-type 6") }
            return nil
        default:
            return nil
        }
    }

    /// A v1 body (`{"validate_only":false,"message":{"token":[…],…}}`).
    static func validateV1(_ body: [UInt8], bodyLength: Int) -> Result<HMSSend, HMSRefusal> {
        guard let document = try? JSONParser.parse(body), document.objectMembers != nil else {
            return .failure(HMSRefusal(.parameterError))
        }
        var send = HMSSend(tokens: [])
        if let validateOnly = document["validate_only"] {
            guard case .bool(let flag) = validateOnly else { return .failure(HMSRefusal(.parameterError)) }
            send.validateOnly = flag
        }
        // Huawei's FAQ: a misspelt `message` or a misplaced `token` is 80300010.
        guard let message = document["message"], message.objectMembers != nil else {
            return .failure(HMSRefusal(.tokenCount))
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1 else {
            return .failure(HMSRefusal(targets.isEmpty ? .tokenCount : .parameterError))
        }
        send.targetKind = targets[0]
        switch (send.targetKind, message[send.targetKind]) {
        case ("token", .array(let list)?):
            guard let tokens = strings(list) else { return .failure(HMSRefusal(.parameterError)) }
            send.tokens = tokens
        case ("token", _): return .failure(HMSRefusal(.tokenCount))
        case (_, .string?): break
        default: return .failure(HMSRefusal(.parameterError))
        }
        if let data = message["data"] {
            guard case .string = data else { return .failure(.payload("message.data must be a string")) }
        }
        for name in ["notification", "android"] {
            if let member = message[name], member.objectMembers == nil {
                return .failure(.payload("message.\(name) must be an object"))
            }
        }
        if let notification = message["android"]?["notification"] {
            guard notification.objectMembers != nil, let click = notification["click_action"],
                case .number(let type)? = click["type"], ["1", "2", "3", "4"].contains(type)
            else { return .failure(.payload("android.notification.click_action.type must be 1 to 4")) }
        }
        if send.targetKind == "token" {
            if let refusal = countAndSize(send.tokens, bodyLength: bodyLength) { return .failure(refusal) }
        } else if bodyLength > maxBodyBytes {
            return .failure(HMSRefusal(.messageTooLong))
        }
        return .success(send)
    }

    /// 1–1000 tokens, and at most 4096 bytes once the token list's own bytes (each token, its quotes
    /// and the commas between them) are taken away.
    private static func countAndSize(_ tokens: [String], bodyLength: Int) -> HMSRefusal? {
        guard (1...maxTokens).contains(tokens.count) else { return HMSRefusal(.tokenCount) }
        let tokenBytes = tokens.reduce(tokens.count - 1) { $0 + $1.utf8.count + 2 }
        return bodyLength - tokenBytes > maxBodyBytes ? HMSRefusal(.messageTooLong) : nil
    }

    /// The strings of a JSON array, nil if one element is not a string (or is empty).
    private static func strings(_ list: [JSONValue]) -> [String]? {
        var out: [String] = []
        out.reserveCapacity(list.count)
        for element in list {
            guard case .string(let text) = element, !text.isEmpty else { return nil }
            out.append(text)
        }
        return out
    }
}

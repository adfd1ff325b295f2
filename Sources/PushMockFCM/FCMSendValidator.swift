import PushCore

/// Checks a `messages:send` body the way FCM does, as far as the mock models it (docs/providers.md B.2, B.4).
enum FCMSendValidator {
    /// The payload limit: the body, less the target token, at most this many bytes. The gateway
    /// checks the same quantity, so the two agree on where "too big" starts.
    static let maxPayloadBytes = 4096

    /// Data keys FCM reserves (docs/providers.md B.2): exactly `from` and `message_type`, and any key starting
    /// with `google` or `gcm`.
    static func isReservedDataKey(_ key: String) -> Bool {
        key == "from" || key == "message_type" || key.hasPrefix("google") || key.hasPrefix("gcm")
    }

    /// What a valid body asks for.
    struct Send: Sendable {
        enum Target: Sendable, Equatable {
            case token(String)
            /// A Firebase Installation ID (`message.fid`).
            case fid(String)
            case topic(String)
            case condition(String)
        }
        var target: Target
        var validateOnly: Bool
    }

    /// The send, or the error FCM would answer.
    static func validate(_ body: [UInt8]) -> Result<Send, FCMErrorResponse> {
        let document: JSONValue
        do {
            document = try JSONParser.parse(body)
        } catch {
            return .failure(.invalidArgument(field: "", "Invalid JSON payload received. \(error)"))
        }
        guard let members = document.objectMembers else {
            return .failure(.invalidArgument(field: "", "Invalid JSON payload received. Expected an object."))
        }
        for (name, _) in members where name != "message" && name != "validate_only" {
            return .failure(
                .invalidArgument(
                    field: name, "Invalid JSON payload received. Unknown name \"\(name)\": Cannot find field."))
        }
        var validateOnly = false
        switch document["validate_only"] {
        case nil: break
        case .bool(let flag)?: validateOnly = flag
        default:
            return .failure(.invalidArgument(field: "validate_only", "Invalid value at 'validate_only' (TYPE_BOOL)"))
        }
        guard let message = document["message"] else {
            return .failure(
                .invalidArgument(field: "message", "Request contains an invalid argument: message is missing."))
        }
        guard message.objectMembers != nil else {
            return .failure(
                .invalidArgument(
                    field: "message", "Invalid value at 'message' (type.googleapis.com/google.firebase.fcm.v1.Message)")
            )
        }
        let target: Send.Target
        switch targetOf(message) {
        case .failure(let error): return .failure(error)
        case .success(let found): target = found
        }
        if let error = dataError(message["data"], field: "message.data") { return .failure(error) }
        if let error = dataError(message["android"]?["data"], field: "message.android.data") { return .failure(error) }
        var tokenLength = 0
        if case .token(let token) = target { tokenLength = token.utf8.count }
        if body.count - tokenLength > maxPayloadBytes {
            return .failure(.invalidArgument(field: "message", "Message is too big"))
        }
        return .success(Send(target: target, validateOnly: validateOnly))
    }

    /// Exactly one of token, fid, topic and condition, as a non-empty string.
    private static func targetOf(_ message: JSONValue) -> Result<Send.Target, FCMErrorResponse> {
        var found: [Send.Target] = []
        for name in ["token", "fid", "topic", "condition"] {
            guard let value = message[name] else { continue }
            guard case .string(let text) = value else {
                return .failure(
                    .invalidArgument(field: "message.\(name)", "Invalid value at 'message.\(name)' (TYPE_STRING)"))
            }
            switch name {
            case "token":
                guard !text.isEmpty else { return .failure(.invalidRegistrationToken) }
                found.append(.token(text))
            case "fid":
                guard !text.isEmpty else { return .failure(.invalidArgument(field: "message.fid", "Invalid FID.")) }
                found.append(.fid(text))
            case "topic":
                guard !text.isEmpty, !text.hasPrefix("/topics/") else {
                    return .failure(.invalidArgument(field: "message.topic", "Invalid topic name: \"\(text)\""))
                }
                found.append(.topic(text))
            default:
                guard !text.isEmpty else {
                    return .failure(
                        .invalidArgument(field: "message.condition", "Invalid condition expression provided."))
                }
                found.append(.condition(text))
            }
        }
        switch found.count {
        case 0: return .failure(.invalidArgument(field: "message", "Recipient of the message is not set."))
        case 1: return .success(found[0])
        default:
            return .failure(
                .invalidArgument(
                    field: "message", "Invalid value at 'message' (oneof), oneof field 'target' is already set."))
        }
    }

    /// A data map must be an object of strings with no reserved keys.
    private static func dataError(_ data: JSONValue?, field: String) -> FCMErrorResponse? {
        guard let data else { return nil }
        guard let members = data.objectMembers else {
            return .invalidArgument(field: field, "Invalid value at '\(field)' (map<string, string>)")
        }
        for (index, (key, value)) in members.enumerated() {
            guard case .string = value else {
                let path = "\(field)[\(index)].value"
                return .invalidArgument(field: path, "Invalid value at '\(path)' (TYPE_STRING), \(compact(value))")
            }
            if isReservedDataKey(key) {
                return .invalidArgument(field: field, "Invalid data key: \(key) is reserved.")
            }
        }
        return nil
    }

    private static func compact(_ value: JSONValue) -> String {
        String(decoding: JSONWriter.encode(value), as: UTF8.self)
    }
}

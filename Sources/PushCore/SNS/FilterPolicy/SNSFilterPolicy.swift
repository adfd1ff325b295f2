/// A subscription filter policy (docs/providers.md C.8): on message attributes (`MessageAttributes`
/// scope), or on the message's JSON body (`MessageBody` scope, where a policy's nested objects
/// follow the body's: `{"order": {"status": ["paid"]}}` looks at `order.status`).
///
/// A policy maps attribute names to arrays of matchers: every name must match (AND), and within
/// a name any matcher will do (OR). `"$or": [{…}, {…}]` matches when any of its sub-policies does.
///
/// Attributes are plain strings here (the gateway's publish has no SNS data types), so a value
/// that reads as a JSON number (`"150"`, `"1.5e2"`) also counts as a `Number` for exact-number,
/// `numeric` and `anything-but` number matchers, while string matchers see its text. `String.Array`
/// attributes and `cidr` are not supported.
public struct SNSFilterPolicy: Sendable, Equatable {
    /// SNS's limits (docs/providers.md C.8).
    public static let maxNames = 5
    public static let maxCombinations = 150
    public static let maxPolicyBytes = 262_144

    /// One requirement; a policy is the AND of its conditions.
    indirect enum Condition: Sendable, Equatable {
        /// The attribute `name` matches any of `matchers`.
        case attribute(name: String, matchers: [SNSFilterMatcher])
        /// Any of the sub-policies (each an AND of conditions) matches.
        case or([[Condition]])
    }

    /// The conditions, all of which must hold. Empty matches every message.
    var conditions: [Condition]

    /// Whether a message with these attributes passes the policy.
    public func matches(_ attributes: [String: String]) -> Bool {
        Self.allHold(conditions) { name, matcher in attributes[name].map { matcher.matches($0) } }
    }

    /// Whether a message with this body passes a `MessageBody` policy: the body must be a JSON
    /// object (anything else passes no policy, as SNS assumes well-formed JSON); a key path whose
    /// value is an array passes when any element does. JSON numbers, strings and booleans are
    /// matched by their text, as attributes are (so the string `"150"` also counts as a number).
    public func matches(body: String) -> Bool {
        guard let values = SNSMessageBody(body) else { return false }
        return matches(body: values)
    }

    /// The same, with the body read once for many policies (``SNSMessageBody``).
    public func matches(body: SNSMessageBody) -> Bool {
        Self.allHold(conditions) { name, matcher in body.values[name].map { $0.contains { matcher.matches($0) } } }
    }

    /// `passes(name, matcher)`: whether the message's value (any of its values) for `name` passes
    /// `matcher`; nil when the message has none (no per-message allocation on the fan-out's path).
    private static func allHold(_ conditions: [Condition], _ passes: (String, SNSFilterMatcher) -> Bool?) -> Bool {
        conditions.allSatisfy { condition in
            switch condition {
            case .attribute(let name, let matchers):
                var present = true
                let passed = matchers.contains { matcher in
                    guard let result = passes(name, matcher) else {
                        present = false
                        return false
                    }
                    return result
                }
                // A missing attribute fails every matcher except `exists: false` (docs/providers.md C.8).
                return present ? passed : matchers.contains(.exists(false))
            case .or(let branches):
                return branches.contains { allHold($0, passes) }
            }
        }
    }
}

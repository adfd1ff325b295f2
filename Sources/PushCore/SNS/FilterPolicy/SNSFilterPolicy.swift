/// A subscription filter policy on message attributes (docs/providers.md C.8, `MessageAttributes` scope).
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
        Self.allHold(conditions, attributes)
    }

    private static func allHold(_ conditions: [Condition], _ attributes: [String: String]) -> Bool {
        conditions.allSatisfy { condition in
            switch condition {
            case .attribute(let name, let matchers):
                guard let value = attributes[name] else {
                    // A missing attribute fails every matcher except `exists: false` (docs/providers.md C.8).
                    return matchers.contains(.exists(false))
                }
                return matchers.contains { $0.matches(value) }
            case .or(let branches):
                return branches.contains { allHold($0, attributes) }
            }
        }
    }
}

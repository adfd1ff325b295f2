/// One entry of a filter policy's array for an attribute (docs/providers.md C.8).
enum SNSFilterMatcher: Sendable, Equatable {
    /// `"text"`: the value equals it, byte for byte (case-sensitive, no Unicode normalisation).
    case exactString(String)
    /// `5`: the value reads as a number equal to it (`"5"`, `"5.0"`, `"5e0"` all match).
    case exactNumber(Double)
    /// `{"prefix": …}`.
    case prefix(String)
    /// `{"suffix": …}`.
    case suffix(String)
    /// `{"equals-ignore-case": …}`, stored lower-cased.
    case equalsIgnoreCase(String)
    /// `{"anything-but": […]}`: present and equal to none of the strings or numbers.
    case anythingBut(strings: [String], numbers: [Double])
    /// `{"anything-but": {"prefix": …}}`: present and not starting with it.
    case anythingButPrefix(String)
    /// `{"numeric": [op, n, …]}`: the value reads as a number within every bound.
    case numeric([NumericBound])
    /// `{"exists": true|false}`.
    case exists(Bool)

    /// One comparison of a `numeric` matcher.
    struct NumericBound: Sendable, Equatable {
        enum Operator: String, Sendable {
            case equal = "="
            case less = "<"
            case lessOrEqual = "<="
            case greater = ">"
            case greaterOrEqual = ">="
        }
        var op: Operator
        var value: Double

        func holds(for number: Double) -> Bool {
            switch op {
            case .equal: number == value
            case .less: number < value
            case .lessOrEqual: number <= value
            case .greater: number > value
            case .greaterOrEqual: number >= value
            }
        }
    }

    /// Whether a present attribute `value` matches. Absent attributes are handled by the policy:
    /// only `exists: false` matches them.
    func matches(_ value: String) -> Bool {
        switch self {
        case .exactString(let text): value.utf8.elementsEqual(text.utf8)
        case .exactNumber(let number): SNSNumber.parse(value) == number
        case .prefix(let text): value.utf8.starts(with: text.utf8)
        case .suffix(let text): value.utf8.reversed().starts(with: text.utf8.reversed())
        case .equalsIgnoreCase(let lowered): value.lowercased().utf8.elementsEqual(lowered.utf8)
        case .anythingBut(let strings, let numbers):
            !strings.contains { value.utf8.elementsEqual($0.utf8) }
                && !(SNSNumber.parse(value).map(numbers.contains) ?? false)
        case .anythingButPrefix(let text): !value.utf8.starts(with: text.utf8)
        case .numeric(let bounds):
            SNSNumber.parse(value).map { number in bounds.allSatisfy { $0.holds(for: number) } } ?? false
        case .exists(let present): present
        }
    }
}

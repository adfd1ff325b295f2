// Parsing one matcher of a filter policy array.
extension SNSFilterMatcher {
    /// Parses a matcher; errors carry only a message, the policy adds the field and name.
    static func parse(_ value: JSONValue) throws(ValidationError) -> SNSFilterMatcher {
        switch value {
        case .string(let text): return .exactString(text)
        case .number(let text): return .exactNumber(try number(text))
        case .object(let members):
            guard members.count == 1 else { throw invalid("a matcher object must hold exactly one operator") }
            return try parseOperator(members[0].0, members[0].1)
        default:
            throw invalid("matchers must be strings, numbers or operator objects")
        }
    }

    private static func parseOperator(_ name: String, _ operand: JSONValue) throws(ValidationError)
        -> SNSFilterMatcher
    {
        switch (name, operand) {
        case ("prefix", .string(let text)): return .prefix(text)
        case ("suffix", .string(let text)): return .suffix(text)
        case ("equals-ignore-case", .string(let text)): return .equalsIgnoreCase(text.lowercased())
        case ("exists", .bool(let flag)): return .exists(flag)
        case ("anything-but", _): return try anythingBut(operand)
        case ("numeric", .array(let elements)): return .numeric(try numericBounds(elements))
        case ("prefix", _), ("suffix", _), ("equals-ignore-case", _):
            throw invalid("\"\(name)\" takes a string")
        case ("exists", _): throw invalid("\"exists\" takes true or false")
        case ("numeric", _): throw invalid(numericShape)
        default: throw invalid("unknown operator \"\(name)\"")
        }
    }

    /// `"x"`, `5`, `["x", 5, …]` or `{"prefix": "x"}`.
    private static func anythingBut(_ operand: JSONValue) throws(ValidationError) -> SNSFilterMatcher {
        if let members = operand.objectMembers {
            guard members.count == 1, members[0].0 == "prefix", case .string(let text) = members[0].1 else {
                throw invalid("\"anything-but\" takes a string, a number, an array of them or {\"prefix\": string}")
            }
            return .anythingButPrefix(text)
        }
        let elements: [JSONValue]
        if case .array(let array) = operand, !array.isEmpty { elements = array } else { elements = [operand] }
        var strings: [String] = []
        var numbers: [Double] = []
        for element in elements {
            switch element {
            case .string(let text): strings.append(text)
            case .number(let text): numbers.append(try number(text))
            default:
                throw invalid("\"anything-but\" takes a string, a number, an array of them or {\"prefix\": string}")
            }
        }
        return .anythingBut(strings: strings, numbers: numbers)
    }

    static let numericShape = #""numeric" takes ["=", n], [op, n] or a range like [">", 0, "<=", 150]"#

    /// `[op, n]` with any operator, or `[lower-op, n, upper-op, m]` with `>`/`>=` then `<`/`<=`, n < m.
    private static func numericBounds(_ elements: [JSONValue]) throws(ValidationError) -> [NumericBound] {
        guard elements.count == 2 || elements.count == 4 else { throw invalid(numericShape) }
        var bounds: [NumericBound] = []
        for pair in stride(from: 0, to: elements.count, by: 2) {
            guard case .string(let opText) = elements[pair], let op = NumericBound.Operator(rawValue: opText),
                case .number(let text) = elements[pair + 1]
            else { throw invalid(numericShape) }
            bounds.append(NumericBound(op: op, value: try number(text)))
        }
        guard bounds.count == 2 else { return bounds }
        let lower = bounds[0]
        let upper = bounds[1]
        guard [.greater, .greaterOrEqual].contains(lower.op), [.less, .lessOrEqual].contains(upper.op) else {
            throw invalid("a numeric range must be a lower bound (> or >=) then an upper bound (< or <=)")
        }
        guard lower.value < upper.value else {
            throw invalid("a numeric range's lower bound must be below its upper bound")
        }
        return bounds
    }

    /// A policy number, within SNS's ±10^9.
    private static func number(_ text: String) throws(ValidationError) -> Double {
        guard let value = Double(text), abs(value) <= SNSNumber.limit else {
            throw invalid("numbers must be between -1000000000 and 1000000000, got \(text)")
        }
        return value
    }

    private static func invalid(_ message: String) -> ValidationError {
        ValidationError(field: "filter_policy_json", message: message)
    }
}

/// A parsed JSON document that keeps what a push payload needs to stay faithful: member order
/// and the verbatim text of numbers (so `1.0` and `1e2` are written back exactly as received).
///
/// Not `indirect`: arrays and objects already hold their elements on the heap, and an indirect
/// enum boxed every value besides (a 48-byte allocation for each `1` of `[1,1,…]`: a 16 MB
/// body took ~390 MB). Inline, a value is 17 bytes and a short string or number costs nothing more.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number as its verbatim JSON text, e.g. `"-1.5e3"`. Equality compares the text.
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in document order. Equality compares them in order.
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// The value of member `key` when this is an object (the last one if a hand-built object
    /// repeats it; ``JSONParser`` never produces repeats), else nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.0 == key }?.1
    }

    /// The members when this is an object, else nil.
    public var objectMembers: [(String, JSONValue)]? {
        if case .object(let members) = self { members } else { nil }
    }
}

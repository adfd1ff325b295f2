/// A message body as `MessageBody` filter policies read it: every scalar of its JSON object under
/// its key path (`{"order": {"status": "paid"}}` gives `order`, `status` = `paid`; an array's
/// elements are all under the array's path). Read once per message and platform, then matched
/// against every subscriber's policy.
public struct SNSMessageBody: Sendable {
    /// Joins a path's keys: a character no policy key is expected to hold, so the body key `"a.b"`
    /// is not the path `a`, `b`.
    static let separator = "\u{0}"
    /// What a JSON `null` is: present (for `exists`), equal to no string a policy can hold.
    static let null = "\u{0}null"

    let values: [String: [String]]

    /// nil when `text` is not a JSON object (such a body passes no `MessageBody` policy).
    public init?(_ text: String) {
        guard let document = try? JSONParser.parse(text.utf8), document.objectMembers != nil else { return nil }
        var values: [String: [String]] = [:]
        Self.collect(document, path: nil, into: &values)
        self.values = values
    }

    /// `path` nil: the document itself (an empty key is a key like any other: `{"": {"a": 1}}` is
    /// the path `""`, `a`, not `a`).
    private static func collect(_ value: JSONValue, path: String?, into values: inout [String: [String]]) {
        switch value {
        case .object(let members):
            for (key, member) in members {
                collect(member, path: path.map { $0 + separator + key } ?? key, into: &values)
            }
        case .array(let elements):
            for element in elements { collect(element, path: path, into: &values) }
        case .string(let text): values[path ?? "", default: []].append(text)
        case .number(let text): values[path ?? "", default: []].append(text)
        case .bool(let flag): values[path ?? "", default: []].append(flag ? "true" : "false")
        case .null: values[path ?? "", default: []].append(null)
        }
    }
}

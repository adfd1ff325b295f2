extension QueryParameters {
    /// List `name` in the Query convention: `name.member.1.…`, `name.member.2.…`, members numbered
    /// 1...N without gaps (decimal, no leading zeros), N at most `maxMembers`.
    ///
    /// - Returns: each member's parameters with the `name.member.N.` prefix removed; a scalar member
    ///   (`name.member.N`) is a member whose `""` parameter holds the value. An absent list, or
    ///   `name=` alone (how SDKs send an empty list), is `[]`.
    /// - Throws: ``QueryFormError`` naming the list for too many members or a gap, and naming the
    ///   parameter for anything under `name.` that is not `member.N…`.
    public func list(_ name: String, maxMembers: Int) throws(QueryFormError) -> [QueryParameters] {
        try numberedGroups(name, element: "member", kind: "list", maxCount: maxMembers).map(QueryParameters.init)
    }

    /// Map `name`: `name.entry.N.<keyName>` and `name.entry.N.<valueName>` (SNS's Attributes and
    /// Tags-like maps use the defaults "key"/"value"), entries numbered like list members. An
    /// entry without its value maps the key to "".
    ///
    /// - Throws: ``QueryFormError`` for an entry without its key, a key given twice (naming the map
    ///   and the key), and anything else under `name.` (naming it); and as ``list(_:maxMembers:)``.
    public func map(_ name: String, keyName: String = "key", valueName: String = "value", maxEntries: Int)
        throws(QueryFormError) -> [(key: String, value: String)]
    {
        try entries(name, keyName: keyName, maxEntries: maxEntries) { entry, parameterName throws(QueryFormError) in
            var value = ""
            for (subname, text) in entry.pairs where subname != keyName {
                guard subname == valueName else {
                    throw Self.stray(
                        name, member: parameterName(subname), expected: "entry.N.\(keyName) or .\(valueName)")
                }
                value = text
            }
            return value
        }
    }

    /// Map `name` whose values are structures, as SNS's MessageAttributes
    /// (`MessageAttributes.entry.1.Name`, `MessageAttributes.entry.1.Value.DataType`, …): each
    /// value is the entry's parameters under `<valueName>.` with that prefix removed (a scalar
    /// `<valueName>` is the `""` parameter); an entry without a value has an empty structure.
    ///
    /// - Throws: as ``map(_:keyName:valueName:maxEntries:)``.
    public func structureMap(_ name: String, keyName: String, valueName: String, maxEntries: Int)
        throws(QueryFormError) -> [(key: String, value: QueryParameters)]
    {
        try entries(name, keyName: keyName, maxEntries: maxEntries) { entry, parameterName throws(QueryFormError) in
            var fields: [(name: String, value: String)] = []
            for (subname, text) in entry.pairs where subname != keyName {
                if subname == valueName {
                    fields.append(("", text))
                } else if let field = Self.remainder(of: subname, after: valueName + ".") {
                    fields.append((field, text))
                } else {
                    throw Self.stray(
                        name, member: parameterName(subname), expected: "entry.N.\(keyName) or .\(valueName).…")
                }
            }
            return QueryParameters(fields)
        }
    }

    /// The map's entries in order, each checked for its key and the key for uniqueness; `value`
    /// reads the rest of an entry (given the entry and a way to name one of its parameters in full).
    private func entries<Value>(
        _ name: String, keyName: String, maxEntries: Int,
        value: (QueryParameters, (String) -> String) throws(QueryFormError) -> Value
    ) throws(QueryFormError) -> [(key: String, value: Value)] {
        let groups = try numberedGroups(name, element: "entry", kind: "map", maxCount: maxEntries)
        var keys: Set<String> = []
        var result: [(key: String, value: Value)] = []
        for (position, group) in groups.enumerated() {
            let entry = QueryParameters(group)
            let prefix = "\(name).entry.\(position + 1)"
            guard let key = entry[keyName] else {
                throw QueryFormError("map \(QueryFormError.quoted(name)): entry \(position + 1) has no \(keyName)")
            }
            guard keys.insert(key).inserted else {
                throw QueryFormError(
                    "map \(QueryFormError.quoted(name)) has the key \(QueryFormError.quoted(key)) twice")
            }
            result.append((key, try value(entry, { $0.isEmpty ? prefix : prefix + "." + $0 })))
        }
        return result
    }

    /// The parameters under `name.<element>.N` grouped by N (1...count, checked for gaps), each
    /// with that prefix removed: `""` for `name.<element>.N` itself, `rest` for `name.<element>.N.rest`.
    private func numberedGroups(_ name: String, element: String, kind: String, maxCount: Int)
        throws(QueryFormError) -> [[(name: String, value: String)]]
    {
        let elementPrefix = element + "."
        var groups: [Int: [(name: String, value: String)]] = [:]
        for (fullName, value) in pairs {
            if fullName == name {
                // botocore sends an empty list as `name=`; anything else there is not a list or map.
                guard value.isEmpty else {
                    throw QueryFormError("parameter \(QueryFormError.quoted(name)) must be a \(kind), not a value")
                }
                continue
            }
            guard let rest = Self.remainder(of: fullName, after: name + ".") else { continue }
            guard let numbered = Self.remainder(of: rest, after: elementPrefix),
                let (number, subname) = Self.splitNumber(numbered)
            else {
                throw Self.stray(name, member: fullName, expected: "\(element).N")
            }
            guard let number, number <= maxCount else {
                throw QueryFormError(
                    "\(kind) \(QueryFormError.quoted(name)) has more than \(maxCount) \(element == "entry" ? "entries" : "members")"
                )
            }
            groups[number, default: []].append((subname, value))
        }
        // Every number is in 1...maxCount, so no gap means exactly 1...count.
        if !groups.isEmpty, let missing = (1...groups.count).first(where: { groups[$0] == nil }) {
            throw QueryFormError("\(kind) \(QueryFormError.quoted(name)) has no \(element) \(missing)")
        }
        return (0..<groups.count).map { groups[$0 + 1] ?? [] }
    }

    private static func stray(_ name: String, member fullName: String, expected: String) -> QueryFormError {
        QueryFormError(
            "parameter \(QueryFormError.quoted(fullName)) is not \(QueryFormError.quoted(name + "." + expected))")
    }

    /// `text` without `prefix`, compared byte for byte (not by Unicode equivalence), or nil.
    static func remainder(of text: String, after prefix: String) -> String? {
        guard text.utf8.starts(with: prefix.utf8) else { return nil }
        // The prefix ends in ".", so the cut falls on a scalar boundary and the rest is valid UTF-8.
        return String(decoding: text.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// `N` or `N.rest` with N a decimal without leading zeros from 1: (N, "" or "rest"), N nil when
    /// it does not fit an Int (a huge number costs no more than its digits to read).
    private static func splitNumber(_ text: String) -> (Int?, String)? {
        let bytes = Array(text.utf8)
        var index = 0
        var number: Int? = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let digit = Int(bytes[index] - UInt8(ascii: "0"))
            if index == 0 && digit == 0 { return nil }
            if let current = number {
                let (times10, overflow) = current.multipliedReportingOverflow(by: 10)
                let (next, carry) = times10.addingReportingOverflow(digit)
                number = overflow || carry ? nil : next
            }
            index += 1
        }
        guard index > 0 else { return nil }
        if index == bytes.count { return (number, "") }
        guard bytes[index] == UInt8(ascii: "."), index + 1 < bytes.count else { return nil }
        return (number, String(decoding: bytes[(index + 1)...], as: UTF8.self))
    }
}

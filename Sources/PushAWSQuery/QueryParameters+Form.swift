import PushCore

extension QueryParameters {
    /// Decodes an `application/x-www-form-urlencoded` body as AWS SDKs write it (the WHATWG/HTML
    /// form rules): `&`-separated fields, empty ones skipped; `name=value`, or `name` alone for an
    /// empty value; `+` is a space and `%XX` (hex of either case) a byte; the decoded bytes UTF-8.
    ///
    /// - Throws: ``QueryFormError`` for a malformed escape (naming the field's position and the
    ///   escape), bytes that are not UTF-8, an empty or over-long name, too many fields, or a name
    ///   sent twice. One pass over the body; nothing from it but short quoted names reaches a message.
    public static func decode(form body: [UInt8], limits: QueryFormLimits = .init()) throws(QueryFormError)
        -> QueryParameters
    {
        var pairs: [(name: String, value: String)] = []
        var seen: Set<String> = []
        var field = 0
        var start = 0
        while start <= body.count {
            let end = body[start...].firstIndex(of: UInt8(ascii: "&")) ?? body.count
            defer { start = end + 1 }
            guard end > start else { continue }
            field += 1
            guard field <= limits.maxFields else {
                throw QueryFormError("the form has more than \(limits.maxFields) fields")
            }
            let equals = body[start..<end].firstIndex(of: UInt8(ascii: "=")) ?? end
            let nameBytes = try FormField.decode(body[start..<equals], field: field)
            let valueBytes = equals < end ? try FormField.decode(body[(equals + 1)..<end], field: field) : []
            guard !nameBytes.isEmpty else { throw QueryFormError("field \(field) has an empty name") }
            guard let name = String(validating: nameBytes, as: UTF8.self) else {
                throw QueryFormError("field \(field): the name is not UTF-8")
            }
            guard nameBytes.count <= limits.maxNameBytes else {
                throw QueryFormError(
                    "field \(field): the name \(QueryFormError.quoted(name)) is longer than \(limits.maxNameBytes) bytes"
                )
            }
            guard let value = String(validating: valueBytes, as: UTF8.self) else {
                throw QueryFormError("parameter \(QueryFormError.quoted(name)): the value is not UTF-8")
            }
            guard seen.insert(name).inserted else {
                throw QueryFormError("parameter \(QueryFormError.quoted(name)) appears twice")
            }
            pairs.append((name, value))
        }
        return QueryParameters(pairs)
    }

    /// The parameters as a form body: names and values percent-encoded except AWS's unreserved
    /// characters (`A-Z a-z 0-9 - _ . ~`), joined with `=` and `&` in order. ``decode(form:limits:)``
    /// gives the same pairs back.
    public var formBody: [UInt8] {
        var out: [UInt8] = []
        for (position, pair) in pairs.enumerated() {
            if position > 0 { out.append(UInt8(ascii: "&")) }
            AWSPercentEncoding.encode(pair.name.utf8, into: &out)
            out.append(UInt8(ascii: "="))
            AWSPercentEncoding.encode(pair.value.utf8, into: &out)
        }
        return out
    }
}

/// One field's name or value, un-escaped by the form rules.
private enum FormField {
    static func decode(_ bytes: ArraySlice<UInt8>, field: Int) throws(QueryFormError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "+"):
                out.append(UInt8(ascii: " "))
                index += 1
            case UInt8(ascii: "%"):
                guard index + 2 < bytes.endIndex,
                    let high = Hex.value(bytes[index + 1]),
                    let low = Hex.value(bytes[index + 2])
                else {
                    let bad = bytes[index..<min(index + 3, bytes.endIndex)]
                    throw QueryFormError(
                        "field \(field): \(QueryFormError.quoted(String(decoding: bad, as: UTF8.self))) is not a"
                            + " percent-escape (% and two hex digits)")
                }
                out.append(high << 4 | low)
                index += 3
            default:
                out.append(byte)
                index += 1
            }
        }
        return out
    }
}

extension SigV4Verifier {
    /// The canonical request of AWS's "Create a canonical request for Signature Version 4": method,
    /// canonical URI, canonical query string, canonical headers, signed headers and payload hash,
    /// one per line.
    ///
    /// - Parameter signedHeaders: lowercase names; sorted and deduplicated here.
    /// - Throws: ``SigV4Failure/incomplete(_:)`` when a signed header is absent from the request.
    public static func canonicalRequest(_ request: SigV4Request, signedHeaders: [String], payloadHash: String)
        throws(SigV4Failure) -> String
    {
        let names = Array(Set(signedHeaders)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var headerLines = ""
        for name in names {
            guard let value = canonicalHeaderValue(name, in: request.headers) else {
                throw .incomplete("the signed header \(SigV4Text.quoted(name)) is not in the request")
            }
            headerLines += name + ":" + value + "\n"
        }
        let questionMark = request.target.utf8.firstIndex(of: UInt8(ascii: "?"))
        let path = request.target.utf8[..<(questionMark ?? request.target.utf8.endIndex)]
        let query = questionMark.map { request.target.utf8[request.target.utf8.index(after: $0)...] }
        return [
            request.method, canonicalURI(path), canonicalQuery(query.map(Array.init) ?? []), headerLines,
            names.joined(separator: ";"), payloadHash,
        ].joined(separator: "\n")
    }

    /// The path as received, dot segments and empty segments removed (a trailing slash kept), each
    /// segment URI-encoded: AWS encodes the path twice for services other than S3, and a path as
    /// received is the once-encoded one, so `%` itself is encoded here.
    static func canonicalURI(_ path: some Collection<UInt8>) -> String {
        var segments: [ArraySlice<UInt8>] = []
        let bytes = Array(path)
        for segment in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            if segment.elementsEqual(".".utf8) { continue }
            if segment.elementsEqual("..".utf8) {
                _ = segments.popLast()
                continue
            }
            segments.append(segment)
        }
        var out: [UInt8] = [UInt8(ascii: "/")]
        for (position, segment) in segments.enumerated() {
            if position > 0 { out.append(UInt8(ascii: "/")) }
            AWSPercentEncoding.encode(segment, into: &out)
        }
        if !segments.isEmpty && bytes.last == UInt8(ascii: "/") { out.append(UInt8(ascii: "/")) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The query's `name=value` pairs decoded (`%XX`, and `+` as a space) and encoded again AWS's
    /// way, sorted by name then value byte for byte; a name without `=` has an empty value.
    static func canonicalQuery(_ query: [UInt8]) -> String {
        var pairs: [(name: [UInt8], value: [UInt8])] = []
        for field in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = field.firstIndex(of: UInt8(ascii: "=")) ?? field.endIndex
            var name: [UInt8] = []
            var value: [UInt8] = []
            AWSPercentEncoding.encode(
                AWSPercentEncoding.decodeQueryComponent(field[..<equals]), into: &name)
            if equals < field.endIndex {
                AWSPercentEncoding.encode(
                    AWSPercentEncoding.decodeQueryComponent(field[(equals + 1)...]), into: &value)
            }
            pairs.append((name, value))
        }
        pairs.sort { a, b in
            a.name == b.name ? a.value.lexicographicallyPrecedes(b.value) : a.name.lexicographicallyPrecedes(b.name)
        }
        var out: [UInt8] = []
        for (position, pair) in pairs.enumerated() {
            if position > 0 { out.append(UInt8(ascii: "&")) }
            out += pair.name + [UInt8(ascii: "=")] + pair.value
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Every value of header `name` trimmed, runs of whitespace inside made one space, joined with
    /// ","; nil when the request has none. `host` falls back to HTTP/2's `:authority`.
    static func canonicalHeaderValue(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        let values = headers.filter { isName($0.name, lowercase: name) }.map { collapsingWhitespace($0.value) }
        if values.isEmpty {
            return name == "host" ? canonicalHeaderValue(":authority", in: headers) : nil
        }
        return values.joined(separator: ",")
    }

    /// Whether header name `name` is `lowercase` in any case (ASCII), without allocating.
    private static func isName(_ name: String, lowercase: String) -> Bool {
        name.utf8.count == lowercase.utf8.count
            && zip(name.utf8, lowercase.utf8).allSatisfy { a, b in
                (a >= 0x41 && a <= 0x5a ? a | 0x20 : a) == b
            }
    }

    /// `value` trimmed, with each run of spaces, tabs and line breaks inside made one space.
    private static func collapsingWhitespace(_ value: String) -> String {
        var out: [UInt8] = []
        var pendingSpace = false
        for byte in value.utf8 {
            if byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace { out.append(0x20) }
            pendingSpace = false
            out.append(byte)
        }
        return String(decoding: out, as: UTF8.self)
    }
}

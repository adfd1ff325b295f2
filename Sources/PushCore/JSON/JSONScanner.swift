/// The recursive-descent scanner behind ``JSONParser``. Lives only for one `parse` call, inside
/// the closure that keeps `bytes` valid.
struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    /// Values the document may still hold.
    var valuesLeft: Int
    let maxValues: Int
    var index = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, maxValues: Int = JSONParser.defaultMaxValues) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.maxValues = maxValues
        valuesLeft = maxValues
    }

    // Result instead of typed throws out of the closure: the unsafe-pointer closures only rethrow.
    consuming func parseDocument() -> Result<JSONValue, JSONError> {
        do throws(JSONError) {
            skipWhitespace()
            let value = try parseValue()
            skipWhitespace()
            guard index == bytes.count else { throw error("unexpected data after the JSON value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    func error(_ message: String, at offset: Int? = nil) -> JSONError {
        JSONError(offset: offset ?? index, message: message)
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let byte = current,
            byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
        {
            index += 1
        }
    }

    mutating func parseValue() throws(JSONError) -> JSONValue {
        guard let byte = current else { throw error("unexpected end of input") }
        valuesLeft -= 1
        guard valuesLeft >= 0 else { throw error("more than \(maxValues) values") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("expected a value")
        }
    }

    mutating func parseLiteral(_ word: StaticString, _ value: JSONValue) throws(JSONError) -> JSONValue {
        let start = index
        let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for expected in text {
            guard current == expected else { throw error("invalid literal, expected '\(word)'", at: start) }
            index += 1
        }
        return value
    }

    mutating func enterContainer() throws(JSONError) {
        depth += 1
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        index += 1
    }

    mutating func parseArray() throws(JSONError) -> JSONValue {
        try enterContainer()
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            case nil: throw error("unexpected end of input, expected ',' or ']'")
            default: throw error("expected ',' or ']'")
            }
        }
    }

    mutating func parseObject() throws(JSONError) -> JSONValue {
        try enterContainer()
        var members: [(String, JSONValue)] = []
        var keys = DuplicateKeyCheck()
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            let keyOffset = index
            guard current == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let key = try parseString()
            guard keys.insert(key, existing: members) else {
                throw error("duplicate key \"\(key)\"", at: keyOffset)
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            case nil: throw error("unexpected end of input, expected ',' or '}'")
            default: throw error("expected ',' or '}'")
            }
        }
    }
}

import PushCore

/// A JSON object whose values are all strings, integers, booleans or null: exactly the shape of a
/// JWT's JOSE header and claims, and of a service-account file. Read and written with PushCore's
/// JSON parser and writer; anything that is not flat (nested values, fractions) is refused, since
/// nothing read here has a reason to be.
struct FlatJSONObject {
    enum Value: Equatable {
        case string(String)
        case integer(Int64)
        case other  // true, false, null
    }

    private(set) var fields: [String: Value] = [:]

    /// nil unless `bytes` are one JSON object (strict RFC 8259, no duplicate keys) of flat values.
    init?(_ bytes: [UInt8]) {
        guard let members = (try? JSONParser.parse(bytes))?.objectMembers else { return nil }
        for (key, value) in members {
            switch value {
            case .string(let text): fields[key] = .string(text)
            case .number(let text):
                guard let number = Int64(text) else { return nil }
                fields[key] = .integer(number)
            case .bool, .null: fields[key] = .other
            case .array, .object: return nil
            }
        }
    }

    func string(_ key: String) -> String? {
        if case .string(let value)? = fields[key] { return value }
        return nil
    }

    func integer(_ key: String) -> Int64? {
        if case .integer(let value)? = fields[key] { return value }
        return nil
    }

    /// Compact JSON of `members`, in their order: strings quoted, integers as decimal text.
    static func serialize(_ members: [(String, Value)]) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        for (key, value) in members {
            writer.key(key)
            switch value {
            case .string(let text): writer.string(text)
            case .integer(let number): writer.int(number)
            case .other: writer.null()
            }
        }
        writer.endObject()
        return writer.bytes
    }
}

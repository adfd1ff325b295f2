import PushCore

/// Typed reads of one JSON object of the config file, with errors that name the key.
struct ConfigObject {
    let path: String
    let members: [(String, JSONValue)]

    init(_ value: JSONValue, path: String) throws(ConfigurationError) {
        guard case .object(let members) = value else {
            throw ConfigurationError("\(path): expected a JSON object")
        }
        self.path = path
        self.members = members
    }

    /// - Parameter context: what the object is (`an fcm app`), when the keys it takes depend on it.
    func checkKeys(_ known: Set<String>, context: String? = nil) throws(ConfigurationError) {
        for (key, _) in members where !known.contains(key) {
            let what = context.map { " for \($0)" } ?? ""
            throw ConfigurationError(
                "\(path): unknown key \(key.debugDescription)\(what) (known: \(known.sorted().joined(separator: ", ")))"
            )
        }
    }

    func value(_ key: String) -> JSONValue? {
        members.last { $0.0 == key }?.1
    }

    func has(_ key: String) -> Bool { value(key) != nil }

    func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let string) = value else { throw ConfigurationError("\(path).\(key): expected a string") }
        return string
    }

    func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let bool) = value else { throw ConfigurationError("\(path).\(key): expected true or false") }
        return bool
    }

    func int(_ key: String, range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let value = value(key) else { return nil }
        guard case .number(let text) = value, let number = Int(text) else {
            throw ConfigurationError("\(path).\(key): expected an integer")
        }
        guard range.contains(number) else {
            throw ConfigurationError("\(path).\(key): must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return number
    }

    func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let items = try array(key) else { return nil }
        var strings: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let string) = item else {
                throw ConfigurationError("\(path).\(key)[\(index)]: expected a string")
            }
            strings.append(string)
        }
        return strings
    }

    func array(_ key: String) throws(ConfigurationError) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let items) = value else { throw ConfigurationError("\(path).\(key): expected an array") }
        return items
    }
}

/// Appends compact JSON to a byte buffer, without Foundation and without building Strings.
///
/// Calls mirror the document: `beginObject()`, `key("aps")`, `beginObject()`, … `endObject()`.
/// Commas are inserted automatically. The writer does not check the sequence of calls (a key
/// outside an object gives invalid JSON); callers are the payload builders in this module.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8]
    /// Whether the next value or key needs a comma first: true right after a complete value.
    private var needsComma = false

    /// Creates an empty writer whose buffer can grow to `capacity` bytes without reallocating.
    public init(reservingCapacity capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Writes `{`.
    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    /// Writes `}`.
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    /// Writes `[`.
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    /// Writes `]`.
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// Writes an object key and its `:`; the next call writes its value.
    public mutating func key(_ name: String) {
        separate()
        JSONWriter.appendQuoted(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// An object key written out quoted, with its `:` (`"\"alert\":"`): for the keys a builder
    /// writes in every document, which the String `key(_:)` would scan and quote each time. A
    /// literal rather than an array quoted once: a `static let` array cost a lazy-global check
    /// (`swift_once`) per use and a retain and release per key written.
    public struct Key: Sendable {
        let quoted: StaticString

        /// `quoted` is the key as JSON text plus `:`, written as is (no escaping is done).
        public init(quoted: StaticString) {
            self.quoted = quoted
        }
    }

    /// Writes a key quoted beforehand and its `:`; the next call writes its value.
    public mutating func key(_ key: Key) {
        separate()
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.quoted.utf8Start, count: key.quoted.utf8CodeUnitCount))
        needsComma = false
    }

    /// Writes member `key` with the string `value`, unless it is empty.
    public mutating func member(_ key: Key, nonEmpty value: String) {
        guard !value.isEmpty else { return }
        self.key(key)
        string(value)
    }

    /// Writes member `key` with the string `value`, empty or not.
    public mutating func member(_ key: Key, string value: String) {
        self.key(key)
        string(value)
    }

    /// Writes member `key` with the array `values`, unless it is empty.
    public mutating func member(_ key: Key, nonEmpty values: [String]) {
        guard !values.isEmpty else { return }
        self.key(key)
        stringArray(values)
    }

    /// Writes a string value, escaped per RFC 8259 §7.
    public mutating func string(_ value: String) {
        separate()
        JSONWriter.appendQuoted(value, to: &bytes)
        needsComma = true
    }

    /// Writes an integer value.
    public mutating func int(_ value: some FixedWidthInteger) {
        separate()
        JSONWriter.appendDecimal(value, to: &bytes)
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        raw(value ? "true" : "false")
    }

    /// Writes `null`.
    public mutating func null() { raw("null") }

    /// Writes member `key` with the string `value`, unless it is empty: the payload builders leave
    /// unset fields out.
    public mutating func member(_ key: String, nonEmpty value: String) {
        guard !value.isEmpty else { return }
        self.key(key)
        string(value)
    }

    /// Writes member `key` with the string `value`, empty or not.
    public mutating func member(_ key: String, string value: String) {
        self.key(key)
        string(value)
    }

    /// Writes member `key` with the array `values`, unless it is empty.
    public mutating func member(_ key: String, nonEmpty values: [String]) {
        guard !values.isEmpty else { return }
        self.key(key)
        stringArray(values)
    }

    /// Writes an array of strings.
    public mutating func stringArray(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    /// Writes a parsed value compactly; numbers keep their verbatim text.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let text): raw(text)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for (name, member) in members {
                key(name)
                self.value(member)
            }
            endObject()
        }
    }

    /// Writes already-valid JSON text (a number's text, a literal) as one value.
    public mutating func raw(_ json: String) {
        separate()
        bytes.append(contentsOf: json.utf8)
        needsComma = true
    }

    /// Encodes a whole value: `JSONWriter.encode(value)`.
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        needsComma = false
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        needsComma = true
    }
}

/// Appends compact JSON to a byte buffer, without Foundation and without building Strings.
///
/// Calls mirror the document: `beginObject()`, `key("aps")`, `beginObject()`, … `endObject()`.
/// Commas are inserted automatically. The writer does not check the sequence of calls (a key
/// outside an object gives invalid JSON); callers are the payload builders in this module.
///
/// The bytes are written through a raw buffer the writer owns (noncopyable, so nothing else can
/// see it change), not appended to an array: each array append checks uniqueness and capacity and
/// goes through the array's header. ``bytes`` copies the document out.
public struct JSONWriter: ~Copyable, @unchecked Sendable {
    // @unchecked: the buffer is this writer's alone (it cannot be copied), freed by its deinit.
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    /// Whether the next value or key needs a comma first: true right after a complete value.
    private var needsComma = false

    /// Creates an empty writer whose buffer can grow to `capacity` bytes without reallocating.
    public init(reservingCapacity capacity: Int = 0) {
        self.capacity = Swift.max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    /// The JSON written so far (a copy).
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// Room for `extra` more bytes at the end; returns where they go.
    @inline(__always)
    private mutating func room(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if capacity - count < extra { grow(toHold: count + extra) }
        return base + count
    }

    private mutating func grow(toHold needed: Int) {
        let newCapacity = Swift.max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        room(1).pointee = byte
        count += 1
    }

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        room(bytes.count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends `value` quoted and escaped (``JSONWriter/writeQuoted(utf8:to:)``).
    private mutating func appendQuoted(_ value: String) {
        if value.utf8.withContiguousStorageIfAvailable({ appendQuoted(utf8: $0) }) != nil { return }
        var value = value
        value.withUTF8 { appendQuoted(utf8: $0) }
    }

    private mutating func appendQuoted(utf8: UnsafeBufferPointer<UInt8>) {
        count += JSONWriter.writeQuoted(utf8: utf8, to: room(JSONWriter.maxQuotedCount(utf8.count)))
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
        appendQuoted(name)
        append(UInt8(ascii: ":"))
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
        append(UnsafeBufferPointer(start: key.quoted.utf8Start, count: key.quoted.utf8CodeUnitCount))
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
        appendQuoted(value)
        needsComma = true
    }

    /// Writes an integer value.
    public mutating func int(_ value: some FixedWidthInteger) {
        separate()
        count += JSONWriter.writeDecimal(value, to: room(JSONWriter.maxDecimalCount))
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
        if json.utf8.withContiguousStorageIfAvailable({ append($0) }) == nil {
            var json = json
            json.withUTF8 { append($0) }
        }
        needsComma = true
    }

    /// Encodes a whole value: `JSONWriter.encode(value)`.
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }

    private mutating func separate() {
        if needsComma { append(UInt8(ascii: ",")) }
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        append(bracket)
        needsComma = false
    }

    private mutating func close(_ bracket: UInt8) {
        append(bracket)
        needsComma = true
    }
}

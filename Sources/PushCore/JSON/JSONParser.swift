/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// Strict means: one value with optional surrounding whitespace; no trailing commas, comments,
/// single quotes, leading zeros, `NaN` or bare control characters; escapes must be valid and
/// `\u` surrogates must pair up; the bytes must be valid UTF-8 (no overlong forms or encoded
/// surrogates). Duplicate object keys are **rejected**: RFC 8259 leaves their meaning open, and a
/// payload whose meaning depends on which duplicate APNs keeps is better refused up front.
public enum JSONParser {
    /// The default nesting limit, far above any real push payload.
    public static let defaultMaxDepth = 64

    /// The default limit on values in one document: ten times the values of a Send of 100,000
    /// tokens (`max_tokens_per_send`'s default), and a bound on the tree's memory (~24 bytes a
    /// value, besides strings longer than 15 bytes) whatever small values a body is made of.
    public static let defaultMaxValues = 1_000_000

    /// Parses one JSON document.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 text, e.g. `Array(string.utf8)` or `string.utf8` directly.
    ///   - maxDepth: how many arrays/objects may nest; deeper input fails rather than recursing.
    ///   - maxValues: how many values (scalars, arrays and objects) the document may hold.
    /// - Throws: ``JSONError`` with the byte offset of the first problem.
    public static func parse(
        _ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth, maxValues: Int = defaultMaxValues
    ) throws(JSONError) -> JSONValue {
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            JSONScanner(bytes: buffer, maxDepth: maxDepth, maxValues: maxValues).parseDocument()
        }
        if let contiguous { return try contiguous.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer in
            JSONScanner(bytes: buffer, maxDepth: maxDepth, maxValues: maxValues).parseDocument()
        }.get()
    }
}

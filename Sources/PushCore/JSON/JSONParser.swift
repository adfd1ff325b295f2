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

    /// Parses one JSON document.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 text, e.g. `Array(string.utf8)` or `string.utf8` directly.
    ///   - maxDepth: how many arrays/objects may nest; deeper input fails rather than recursing.
    /// - Throws: ``JSONError`` with the byte offset of the first problem.
    public static func parse(
        _ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> JSONValue {
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            JSONScanner(bytes: buffer, maxDepth: maxDepth).parseDocument()
        }
        if let contiguous { return try contiguous.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer in
            JSONScanner(bytes: buffer, maxDepth: maxDepth).parseDocument()
        }.get()
    }
}

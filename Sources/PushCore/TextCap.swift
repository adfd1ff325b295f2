/// Shortening text that may echo a client's input (an error message naming a 70,000-character
/// `app`, a log line quoting it), so that no answer or log line grows with what a client sent.
public enum TextCap {
    /// The ellipsis that marks a shortened text.
    public static let ellipsis = "…"

    /// `text` itself when its UTF-8 form has at most `maxBytes` bytes; otherwise its longest
    /// prefix that ends on a character boundary and leaves room for ``ellipsis``, followed by it.
    public static func prefix(_ text: String, maxBytes: Int) -> String {
        let utf8 = text.utf8
        guard utf8.count > maxBytes else { return text }
        let room = max(0, maxBytes - ellipsis.utf8.count)
        var end = text.startIndex
        var used = 0
        for index in text.indices {
            let next = text.index(after: index)
            let size = text.utf8.distance(from: index, to: next)
            if used + size > room { break }
            used += size
            end = next
        }
        return String(text[..<end]) + ellipsis
    }

    /// `value` as Swift's `debugDescription` quotes it, shortened to about `maxCharacters`
    /// characters first (with ``ellipsis`` and the full length): what an error message echoes of
    /// a client's value. Default 128 characters.
    public static func quoted(_ value: String, maxCharacters: Int = 128) -> String {
        guard value.count > maxCharacters else { return value.debugDescription }
        let head = String(value.prefix(maxCharacters))
        return String(head.debugDescription.dropLast()) + "\(ellipsis)\" (\(value.utf8.count) bytes)"
    }
}

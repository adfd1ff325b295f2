extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace, a CSV header's
    /// padding).
    public var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}

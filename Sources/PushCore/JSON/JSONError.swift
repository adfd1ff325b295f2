/// Why a JSON document was rejected, and where.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The zero-based byte offset of the problem in the input.
    public var offset: Int
    /// What was wrong, e.g. `expected ',' or '}'`.
    public var message: String

    /// Creates an error at a byte offset.
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// `expected ',' or '}' at byte 17`.
    public var description: String { "\(message) at byte \(offset)" }
}

/// A request body or parameter set that does not follow the AWS Query conventions. The message names
/// the field or parameter at fault but never carries a whole value: quoted text is cut to ~40
/// characters (see ``QueryFormError/quoted(_:)``).
public struct QueryFormError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }

    /// `text` in double quotes for an error message: quotes, backslashes and control characters
    /// escaped so that a log line stays one line, and cut after 40 characters of that (an ellipsis
    /// marks the cut).
    static func quoted(_ text: some StringProtocol) -> String {
        let limit = 40
        var out = "\""
        var written = 0
        for scalar in text.unicodeScalars {
            if written >= limit {
                out += "…"
                break
            }
            let escaped = scalar.escaped(asASCII: false)
            out += escaped
            written += escaped.unicodeScalars.count
        }
        return out + "\""
    }
}

/// Bounds on a form body, checked while it is decoded (before any parameter is kept).
public struct QueryFormLimits: Sendable {
    /// The most `name=value` fields a body may hold (SNS's largest requests, PublishBatch with ten
    /// entries of ten message attributes each, stay well under the default).
    public var maxFields: Int
    /// The longest parameter name, in bytes after decoding.
    public var maxNameBytes: Int

    public init(maxFields: Int = 1000, maxNameBytes: Int = 256) {
        self.maxFields = maxFields
        self.maxNameBytes = maxNameBytes
    }
}

/// A request field that can't be sent, with the place it was found: `notifications[3].priority`.
///
/// It becomes an `INVALID_ARGUMENT` status whose message is ``description``.
public struct ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path of the field in the request, in the proto's snake_case
    /// (`notifications[3].tokens[7]`); empty or the notification's path for whole-message errors.
    public var field: String
    /// What is wrong, e.g. `must be 0, 1, 5 or 10`.
    public var message: String

    /// Creates an error for a field.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    /// `field: message`, or just the message when there is no field.
    public var description: String { field.isEmpty ? message : "\(field): \(message)" }

    /// The same error under `path`: `priority` becomes `notifications[3].priority`, and an error
    /// with no field becomes one about `notifications[3]` itself.
    public func located(at path: String) -> ValidationError {
        guard !path.isEmpty else { return self }
        return ValidationError(field: field.isEmpty ? path : "\(path).\(field)", message: message)
    }
}

extension ValidationError {
    /// The result of `body`, its error located at `path` (``located(at:)``): how the per-provider
    /// `prepare(_:at:…)` functions report a notification's first problem.
    static func result<T>(at path: String, _ body: () throws(ValidationError) -> T) -> Result<T, ValidationError> {
        do throws(ValidationError) {
            return .success(try body())
        } catch {
            return .failure(error.located(at: path))
        }
    }
}

/// The apps an API key may send for.
public enum AppGrant: Sendable, Equatable {
    /// `"apps": ["*"]`: every app.
    case all
    /// Exactly these app names.
    case only(Set<String>)

    public func contains(_ app: String) -> Bool {
        switch self {
        case .all: true
        case .only(let names): names.contains(app)
        }
    }
}

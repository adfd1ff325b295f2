/// Why a store call failed. Every engine reports its failures through this one type, so callers
/// (the gRPC services) map it to a status once, without knowing which database is underneath.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. A struct rather than an enum so engines can add codes without
    /// breaking callers' `switch`es; compare with `==` against the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `"notFound"`.
        public let name: String

        /// Makes a code; prefer the static members.
        public init(_ name: String) { self.name = name }

        /// The endpoint, topic, subscription or message does not exist.
        public static let notFound = Code("notFound")
        /// Something with the same identity exists; `existingID` names it where there is one.
        public static let alreadyExists = Code("alreadyExists")
        /// The request itself is malformed (a bad page cursor, a negative count, …).
        public static let invalidArgument = Code("invalidArgument")
        /// The request contradicts the stored state (e.g. progress on a finished message).
        public static let conflict = Code("conflict")
        /// The record is in a state the call does not apply to (cancelling a finished message).
        public static let failedPrecondition = Code("failedPrecondition")
        /// The database file could not be read or written (disk full, I/O error, corruption, locked).
        public static let io = Code("io")
        /// The file's schema was written by a newer version than this one knows.
        public static let incompatible = Code("incompatible")
        /// A bug or an unexpected engine answer; also calls on a closed store.
        public static let `internal` = Code("internal")

        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// Human-readable detail, safe to return to API clients.
    public var message: String
    /// For `alreadyExists`: the id of the record that is in the way (SNS clients parse it out).
    public var existingID: String?

    /// Makes an error.
    public init(_ code: Code, existingID: String? = nil, message: String) {
        self.code = code
        self.message = message
        self.existingID = existingID
    }

    public var description: String { "\(code): \(message)" }
}

extension StoreError {
    /// A tool (import, export, the loaders) does not upgrade a store a gateway may be running on:
    /// the running, older gateway would then work on a schema it does not know. Answers the error
    /// for a store at `version` (0: new, which the tool sets up itself) when this build knows
    /// `known`, or nil.
    static func olderSchemaForTool(_ store: String, version: Int32, known: Int32) -> StoreError? {
        guard version != 0, version < known else { return nil }
        return StoreError(
            .incompatible,
            message: "\(store) has schema version \(version), older than this build's \(known): "
                + "start this version's gateway on it once (it upgrades the store), then run this again")
    }
}

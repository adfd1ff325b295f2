/// The parameters of one AWS Query request (`Action`, `Version`, the action's own), names unique,
/// in the order they were sent. Lists and maps stay flattened under dotted names
/// (`Tags.member.1.Key`); ``list(_:maxMembers:)``, ``map(_:keyName:valueName:maxEntries:)`` and
/// ``structureMap(_:keyName:valueName:maxEntries:)`` read them back.
public struct QueryParameters: Sendable {
    public let pairs: [(name: String, value: String)]
    private let indexByName: [String: Int]

    /// Parameters in the given order. Names are expected to be unique; for a repeated name the
    /// subscript answers the first.
    public init(_ pairs: [(name: String, value: String)]) {
        self.pairs = pairs
        var index: [String: Int] = [:]
        index.reserveCapacity(pairs.count)
        for (position, pair) in pairs.enumerated() where index[pair.name] == nil {
            index[pair.name] = position
        }
        indexByName = index
    }

    /// The value of the parameter called `name`, or nil when it was not sent.
    public subscript(name: String) -> String? {
        guard let position = indexByName[name] else { return nil }
        return pairs[position].value
    }

    public var count: Int { pairs.count }

    /// The distinct first dotted components of the names ("Attributes" for "Attributes.entry.1.key").
    public var topLevelNames: Set<String> {
        Set(
            pairs.map { pair in
                // By bytes: "." is ASCII, so the cut falls on a scalar boundary even before a combining mark.
                guard let dot = pair.name.utf8.firstIndex(of: UInt8(ascii: ".")) else { return pair.name }
                return String(pair.name[..<dot])
            })
    }
}

/// One row of a bulk import (`pushgate import`, the bench loaders): an endpoint named by its app and
/// token, what to set on it, and the topics to subscribe it to.
///
/// An import says what the store should hold, so it is idempotent: a row for a token already
/// registered keeps that endpoint (and its id) and sets only the fields the row gives; topics are
/// added, never removed. Running the same rows again changes nothing.
public struct EndpointImport: Sendable, Equatable {
    public var app: String
    /// Already normalized by the caller, as for `createEndpoint`.
    public var token: String
    /// nil: not given (a new endpoint has none; an existing one keeps its own).
    public var userID: String?
    public var customUserData: String?
    /// nil: not given (a new endpoint is enabled; an existing one keeps its state).
    public var enabled: Bool?
    /// Topic names (valid ones: the caller checks); created when missing.
    public var topics: [String]

    public init(
        app: String, token: String, userID: String? = nil, customUserData: String? = nil, enabled: Bool? = nil,
        topics: [String] = []
    ) {
        self.app = app
        self.token = token
        self.userID = userID
        self.customUserData = customUserData
        self.enabled = enabled
        self.topics = topics
    }

    /// The rows with one per (app, token): a later row's given fields win and topics add up, so a
    /// batch means what the same rows applied one after another would.
    static func merged(_ rows: [EndpointImport]) -> [EndpointImport] {
        var index: [Key: Int] = [:]
        index.reserveCapacity(rows.count)
        var merged: [EndpointImport] = []
        merged.reserveCapacity(rows.count)
        for row in rows {
            let key = Key(app: row.app, token: row.token)
            guard let at = index[key] else {
                index[key] = merged.count
                merged.append(row)
                continue
            }
            if let userID = row.userID { merged[at].userID = userID }
            if let data = row.customUserData { merged[at].customUserData = data }
            if let enabled = row.enabled { merged[at].enabled = enabled }
            for topic in row.topics where !merged[at].topics.contains(topic) { merged[at].topics.append(topic) }
        }
        return merged
    }
}

extension EndpointImport {
    /// An endpoint's identity: its app and token.
    struct Key: Hashable {
        var app: String
        var token: String
    }
}

/// What a batch of ``EndpointImport`` rows did.
public struct ImportCounts: Sendable, Equatable {
    /// Endpoints created.
    public var created = 0
    /// Rows for endpoints that already existed (changed or not).
    public var existing = 0
    /// Existing endpoints whose user, custom data or state the rows changed.
    public var updated = 0
    /// Subscriptions created (existing ones are not counted).
    public var subscriptionsCreated = 0

    public init(created: Int = 0, existing: Int = 0, updated: Int = 0, subscriptionsCreated: Int = 0) {
        self.created = created
        self.existing = existing
        self.updated = updated
        self.subscriptionsCreated = subscriptionsCreated
    }

    public mutating func add(_ other: ImportCounts) {
        created += other.created
        existing += other.existing
        updated += other.updated
        subscriptionsCreated += other.subscriptionsCreated
    }
}

/// An endpoint as `pushgate export` writes it: the record and the names of its topics.
public struct ExportedEndpoint: Sendable, Equatable {
    public var endpoint: EndpointRecord
    /// In subscription order.
    public var topics: [String]

    public init(endpoint: EndpointRecord, topics: [String]) {
        self.endpoint = endpoint
        self.topics = topics
    }
}

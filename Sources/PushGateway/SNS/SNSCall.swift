import PushAWSQuery
import PushCore
import PushStore

/// One SNS request being answered: its parameters, its caller, and what the actions read and
/// write (the configuration as it was when the request came, the store, Publish).
struct SNSCall: Sendable {
    let action: String
    let parameters: QueryParameters
    let caller: Caller
    let configuration: GatewayConfiguration
    let store: any Store
    let publish: PublishService

    var arns: SNSARNs { configuration.sns.arns }

    // MARK: Parameters

    /// A parameter that must be given (and not be empty).
    func required(_ name: String) throws(SNSError) -> String {
        guard let value = parameters[name] else { throw SNSError.missingParameter(name) }
        guard !value.isEmpty else { throw SNSError.invalidParameter(name, "must not be empty") }
        return value
    }

    func optional(_ name: String) -> String? { parameters[name] }

    /// `true` or `false` (any case), as the SDKs write booleans.
    func boolean(_ name: String) throws(SNSError) -> Bool? {
        guard let value = parameters[name] else { return nil }
        switch value.lowercased() {
        case "true": return true
        case "false": return false
        default: throw SNSError.invalidParameter(name, "expected true or false, got \(TextCap.quoted(value))")
        }
    }

    /// A `name.entry.N.key/value` string map.
    func map(_ name: String, maxEntries: Int = 100) throws(SNSError) -> [(key: String, value: String)] {
        do {
            return try parameters.map(name, maxEntries: maxEntries)
        } catch {
            throw SNSError.invalidParameter(name, error.message)
        }
    }

    /// Refuses a write unless the caller is an admin.
    func requireAdmin() throws(SNSError) {
        do {
            try caller.requireAdmin(action)
        } catch {
            throw SNSError.authorization(error.message)
        }
    }

    // MARK: Things named by ARN

    /// The configured app a platform application ARN names.
    func application(_ parameter: String) throws(SNSError) -> AppConfiguration {
        let arn = try required(parameter)
        guard let (platform, name) = arns.readApplication(arn) else {
            throw SNSError.invalidParameter(parameter, "not a platform application ARN of \(arns.prefix)app/…")
        }
        guard let app = configuration.apps.first(where: { $0.name == name }), app.platformKey == platform else {
            throw SNSError.notFound("PlatformApplication does not exist")
        }
        return app
    }

    /// The endpoint an endpoint ARN names: its id's, when its app is the ARN's and so is its
    /// platform (an app no longer configured has no platform to compare: its endpoints stay
    /// reachable by the ARNs they were given, to be read and deleted).
    func endpoint(_ parameter: String) async throws(SNSError) -> EndpointRecord {
        let arn = try required(parameter)
        guard let (platform, app, id) = arns.readEndpoint(arn) else {
            throw SNSError.invalidParameter(parameter, "not an endpoint ARN of \(arns.prefix)endpoint/…")
        }
        let record: EndpointRecord
        do {
            record = try await store.endpoint(id: id)
        } catch  where error.code == .notFound {
            throw SNSError.notFound("Endpoint does not exist")
        } catch {
            throw SNSError(GRPCStatus(error, field: parameter), parameter: parameter)
        }
        let configured = configuration.apps.first { $0.name == app }
        guard record.app == app, configured == nil || configured?.platformKey.rawValue == platform else {
            throw SNSError.notFound("Endpoint does not exist")
        }
        return record
    }

    /// The topic name a topic ARN names (whether it exists is not checked).
    func topicName(_ parameter: String) throws(SNSError) -> String {
        let arn = try required(parameter)
        guard let name = arns.readTopic(arn), SNSNames.isTopicName(name) else {
            throw SNSError.invalidParameter(parameter)
        }
        return name
    }

    /// The name of an existing topic a topic ARN names.
    func existingTopic(_ parameter: String) async throws(SNSError) -> String {
        let name = try topicName(parameter)
        guard try await store(parameter, { () async throws(StoreError) in try await store.topicExists(name: name) })
        else { throw SNSError.notFound("Topic does not exist") }
        return name
    }

    /// An endpoint's ARN.
    func arn(of endpoint: EndpointRecord) -> String { endpointARN(app: endpoint.app, id: endpoint.id) }

    /// The ARN of endpoint `id` of `app` (an app no longer configured has no platform: `UNCONFIGURED`).
    func endpointARN(app: String, id: String) -> String {
        let platform = configuration.app(named: app)?.platformKey.rawValue ?? "UNCONFIGURED"
        return arns.endpoint(platformName: platform, app: app, id: id)
    }

    // MARK: The store

    /// A store call, its failure in SNS's terms (`parameter`: what it was about).
    func store<T>(_ parameter: String, _ body: () async throws(StoreError) -> T) async throws(SNSError) -> T {
        do {
            return try await body()
        } catch {
            throw SNSError(GRPCStatus(error, field: parameter), parameter: parameter)
        }
    }

    /// Logic shared with the gRPC API (it throws gRPC statuses), its refusal in SNS's terms.
    func shared<T>(_ parameter: String, _ body: () async throws(GRPCStatus) -> T) async throws(SNSError) -> T {
        do {
            return try await body()
        } catch {
            throw SNSError(error, parameter: parameter)
        }
    }
}

/// SNS's naming rules.
enum SNSNames {
    /// Topic names: 1-256 of A-Z, a-z, 0-9, `_` and `-` (a `.fifo` suffix is for FIFO topics,
    /// which Pushgate does not have).
    static func isTopicName(_ name: String) -> Bool { isWord(name, maxBytes: 256) }

    /// 1 to `maxBytes` of A-Z, a-z, 0-9, `_` and `-`: topic names, PublishBatch entry ids.
    static func isWord(_ name: String, maxBytes: Int) -> Bool {
        (1...maxBytes).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
    }
}

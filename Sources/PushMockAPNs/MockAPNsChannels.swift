import PushCore
import PushCredentials
import PushHTTP2
import PushMockSupport
import PushSync
import PushTLS

/// The broadcast channels of a mock APNs: what its channel management listener creates and
/// deletes, and what its push listener's broadcasts are checked against (docs/providers.md A.9,
/// A.10). Per bundle id, as APNs keeps them.
final class MockChannelTable: Sendable {
    private struct State {
        var channels: [String: [String: MessageStoragePolicy]] = [:]
        var generator: SplitMix64
    }

    private let state: Locked<State>
    /// Apple allows 10,000 channels per app and environment.
    static let limit = 10_000

    /// Ids (and request ids) drawn from `seed`: the same seed, the same ids.
    init(seed: UInt64) { state = Locked(State(generator: SplitMix64(seed: seed))) }

    /// A new channel's id (base64 of 16 bytes drawn from the seed), or nil at the limit.
    func create(bundleID: String, policy: MessageStoragePolicy) -> String? {
        state.withLock { state in
            guard state.channels[bundleID, default: [:]].count < Self.limit else { return nil }
            var bytes: [UInt8] = []
            for _ in 0..<2 {
                let word = state.generator.next()
                for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> shift)) }
            }
            let id = base64Encode(bytes)
            state.channels[bundleID, default: [:]][id] = policy
            return id
        }
    }

    func policy(bundleID: String, channelID: String) -> MessageStoragePolicy? {
        state.withLock { $0.channels[bundleID]?[channelID] }
    }

    func delete(bundleID: String, channelID: String) -> Bool {
        state.withLock { $0.channels[bundleID]?.removeValue(forKey: channelID) != nil }
    }

    func list(bundleID: String) -> [String] {
        state.withLock { $0.channels[bundleID].map { Array($0.keys).sorted() } ?? [] }
    }

    /// A fresh `apns-request-id`.
    func requestID() -> String {
        state.withLock { String(decoding: makeUUIDv4(&$0.generator), as: UTF8.self) }
    }

    var count: Int { state.withLock { $0.channels.values.reduce(0) { $0 + $1.count } } }

    /// Why a broadcast to `bundleID` is refused, or nil (the channel exists, the headers fit it),
    /// as Apple documents it (docs/providers.md A.10): `apns-channel-id` present (400
    /// MissingChannelId) and base64 (400 BadChannelId), the channel known (400
    /// ChannelNotRegistered: Apple's 404 is only BadPath), push type liveactivity (400
    /// InvalidPushType), `apns-priority` present and 10, 5 or 1 (400 BadPriority), `apns-expiration`
    /// present (400 BadExpirationDate, as APNs answers a broadcast without it), and 0 on a channel
    /// that stores nothing (400 BadExpirationDate).
    func broadcastRejection(bundleID: String, head: APNsRequestHead) -> (status: Int, reason: APNsReason)? {
        guard let channel = head.channelID else { return (400, .other("MissingChannelId")) }
        let id = String(decoding: channel, as: UTF8.self)
        guard ChannelID.isValid(id) else { return (400, .other("BadChannelId")) }
        guard let policy = policy(bundleID: bundleID, channelID: id) else {
            return (400, .other("ChannelNotRegistered"))
        }
        guard head.pushType == Array("liveactivity".utf8) else { return (400, .invalidPushType) }
        guard let priority = head.priority,
            priority == Array("10".utf8) || priority == Array("5".utf8) || priority == Array("1".utf8)
        else {
            return (400, .badPriority)
        }
        guard let expiration = head.expiration else { return (400, .badExpirationDate) }
        if policy == .noStorage, expiration != Array("0".utf8) { return (400, .badExpirationDate) }
        return nil
    }
}

/// Apple's channel management API, as the mock's second listener serves it (docs/providers.md A.9):
/// `POST /1/apps/<bundle>/channels` with `{"message-storage-policy":0|1,"push-type":"LiveActivity"}`
/// answers 201 with `apns-channel-id`; `GET` (read) and `DELETE` of `…/channels` name the channel in
/// `apns-channel-id` (200 with the policy / 204, or 400 ChannelNotRegistered); `GET …/all-channels` answers
/// `{"channels":[…]}`. Every answer carries `apns-request-id` (the request's, or a new one); errors
/// are `{"reason":…}`. Provider tokens are checked as on the push listener, and the push
/// listener's fault shares (500, 503, 429 TooManyRequests) apply too.
final class MockAPNsChannelAPI: MockRequestHandler {
    let shared: MockAPNsShared

    init(shared: MockAPNsShared) { self.shared = shared }

    func handle(_ request: MockRequest, now: UInt64) -> MockResponse {
        let requestID = request.headers["apns-request-id"] ?? shared.channels.requestID()
        let (operation, response) = answer(request)
        var answered = response
        answered.headers.append(HTTP2Header("apns-request-id", requestID))
        shared.stats.merge(channelDelta(request, operation: operation, status: answered.status), connectionID: 0)
        return answered
    }

    private func answer(_ request: MockRequest) -> (String, MockResponse) {
        let route = String(request.route)
        let parts = route.split(separator: "/", omittingEmptySubsequences: false)
        // "", "1", "apps", <bundle>, "channels" | "all-channels"
        guard parts.count == 5, parts[1] == "1", parts[2] == "apps", !parts[3].isEmpty else {
            return ("other", Self.error(404, "BadPath"))
        }
        let bundleID = String(parts[3])
        if let reason = tokenRejection(request.authorization) { return ("other", Self.error(403, reason)) }
        if let fault = fault() { return ("other", fault) }
        switch (request.method, parts[4]) {
        case ("POST", "channels"): return ("create", create(request, bundleID: bundleID))
        case ("GET", "channels"): return ("read", withChannel(request, bundleID: bundleID, read: true))
        case ("DELETE", "channels"): return ("delete", withChannel(request, bundleID: bundleID, read: false))
        case ("GET", "all-channels"):
            var writer = JSONWriter(reservingCapacity: 64)
            writer.beginObject()
            writer.key("channels")
            writer.beginArray()
            for id in shared.channels.list(bundleID: bundleID) { writer.string(id) }
            writer.endArray()
            writer.endObject()
            return ("list", .json(200, writer.bytes, contentType: "application/json"))
        case (_, "channels"), (_, "all-channels"): return ("other", Self.error(405, "MethodNotAllowed"))
        default: return ("other", Self.error(404, "BadPath"))
        }
    }

    private func create(_ request: MockRequest, bundleID: String) -> MockResponse {
        guard let json = try? JSONParser.parse(request.body), let members = json.objectMembers else {
            return Self.error(400, "BadMessageStoragePolicy")
        }
        var policy: MessageStoragePolicy?
        var pushType: String?
        for (key, value) in members {
            if key == "message-storage-policy", case .number(let text) = value, let number = Int(text) {
                policy = MessageStoragePolicy(rawValue: number)
            }
            if key == "push-type", case .string(let text) = value { pushType = text }
        }
        guard let policy else { return Self.error(400, "BadMessageStoragePolicy") }
        guard pushType == "LiveActivity" else { return Self.error(400, "InvalidPushType") }
        guard let id = shared.channels.create(bundleID: bundleID, policy: policy) else {
            return Self.error(429, "TooManyChannels")
        }
        return MockResponse(status: 201, headers: [HTTP2Header("apns-channel-id", id)])
    }

    private func withChannel(_ request: MockRequest, bundleID: String, read: Bool) -> MockResponse {
        guard let id = request.headers["apns-channel-id"] else { return Self.error(400, "MissingChannelId") }
        guard ChannelID.isValid(id) else { return Self.error(400, "BadChannelId") }
        guard let policy = shared.channels.policy(bundleID: bundleID, channelID: id) else {
            return Self.error(400, "ChannelNotRegistered")
        }
        guard read else {
            _ = shared.channels.delete(bundleID: bundleID, channelID: id)
            return MockResponse(status: 204)
        }
        let body = #"{"message-storage-policy":\#(policy.rawValue),"push-type":"LiveActivity"}"#
        return .json(200, Array(body.utf8), contentType: "application/json")
    }

    /// nil when the request may proceed (verification off, or a valid, fresh token).
    private func tokenRejection(_ authorization: String?) -> String? {
        let configuration = shared.configuration
        guard configuration.verifiesTokens else { return nil }
        guard let authorization, !authorization.isEmpty else { return "MissingProviderToken" }
        guard authorization.lowercased().hasPrefix("bearer "),
            let issuedAt = configuration.providerTokenIssuedAt(String(authorization.dropFirst(7)))
        else { return "InvalidProviderToken" }
        if wallClockSeconds() - issuedAt > configuration.tokenMaxAgeSeconds { return "ExpiredProviderToken" }
        return nil
    }

    private func fault() -> MockResponse? {
        guard shared.injectsFaults else { return nil }
        let draw = shared.nextFaultDraw()
        if draw < shared.fail500Threshold { return Self.error(500, "InternalServerError") }
        if draw < shared.fail503Threshold { return Self.error(503, "ServiceUnavailable") }
        if draw < shared.fail429Threshold { return Self.error(429, "TooManyRequests") }
        return nil
    }

    private static func error(_ status: Int, _ reason: String) -> MockResponse {
        var writer = JSONWriter(reservingCapacity: 48)
        writer.beginObject()
        writer.key("reason")
        writer.string(reason)
        writer.endObject()
        return .json(status, writer.bytes, statsError: reason, contentType: "application/json")
    }

    private func channelDelta(_ request: MockRequest, operation: String, status: Int) -> StatsDelta {
        var delta = StatsDelta()
        delta.channelRequests["\(operation) \(status)", default: 0] += 1
        if shared.recordsRequests {
            var headers = [
                HTTP2Header(":method", request.method), HTTP2Header(":path", request.path),
                HTTP2Header(":authority", request.authority),
            ]
            for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
                headers.append(HTTP2Header(name, value))
            }
            delta.recorded.append(
                MockAPNsRequest(
                    connectionID: request.connectionID, streamID: request.streamID,
                    token: request.headers["apns-channel-id"] ?? "", headers: headers,
                    payload: Array(request.body.prefix(4096)), apnsID: ""))
        }
        return delta
    }
}

/// The channel listener's connections are not counted (its requests are, by operation and status).
struct MockChannelListenerEvents: MockConnectionEvents {
    func connectionOpened() {}
    func connectionClosed(cancelledStreams: Int, handshakeFailed: Bool) {}
    func streamOpened(inFlight: Int) {}
    func streamCancelled() {}
    func goAwaySent() {}
    func answered(status: Int, error: String?) {}
}

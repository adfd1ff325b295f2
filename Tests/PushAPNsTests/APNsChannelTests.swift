import PushCore
import PushCredentials
import PushDelivery
import PushHTTP2
import PushMockAPNs
import PushPosix
import PushTLS
import PushTransport
import Testing

@testable import PushAPNs

/// Broadcast and channel management requests: how they are written, what their answers mean
/// (no sockets), and the whole round trip against mock-apns on loopback.
@Suite("APNs broadcast channels", .timeLimit(.minutes(1)))
struct APNsChannelTests {
    static let channelID = "dHN0LXNyY2gtY2hubA=="

    func names(_ headers: [HTTP2Header]) -> [String: String] {
        Dictionary(headers.map { ($0.nameString, $0.valueString) }, uniquingKeysWith: { a, _ in a })
    }

    @Test("Apple's channel management hosts and ports")
    func hosts() {
        #expect(HTTPSOrigin.apnsChannelsProduction.authority == "api-manage-broadcast.push.apple.com:2196")
        #expect(HTTPSOrigin.apnsChannelsSandbox.authority == "api-manage-broadcast.sandbox.push.apple.com:2195")
    }

    @Test("a broadcast goes to /4/broadcasts/apps/<bundle> with its channel in apns-channel-id and no topic")
    func broadcastHeaders() throws {
        let collector = DeliveryCollector(placeholders: [])
        let prepared = try NotificationValidator.prepareBroadcast(
            NotificationRequest(
                app: "", tokens: [], liveActivity: .init(event: "update", contentStateJSON: #"{"a":1}"#, timestamp: 7)),
            at: "notification", bundleID: "com.x", channelID: Self.channelID, policy: .noStorage
        ).get()
        let job = APNsJob(
            prepared, notificationIndex: 0, authority: "api.push.apple.com", usesProviderToken: true,
            collector: collector)
        let headers = job.headers(token: Self.channelID, authorization: Array("bearer x".utf8))
        #expect(
            headers.map(\.nameString) == [
                ":method", ":scheme", ":authority", ":path", "authorization", "apns-channel-id", "apns-push-type",
                "apns-priority", "apns-expiration",
            ])
        let fields = names(headers)
        #expect(fields[":path"] == "/4/broadcasts/apps/com.x")
        #expect(fields["apns-channel-id"] == Self.channelID)
        #expect(fields["apns-push-type"] == "liveactivity")
        #expect(fields["apns-expiration"] == "0", "a policy-0 channel takes expiration 0, sent as such")
        #expect(String(decoding: job.payload, as: UTF8.self).contains(#""event":"update""#))
    }

    @Test("channel requests: method, path, apns-channel-id for read and delete, the create's body")
    func channelHeaders() {
        let collector = DeliveryCollector(placeholders: [])
        func job(_ operation: APNsChannelRequest.Operation, requestID: String? = nil) -> APNsJob {
            APNsJob(
                channelRequest: APNsChannelRequest(operation, bundleID: "com.x", requestID: requestID),
                notificationIndex: 0, authority: "api-manage-broadcast.push.apple.com:2196",
                usesProviderToken: false, collector: collector)
        }
        let create = job(.create(.mostRecent), requestID: "0309f412-aa57-46a8-9ac6-b5aeca8c4594")
        let created = names(create.headers(token: "", authorization: nil))
        #expect(created[":method"] == "POST" && created[":path"] == "/1/apps/com.x/channels")
        #expect(created[":authority"] == "api-manage-broadcast.push.apple.com:2196")
        #expect(created["apns-request-id"] == "0309f412-aa57-46a8-9ac6-b5aeca8c4594")
        #expect(created["apns-channel-id"] == nil && created["content-type"] == "application/json")
        #expect(
            String(decoding: create.payload, as: UTF8.self)
                == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
        for (operation, method) in [(APNsChannelRequest.Operation.read, "GET"), (.delete, "DELETE")] {
            let fields = names(job(operation).headers(token: Self.channelID, authorization: nil))
            #expect(fields[":method"] == method && fields[":path"] == "/1/apps/com.x/channels")
            #expect(fields["apns-channel-id"] == Self.channelID)
            #expect(job(operation).payload.isEmpty)
        }
        let list = names(job(.list).headers(token: "", authorization: nil))
        #expect(
            list[":method"] == "GET" && list[":path"] == "/1/apps/com.x/all-channels" && list["apns-channel-id"] == nil)
    }

    @Test("answers: 201 with the channel id, 204, 404 ChannelNotRegistered, 400 BadChannelId, 429 TooManyRequests")
    func outcomes() {
        let dialect = APNsDialect(credentials: .certificate, api: .channelManagement)
        func outcome(_ status: Int, _ body: String = "", id: String = "") -> ProviderOutcome {
            dialect.outcome(of: ProviderResponse(status: status, id: id, body: Array(body.utf8)), token: "t", now: 0)
        }
        #expect(dialect.idHeader == Array("apns-channel-id".utf8))
        #expect(APNsDialect(credentials: .certificate).idHeader == Array("apns-id".utf8))
        #expect(outcome(201, id: Self.channelID) == .delivered(id: Self.channelID, httpStatus: 201))
        #expect(outcome(204) == .delivered(id: "", httpStatus: 204))
        #expect(
            outcome(404, #"{"reason":"ChannelNotRegistered"}"#)
                == .rejected(
                    reason: "ChannelNotRegistered", httpStatus: 404, unregisteredAt: 0, invalidatesToken: false))
        #expect(
            outcome(400, #"{"reason":"BadChannelId"}"#)
                == .rejected(reason: "BadChannelId", httpStatus: 400, unregisteredAt: 0, invalidatesToken: false))
        #expect(
            outcome(429, #"{"reason":"TooManyRequests"}"#)
                == .transient(reason: "TooManyRequests", httpStatus: 429, retry: .afterBackoff(notBefore: nil)))
        #expect(
            outcome(403, #"{"reason":"ExpiredProviderToken"}"#)
                == .transient(reason: "ExpiredProviderToken", httpStatus: 403, retry: .afterRenewingAuthorization))
    }

    @Test("each API's dialect takes only its own requests")
    func jobsByAPI() {
        let collector = DeliveryCollector(placeholders: [])
        let channel = PreparedPush.apnsChannel(APNsChannelRequest(.list, bundleID: "com.x"))
        #expect(
            APNsDialect(credentials: .certificate).makeJob(for: channel, notificationIndex: 0, collector: collector)
                == nil)
        #expect(
            APNsDialect(credentials: .certificate, api: .channelManagement).makeJob(
                for: channel, notificationIndex: 0, collector: collector) != nil)
    }

    // MARK: Loopback

    @Test("against mock-apns: create, broadcast, read, delete, then ChannelNotRegistered; one provider token for all")
    func loopback() async throws {
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "channels-test")
        defer { group.shutdown() }
        let key = try ES256Signer.generateP8()
        var configuration = MockAPNsConfiguration.defaults
        configuration.verifyTokens = ["KEY1234567": try ES256Verifier(publicKeyPEM: key.publicKeyPEM)]
        configuration.teamID = "TEAM123456"
        configuration.channelsListen = ("127.0.0.1", 0)
        let mock = try MockAPNsServer(configuration: configuration, group: group)
        defer { mock.close() }
        let tokens = ProviderTokenCache(
            teamID: "TEAM123456", keyID: "KEY1234567", signer: try ES256Signer(p8PEM: key.privateKeyPEM),
            clock: unixSeconds)
        let tls = try TLSContext.client(caPEM: mock.certificatePEM!)
        let pushOrigin = HTTPSOrigin(host: "127.0.0.1", port: mock.localPort)
        let channelOrigin = HTTPSOrigin(host: "127.0.0.1", port: try #require(mock.channelsPort))
        let push = ProviderClient(
            name: "live", endpoint: pushOrigin,
            dialect: APNsDialect(credentials: .providerToken(tokens), authority: pushOrigin.authority),
            tlsContext: tls, configuration: ProviderClientConfiguration(), group: group)
        let channels = ProviderClient(
            name: "live", endpoint: channelOrigin,
            dialect: APNsDialect(
                credentials: push.dialect.credentials(), authority: channelOrigin.authority, api: .channelManagement),
            tlsContext: tls, configuration: ProviderClientConfiguration(), group: group)
        defer {
            push.shutdown()
            channels.shutdown()
        }
        func channelRequest(_ request: APNsChannelRequest) async -> DeliveryResult {
            #expect(channels.reserve(1))
            return await channels.sendAndWait(.apnsChannel(request), deadline: .now + .seconds(20))[0]
        }
        func broadcast(_ channelID: String, expiration: Int64 = 0) async throws -> DeliveryResult {
            var prepared = try NotificationValidator.prepareBroadcast(
                NotificationRequest(
                    app: "", tokens: [],
                    liveActivity: .init(event: "update", contentStateJSON: #"{"s":1}"#, timestamp: 1)
                ), at: "notification", bundleID: "com.x", channelID: channelID, policy: .noStorage
            ).get()
            if expiration != 0 { prepared.expiration = expiration }
            #expect(push.reserve(1))
            return await push.sendAndWait(.apns(prepared), deadline: .now + .seconds(20))[0]
        }

        let created = await channelRequest(APNsChannelRequest(.create(.noStorage), bundleID: "com.x"))
        #expect(created.status == .delivered && created.httpStatus == 201)
        let id = created.providerID
        #expect(ChannelID.isValid(id))
        #expect(try await broadcast(id).status == .delivered)
        let stored = try await broadcast(id, expiration: 1_900_000_000)
        #expect(stored.status == .rejected && stored.reason == "BadExpirationDate", "policy 0 takes expiration 0 only")
        #expect(await channelRequest(APNsChannelRequest(.read, bundleID: "com.x", channelID: id)).httpStatus == 200)
        #expect(await channelRequest(APNsChannelRequest(.list, bundleID: "com.x")).httpStatus == 200)
        let deleted = await channelRequest(APNsChannelRequest(.delete, bundleID: "com.x", channelID: id))
        #expect(deleted.status == .delivered && deleted.httpStatus == 204)
        let reread = await channelRequest(APNsChannelRequest(.read, bundleID: "com.x", channelID: id))
        // Apple answers an unknown channel 400 ChannelNotRegistered (404 is only BadPath).
        #expect(reread.status == .rejected && reread.httpStatus == 400 && reread.reason == "ChannelNotRegistered")
        let gone = try await broadcast(id)
        #expect(gone.status == .rejected && gone.httpStatus == 400 && gone.reason == "ChannelNotRegistered")
        let bad = await channelRequest(APNsChannelRequest(.read, bundleID: "com.x", channelID: "not base64!"))
        #expect(bad.status == .rejected && bad.reason == "BadChannelId")

        let stats = mock.stats
        #expect(stats.broadcasts == 1)
        #expect(stats.channels == 0)
        #expect(stats.channelRequests["create 201"] == 1 && stats.channelRequests["read 200"] == 1)
        #expect(stats.channelRequests["delete 204"] == 1 && stats.channelRequests["list 200"] == 1)
        #expect(stats.channelRequests["read 400"] == 2)
        let create = try #require(
            stats.recentRequests.first {
                $0.header(":method") == "POST" && $0.header(":path")?.hasPrefix("/1/") == true
            })
        #expect(create.header(":authority") == channelOrigin.authority)
        #expect(create.payloadString == #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)
        let sent = try #require(stats.recentRequests.first { $0.header(":path") == "/4/broadcasts/apps/com.x" })
        #expect(sent.header("apns-channel-id") == id && sent.header("apns-expiration") == "0")
        #expect(sent.header("authorization") == create.header("authorization"))
        #expect(tokens.signings == 1, "pushes and channel requests share the app's one provider token")
    }
}

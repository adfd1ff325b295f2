import PushCore
import PushPosix
import PushProto
import PushStore
import PushSync
import PushTestSupport
import Testing

@testable import PushGateway

@Suite("Webhooks and the delivery log")
struct WebhookTests {
    private func parse(_ json: String) throws(ConfigurationError) -> GatewayConfiguration {
        try GatewayConfiguration.parse(json: Array(json.utf8))
    }

    private func error(_ json: String) -> String {
        do {
            _ = try parse(json)
            return "no error"
        } catch {
            return error.description
        }
    }

    private static let apps = #""apps": [{"name": "prod", "platform": "apns", "bundle_id": "b"}]"#

    private func webhook(_ fields: String) -> String {
        "{\(Self.apps), \"webhooks\": [{\(fields)}]}"
    }

    private static let minimal = #""name": "crm", "url": "https://h.example/p", "secret_file": "/s""#

    @Test("a webhook's defaults, every key read, and delivery_log's")
    func keys() throws {
        let defaults = try #require(try parse(webhook(Self.minimal)).webhooks.first)
        #expect(defaults.events == [.endpointDisabled, .messageFinished, .rejected, .failed])
        #expect(defaults.apps.isEmpty && defaults.deliveredSampleEvery == 1 && defaults.batchSize == 100)
        #expect(defaults.maxPending == 100_000 && defaults.maxAgeHours == 24 && defaults.timeoutMilliseconds == 10_000)
        let every = try #require(
            try parse(
                webhook(
                    Self.minimal + #"""
                        , "events": ["delivered", "message_cancelled"], "apps": ["prod"], "delivered_sample_every": 10,
                        "ca_file": "/ca", "proxy": "direct", "batch_size": 5, "max_pending": 7, "max_age_hours": 2,
                        "timeout_ms": 500
                        """#)
            ).webhooks.first)
        #expect(every.events == [.delivered, .messageCancelled] && every.apps == ["prod"])
        #expect(every.deliveredSampleEvery == 10 && every.caFile == "/ca" && every.proxy == "direct")
        #expect(
            every.batchSize == 5 && every.maxPending == 7 && every.maxAgeHours == 2 && every.timeoutMilliseconds == 500)
        let log = try parse(
            #"{"delivery_log": {"enabled": false, "success_sample_percent": 1.5, "retention_hours": 6}}"#)
        #expect(
            !log.deliveryLog.enabled && log.deliveryLog.successSamplePercent == 1.5
                && log.deliveryLog.retentionHours == 6)
        #expect(try parse("{}").deliveryLog == DeliveryLogSettings())
    }

    @Test(
        "bad webhook settings are refused, naming the key",
        arguments: [
            (#""url": "https://h/p", "secret_file": "/s""#, "config.webhooks[0].name: required"),
            (#""name": "Crm!", "url": "https://h/p", "secret_file": "/s""#, "config.webhooks[0].name:"),
            (#""name": "crm", "url": "http://h/p", "secret_file": "/s""#, "config.webhooks[0].url:"),
            (#""name": "crm", "url": "https://h/p""#, "config.webhooks[0].secret_file: required"),
            (
                #""name": "crm", "url": "https://h/p", "secret_file": "/s", "events": ["bounced"]"#,
                "config.webhooks[0].events[0]:"
            ),
            (#""name": "crm", "url": "https://h/p", "secret_file": "/s", "events": []"#, "config.webhooks[0].events:"),
            (
                #""name": "crm", "url": "https://h/p", "secret_file": "/s", "apps": ["nope"]"#,
                "config.webhooks[0].apps[0]: no app is named"
            ),
            (
                #""name": "crm", "url": "https://h/p", "secret_file": "/s", "batch_size": 0"#,
                "config.webhooks[0].batch_size:"
            ),
            (
                #""name": "crm", "url": "https://h/p", "secret_file": "/s", "batch_size": 50, "max_pending": 10"#,
                "config.webhooks[0].max_pending:"
            ),
            (#""name": "crm", "url": "https://h/p\r\nx: y", "secret_file": "/s""#, "config.webhooks[0].url:"),
            (
                #""name": "crm", "url": "https://h/p", "secret_file": "/s", "colour": 1"#,
                "config.webhooks[0]: unknown key"
            ),
        ])
    func badWebhooks(fields: String, expected: String) {
        let message = error(webhook(fields))
        #expect(message.hasPrefix(expected), "\(message)")
        #expect(message.contains("webhook"), "\(message)")
    }

    @Test("two webhooks with one name, and a sample percent out of range, are refused")
    func badSets() {
        #expect(
            error("{\(Self.apps), \"webhooks\": [{\(Self.minimal)}, {\(Self.minimal)}]}").hasPrefix(
                "config.webhooks[1].name: duplicate webhook name"))
        #expect(
            error(#"{"delivery_log": {"success_sample_percent": 101}}"#).hasPrefix(
                "config.delivery_log.success_sample_percent:"))
    }

    @Test("backoff doubles from 1 s to 30 s, jittered down to half, never sooner than Retry-After; a success resets it")
    func backoff() {
        var backoff = WebhookBackoff()
        #expect(backoff.failed(retryAfter: nil, unit: 0.999_999) < .seconds(1) + .milliseconds(1))
        #expect(backoff.failed(retryAfter: nil, unit: 0) == .seconds(1))
        #expect(backoff.failed(retryAfter: nil, unit: 0.999_999) > .milliseconds(3_990))
        for _ in 0..<10 { _ = backoff.failed(retryAfter: nil, unit: 0.5) }
        #expect(backoff.failed(retryAfter: nil, unit: 0.999_999) <= .seconds(30))
        #expect(backoff.failed(retryAfter: .seconds(120), unit: 0) == .seconds(120))
        #expect(backoff.failed(retryAfter: .seconds(86_400), unit: 0) == .seconds(600))
        backoff.succeeded()
        #expect(backoff.failures == 0 && backoff.failed(retryAfter: nil, unit: 0) == .milliseconds(500))
    }

    private func configuration(
        _ name: String, events: Set<WebhookConfiguration.EventKind>, apps: Set<String> = [],
        sampleEvery: Int = 1
    ) -> WebhookConfiguration {
        var webhook = WebhookConfiguration(name: name, url: "https://h/p", secretFile: "/s")
        webhook.events = events
        webhook.apps = apps
        webhook.deliveredSampleEvery = sampleEvery
        return webhook
    }

    @Test("the router gives each webhook the kinds and apps it asked for, successes sampled per webhook")
    func router() throws {
        let router = WebhookRouter([
            configuration("all", events: [.rejected, .delivered, .messageFinished], sampleEvery: 2),
            configuration("prod", events: [.rejected, .messageFinished], apps: ["prod"]),
        ])
        var event = PushgateV1.DeliveryEvent()
        event.kind = .rejected
        event.app = "prod"
        event.reason = "Unregistered"
        let rows = router.rows(for: event, kind: .rejected, apps: ["prod"], now: 5)
        #expect(rows.map(\.webhook) == ["all", "prod"] && rows.allSatisfy { $0.createdAt == 5 })
        let parsed = try PushgateV1.DeliveryEvent(jsonBytes: Array(rows[0].json.utf8))
        #expect(parsed == event)
        #expect(router.rows(for: event, kind: .rejected, apps: ["beta"], now: 5).map(\.webhook) == ["all"])
        event.kind = .delivered
        let delivered = (0..<6).flatMap { _ in router.rows(for: event, kind: .delivered, apps: ["prod"], now: 5) }
        #expect(delivered.count == 3)
        #expect(!router.wants(.endpointDisabled, apps: nil) && router.wants(.messageFinished, apps: ["beta"]))
        #expect(router.names(wanting: .messageFinished, apps: nil) == ["all", "prod"])
        #expect(router.names(wanting: .messageFinished, apps: ["beta"]) == ["all"])
        var message = MessageRecord(id: "m", topic: "t", message: "hi", publishedAt: 1, state: .completed, total: 3)
        message.rejected = 2
        let finished = try PushgateV1.DeliveryEvent(
            jsonBytes: Array(WebhookRouter.messageFinished(message, at: 9).utf8))
        #expect(finished.kind == .messageFinished && finished.messageID == "m" && finished.time == 9)
        let summary = try #require(finished.message)
        #expect(summary.total == 3 && summary.rejected == 2 && summary.state == .completed)
    }

    @Test("the delivery log keeps every failure, a share of successes, nothing when off")
    func sample() {
        let (delivered, failed) = (true, false)
        var settings = DeliveryLogSettings()
        var none = DeliveryLogSample(settings)
        let noneKeeps = (failed: none.logs(delivered: failed), delivered: none.logs(delivered: delivered))
        #expect(noneKeeps.failed && !noneKeeps.delivered)
        settings.successSamplePercent = 100
        var all = DeliveryLogSample(settings)
        let allKeeps = all.logs(delivered: delivered)
        #expect(allKeeps)
        settings.successSamplePercent = 1
        var some = DeliveryLogSample(settings)
        var kept = 0
        for _ in 0..<100_000 where some.logs(delivered: delivered) { kept += 1 }
        #expect((700...1300).contains(kept), "\(kept)")
        settings.enabled = false
        var off = DeliveryLogSample(settings)
        let offKeeps = (failed: off.logs(delivered: failed), delivered: off.logs(delivered: delivered))
        #expect(!offKeeps.failed && !offKeeps.delivered)
    }

    @Test("a page's refusals become log rows and webhook events, to be written with its commit")
    func pageRecords() async throws {
        let client = FakeDeliveryClient(name: "app", rejecting: ["token-r1"])
        let send = try NotificationDeliveryTests.Rig().send([(app: "a", tokens: [NotificationDeliveryTests.token])])
        let template = try #require(send.items[0].notification)
        let events = DeliveryEvents(
            log: Log(level: .error), logTokens: false,
            webhooks: WebhookRouter([configuration("crm", events: [.rejected, .delivered])]))
        var sender = FanOutPageSender(events: events, metrics: nil, holds: false, maxShare: 10)
        sender.deliveryLog.successSamplePercent = 100
        let recipients = ["r0", "r1"].map { FanOutChunkMachineTests.target($0) }
        let page = FanOutPageSender.PreparedPage(
            counts: FanOutCounts(total: 2), deliveries: [(template, recipients, client, nil)])
        let counts = await sender.sendPage(page, messageID: "m1")
        #expect(counts.delivered == 1 && counts.rejected == 1)
        #expect(counts.records.deliveries.map(\.status) == [.delivered, .rejected])
        #expect(counts.records.deliveries[1].reason == "Unregistered" && counts.records.deliveries[1].httpStatus == 410)
        #expect(counts.records.deliveries.allSatisfy { $0.messageID == "m1" })
        #expect(counts.records.events.map(\.webhook) == ["crm", "crm"])
        let kinds = try counts.records.events.map { try PushgateV1.DeliveryEvent(jsonBytes: Array($0.json.utf8)).kind }
        #expect(kinds == [.delivered, .rejected])
    }

    @Test("the purger deletes what is older than the retention by its clock, in batches")
    func purge() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore.open(path: directory.path(of: "store.sqlite"))
        _ = try await store.bulkCreateSubscribed(topic: "t", app: "a", tokens: ["x"], now: 0)
        try await store.insertMessage(MessageRecord(id: "m", topic: "t", message: "hi", publishedAt: 0))
        let policy = FanOutLeasePolicy(owner: "o", leaseMillis: 1000, chunkSize: 10)
        let chunk = try #require(try await store.claimFanOutChunk(policy, now: 0))
        let hour: Int64 = 3_600_000
        let rows = (0..<2_500).map { index in
            DeliveryLogRecord(
                messageID: "m", endpointID: "e", app: "a", token: "x", status: .failed, reason: "r", httpStatus: 0,
                providerID: "", attempts: 1, time: index < 2_100 ? 0 : 10 * hour)
        }
        try await store.recordChunkProgress(
            chunk, policy: policy, cursor: chunk.cursor, counts: ProgressCounts(), state: .fanningOut, holds: .none,
            records: FanOutRecords(deliveries: rows), now: 1)
        let clock = Locked<Int64>(72 * hour)
        let purger = DeliveryLogPurger(
            store: store, retentionHours: 72, metrics: nil, log: Log(level: .error), clock: { clock.withLock { $0 } })
        #expect(await purger.purge() == 0)
        clock.withLock { $0 = 72 * hour + 1 }
        #expect(await purger.purge() == 2_100)
        clock.withLock { $0 = 82 * hour + 1 }
        #expect(await purger.purge() == 400)
        await store.close()
    }
}

import PushCore
import PushDelivery
import PushPosix
import PushStore
import PushTransport

/// Sends one webhook's outbox (docs/webhooks.md): takes the oldest batch (holding the webhook's
/// lease, so one instance sends at a time), POSTs it through the engine, and removes it on a 2xx
/// or a refusal (another 4xx); anything else sends the same batch again after a
/// ``WebhookBackoff``. Every few seconds it trims the outbox to `max_pending` and `max_age_hours`.
final class WebhookSender: Sendable {
    /// How often an idle sender looks for new events.
    static let idlePoll: Duration = .milliseconds(250)
    /// How often an instance that does not hold a webhook looks whether its lease was let go.
    static let standbyPoll: Duration = .seconds(2)
    static let trimEveryMillis: Int64 = 5_000
    /// The most events one trimming step drops (one short transaction each).
    static let trimStep = 10_000

    /// The webhook's lease: longer than a POST may take, so no other instance sends while one is
    /// in flight; renewed by every take, and while backing off.
    let leaseMillis: Int64

    let configuration: WebhookConfiguration
    let client: any DeliveryClient
    private let origin: HTTPSOrigin
    private let path: String
    private let store: any Store
    private let owner: String
    private let metrics: GatewayMetrics?
    private let log: Log

    init(
        configuration: WebhookConfiguration, client: any DeliveryClient, store: any Store, owner: String,
        metrics: GatewayMetrics?, log: Log
    ) {
        self.configuration = configuration
        self.client = client
        // Checked when the configuration was read.
        let (origin, path) = HTTPSOrigin.parse(url: configuration.url)!
        self.origin = origin
        self.path = path
        self.store = store
        self.owner = owner
        self.metrics = metrics
        self.log = log
        leaseMillis = max(30_000, Int64(configuration.timeoutMilliseconds) + 20_000)
    }

    private var name: String { configuration.name }

    func run() async {
        var backoff = WebhookBackoff()
        var lastTrim: Int64 = 0
        while !Task.isCancelled {
            let batch: WebhookBatch?
            do {
                batch = try await take()
            } catch {
                log.warning("could not read the webhook outbox", ["webhook": name, "error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            // Another instance holds the webhook: look again soon (a stopping one lets go at once).
            guard let batch else {
                try? await Task.sleep(for: Self.standbyPoll)
                continue
            }
            if unixMilliseconds() - lastTrim >= Self.trimEveryMillis {
                lastTrim = unixMilliseconds()
                await trim()
            }
            guard !batch.isEmpty else {
                try? await Task.sleep(for: Self.idlePoll)
                continue
            }
            guard let body = await render(batch) else {
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            let result = await post(batch.id, body: body)
            switch result.status {
            case .delivered:
                await complete(batch)
                metrics?.webhookSent(name, batch.events.count)
                if batch.events.count < configuration.batchSize,
                    let pending = try? await store.pendingOutbox(webhook: name)
                {
                    // Likely drained: the gauge says so now rather than at the next trim.
                    metrics?.webhookPending(name, pending)
                }
                if backoff.failures > 0 {
                    log.info("webhook delivers again", ["webhook": name, "failures": "\(backoff.failures)"])
                }
                backoff.succeeded()
            case .rejected:
                await complete(batch)
                metrics?.webhookDropped(name, reason: "refused", batch.events.count)
                log.warning(
                    "webhook refused a batch; its events are dropped",
                    [
                        "webhook": name, "delivery": batch.id, "events": "\(batch.events.count)",
                        "http_status": "\(result.httpStatus)", "reason": result.reason,
                    ])
                backoff.succeeded()
            case .failed:
                metrics?.webhookRetried(name)
                let wait = backoff.failed(
                    retryAfter: WebhookResponseClassifier.retryAfter(inReason: result.reason),
                    unit: Double.random(in: 0..<1))
                if backoff.failures == 1 || backoff.failures % 10 == 0 {
                    log.warning(
                        "webhook delivery failed; sending the batch again later",
                        [
                            "webhook": name, "delivery": batch.id, "http_status": "\(result.httpStatus)",
                            "reason": result.reason, "failures": "\(backoff.failures)", "retry_in": "\(wait)",
                        ])
                }
                await sleepHoldingLease(wait)
                lastTrim = unixMilliseconds()
            }
        }
    }

    /// Takes (or renews) the webhook's lease and its oldest batch; nil: another instance holds it.
    private func take() async throws(StoreError) -> WebhookBatch? {
        try await store.takeWebhookBatch(
            webhook: name, owner: owner, limit: configuration.batchSize, leaseMillis: leaseMillis,
            now: unixMilliseconds())
    }

    /// The batch's body, `{"events":[…]}`: stored events as written, finished messages rendered
    /// from the store now (their counts are final). nil: the store failed.
    private func render(_ batch: WebhookBatch) async -> [UInt8]? {
        var body = Array(#"{"events":["#.utf8)
        var first = true
        if batch.dropped > 0 {
            // What was dropped before the batch formed, said first: the events after it are the ones kept.
            body.append(contentsOf: WebhookRouter.eventsDropped(Int(batch.dropped), at: batch.formedAt).utf8)
            first = false
        }
        for event in batch.events {
            let json: String
            switch event {
            case .json(let text): json = text
            case .messageCancelled(let id, let cancelled, let at):
                json = WebhookRouter.messageCancelled(id, cancelled: cancelled, at: at)
            case .messageFinished(let id, let at):
                do {
                    json = WebhookRouter.messageFinished(try await store.message(id: id), at: at)
                } catch  where error.code == .notFound {
                    continue
                } catch {
                    log.warning("could not read a finished message", ["webhook": name, "error": "\(error)"])
                    return nil
                }
            }
            if !first { body.append(UInt8(ascii: ",")) }
            first = false
            body.append(contentsOf: json.utf8)
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }

    /// One POST of the batch; its result (FAILED `DeadlineExceeded` past `timeout_ms`).
    private func post(_ id: String, body: [UInt8]) async -> DeliveryResult {
        let post = PreparedWebhookPost(
            deliveryID: id, authority: origin.authority, path: path, body: body, expiration: nil)
        // Not waiting for room: a POST that started after its lease ran out could race another
        // instance's. The client's queue is full only of POSTs past their deadline, still held.
        guard client.reserve(1) else {
            return DeliveryResult(
                notificationIndex: 0, token: id, status: .failed, code: .deadlineExceeded,
                reason: "the webhook's earlier requests are still unanswered")
        }
        let results = await client.sendAndWait(
            .webhook(post), deadline: .now + .milliseconds(configuration.timeoutMilliseconds))
        return results.first
            ?? DeliveryResult(notificationIndex: 0, token: id, status: .failed, code: .deadlineExceeded)
    }

    private func complete(_ batch: WebhookBatch) async {
        do {
            try await store.completeWebhookBatch(webhook: name, batch: batch.id)
        } catch {
            // Sent again later, with the same id: at least once.
            log.warning("could not remove a delivered webhook batch", ["webhook": name, "error": "\(error)"])
        }
    }

    /// Waits `duration`, renewing the webhook's lease (and trimming its outbox) meanwhile, so no
    /// other instance sends the batch while this one backs off, and a receiver that is down for
    /// long does not let the outbox grow past `max_pending`.
    private func sleepHoldingLease(_ duration: Duration) async {
        let slice = min(Duration.milliseconds(leaseMillis / 3), .milliseconds(Self.trimEveryMillis))
        var left = duration
        while left > .zero, !Task.isCancelled {
            let step = min(left, slice)
            try? await Task.sleep(for: step)
            left -= step
            if left > .zero {
                // Lost (the store was out of reach for longer than the lease): the new holder sends
                // and trims; this one only looks again.
                guard (try? await take()) != nil else { return }
                await trim()
            }
        }
    }

    /// Drops what is too old or too much (a bounded step at a time), counts it, and tells the
    /// receiver in a `KIND_EVENTS_DROPPED` event; updates the pending gauge.
    private func trim() async {
        do {
            var trim = OutboxTrim()
            while !Task.isCancelled {
                let step = try await store.trimOutbox(
                    webhook: name, maxPending: configuration.maxPending,
                    createdBefore: unixMilliseconds() - Int64(configuration.maxAgeHours) * 3_600_000,
                    limit: Self.trimStep)
                trim.overflow += step.overflow
                trim.expired += step.expired
                // A long trim keeps the lease, or stops once another instance holds it.
                guard step.total == Self.trimStep, (try? await take()) != nil else { break }
            }
            if trim.total > 0 {
                if trim.overflow > 0 { metrics?.webhookDropped(name, reason: "max_pending", trim.overflow) }
                if trim.expired > 0 { metrics?.webhookDropped(name, reason: "max_age", trim.expired) }
                log.warning(
                    "webhook events dropped; the next batch reports them",
                    [
                        "webhook": name, "max_pending": "\(trim.overflow)", "max_age": "\(trim.expired)",
                    ])
            }
            let pending = try await store.pendingOutbox(webhook: name)
            metrics?.webhookPending(name, pending)
        } catch {
            log.warning("could not trim the webhook outbox", ["webhook": name, "error": "\(error)"])
        }
    }
}

import PushCore
import PushPosix
import PushProto
import PushStore
import PushSync
import Synchronization

/// Fans delivery events out to `WatchEvents` callers, webhooks and the log.
///
/// Each watcher has a bounded buffer: an event it cannot take is counted, and the count is reported
/// in a `KIND_EVENTS_DROPPED` event once it reads again, so a slow watcher costs memory bounded by
/// ``bufferSize`` and never slows deliveries. With no watcher and no webhook the cost per result is
/// one atomic load and one empty-list check.
///
/// Webhook events go to the outbox: those of a fan-out are answered to the caller (`inCommit`),
/// which writes them in the fan-out's own commit; the others go through the ``WebhookOutboxWriter``.
final class DeliveryEvents: Sendable {
    static let bufferSize = 10_000

    private struct Watcher {
        let apps: Set<String>
        let sampleEvery: Int
        var seen = 0
        var dropped: Int64 = 0
        let continuation: AsyncStream<PushgateV1.DeliveryEvent>.Continuation
    }

    private let watchers = Locked<[Int: Watcher]>([:])
    private let watcherCount = Atomic<Int>(0)
    private let nextID = Atomic<Int>(0)
    private let log: Log
    private let logTokens: Bool
    let webhooks: WebhookRouter
    private let outbox: WebhookOutboxWriter?

    init(log: Log, logTokens: Bool, webhooks: WebhookRouter = WebhookRouter([]), outbox: WebhookOutboxWriter? = nil) {
        self.log = log
        self.logTokens = logTokens
        self.webhooks = webhooks
        self.outbox = outbox
    }

    /// Webhook rows: answered when `inCommit` (a fan-out writes them itself), else written.
    private func route(_ rows: [OutboxEvent], inCommit: Bool) -> [OutboxEvent] {
        guard !inCommit else { return rows }
        outbox?.append(rows)
        return []
    }

    /// A new watcher's events, until it stops reading (the stream's termination removes it).
    func watch(apps: [String], sampleEvery: Int) -> AsyncStream<PushgateV1.DeliveryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: PushgateV1.DeliveryEvent.self, bufferingPolicy: .bufferingOldest(Self.bufferSize))
        let id = nextID.add(1, ordering: .relaxed).oldValue
        watchers.withLock {
            $0[id] = Watcher(apps: Set(apps), sampleEvery: sampleEvery, continuation: continuation)
        }
        watcherCount.add(1, ordering: .relaxed)
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            if self.watchers.withLock({ $0.removeValue(forKey: id) }) != nil {
                self.watcherCount.subtract(1, ordering: .relaxed)
            }
        }
        return stream
    }

    /// What to fix when a provider's answer means the app's set-up is wrong, not the token.
    static func configurationHint(_ code: DeliveryCode) -> String? {
        switch code {
        case .firebaseCredentialsRefused:
            "FCM refused the APNs key or certificate (or Web Push credentials) uploaded to the Firebase "
                + "project: fix them in the Firebase console (Project settings, Cloud Messaging)"
        case .sendingNotPermitted:
            "the service account may not send for this Firebase project: check project_id and that the "
                + "account has the Firebase Cloud Messaging API Admin role"
        case .credentialsRefused:
            "APNs refused the app's credentials: check team_id, key_id and key_file (or cert_file) and "
                + "sandbox against the Apple developer account"
        default: nil
        }
    }

    /// No watcher and no webhook: a result would make no event (checked once per batch of results).
    var isQuiet: Bool { watcherCount.load(ordering: .relaxed) == 0 && webhooks.isEmpty }

    /// One final per-token result. Failures are logged (the token masked unless `log_tokens`).
    /// Answers the webhook rows when `inCommit`.
    @discardableResult
    func result(
        _ result: DeliveryResult, app: String, messageID: String = "", endpointID: String = "", inCommit: Bool = false
    ) -> [OutboxEvent] {
        if result.status != .delivered {
            let message = result.status == .rejected ? "notification rejected" : "notification failed"
            let token = maskedToken(result.token)
            if let hint = Self.configurationHint(result.code) {
                // Not the token's fault: every send of the app fails until someone fixes a setting.
                log.warning(
                    message,
                    [
                        "app": app, "token": token, "http_status": "\(result.httpStatus)", "reason": result.reason,
                        "attempts": "\(result.attempts)", "message_id": messageID, "hint": hint,
                    ])
            } else {
                log.info(
                    message,
                    [
                        "app": app, "token": token, "http_status": "\(result.httpStatus)", "reason": result.reason,
                        "attempts": "\(result.attempts)", "message_id": messageID,
                    ])
            }
        }
        let (kind, eventKind): (WebhookConfiguration.EventKind, PushgateV1.DeliveryEvent.Kind) =
            switch result.status {
            case .delivered: (.delivered, .delivered)
            case .rejected: (.rejected, .rejected)
            case .failed: (.failed, .failed)
            }
        let watched = watcherCount.load(ordering: .relaxed) > 0
        let hooked = !webhooks.isEmpty && webhooks.wants(kind, apps: [app])
        guard watched || hooked else { return [] }
        var event = PushgateV1.DeliveryEvent()
        event.kind = eventKind
        event.app = app
        event.token = result.token
        event.httpStatus = Int32(result.httpStatus)
        event.reason = result.reason
        event.id = result.providerID
        event.unregisteredAt = result.unregisteredAt
        event.messageID = messageID
        event.endpointID = endpointID
        event.time = unixMilliseconds()
        if watched { emit(event, sampled: result.status == .delivered) }
        guard hooked else { return [] }
        return route(webhooks.rows(for: event, kind: kind, apps: [app], now: event.time), inCommit: inCommit)
    }

    /// A registry endpoint was disabled because its token is dead. Answers the webhook rows when
    /// `inCommit`.
    @discardableResult
    func endpointDisabled(
        app: String, endpointID: String, token: String, reason: String, messageID: String, inCommit: Bool = false
    ) -> [OutboxEvent] {
        log.info(
            "endpoint disabled",
            ["app": app, "endpoint_id": endpointID, "token": maskedToken(token), "reason": reason])
        let watched = watcherCount.load(ordering: .relaxed) > 0
        let hooked = !webhooks.isEmpty && webhooks.wants(.endpointDisabled, apps: [app])
        guard watched || hooked else { return [] }
        var event = PushgateV1.DeliveryEvent()
        event.kind = .endpointDisabled
        event.app = app
        event.token = token
        event.reason = reason
        event.endpointID = endpointID
        event.messageID = messageID
        event.time = unixMilliseconds()
        if watched { emit(event, sampled: false) }
        guard hooked else { return [] }
        return route(
            webhooks.rows(for: event, kind: .endpointDisabled, apps: [app], now: event.time), inCommit: inCommit)
    }

    /// A message was cancelled through this instance. Watchers of every app get it, and those
    /// watching one of `apps` (the apps it went to; empty: a topic's, any app's). Webhooks get it from
    /// the store, written with the cancel.
    func messageCancelled(messageID: String, cancelled: Int64, apps: [String]) {
        log.info("message cancelled", ["message_id": messageID, "cancelled": "\(cancelled)"])
        guard watcherCount.load(ordering: .relaxed) > 0 else { return }
        var event = PushgateV1.DeliveryEvent()
        event.kind = .messageCancelled
        event.messageID = messageID
        event.cancelled = cancelled
        event.time = unixMilliseconds()
        emit(event, sampled: false, apps: apps)
    }

    /// Ends every watch (shutdown).
    func finish() {
        let all = watchers.withLock { watchers -> [Watcher] in
            defer { watchers.removeAll() }
            return Array(watchers.values)
        }
        for watcher in all { watcher.continuation.finish() }
    }

    /// Sends `event` to the watchers of every app and those watching its app (or one of `apps`,
    /// for an event about a message rather than one token).
    private func emit(_ event: PushgateV1.DeliveryEvent, sampled: Bool, apps: [String]? = nil) {
        watchers.withLock { watchers in
            for (id, var watcher) in watchers {
                guard watcher.apps.isEmpty || (apps ?? [event.app]).contains(where: watcher.apps.contains)
                else { continue }
                if sampled {
                    guard watcher.sampleEvery > 0 else { continue }
                    watcher.seen += 1
                    guard watcher.seen % watcher.sampleEvery == 0 else {
                        watchers[id] = watcher
                        continue
                    }
                }
                if watcher.dropped > 0 {
                    var summary = PushgateV1.DeliveryEvent()
                    summary.kind = .eventsDropped
                    summary.dropped = watcher.dropped
                    summary.time = event.time
                    if case .enqueued = watcher.continuation.yield(summary) { watcher.dropped = 0 }
                }
                if case .dropped = watcher.continuation.yield(event) { watcher.dropped += 1 }
                watchers[id] = watcher
            }
        }
    }

    private func maskedToken(_ token: String) -> String {
        logTokens || token.count <= 8 ? token : String(token.prefix(8)) + "…"
    }
}

import PushAPNs
import PushCore
import PushDelivery
import PushGRPC
import PushMetrics
import PushPosix
import PushStore
import PushSync

/// Pushgate's metrics (docs/operations.md, "Metrics"): the registry `/metrics` renders and the handles the
/// delivery path, the gRPC server and the fan-out record on. Handles are resolved when the gateway
/// starts (per app, per method) or at first use (per app and outcome), never per notification.
final class GatewayMetrics: Sendable {
    let registry = MetricsRegistry()
    /// Per SendRequest (Send, and each request of a SendStream): validation to answer.
    let sendSeconds: Histogram
    let rpc: RPCMetrics
    private let notificationFamily: CounterFamily
    private let notifications: Locked<[String: NotificationCounters]>
    private let providerRequestSeconds: HistogramFamily
    private let providerProtections: CounterFamily
    private let providerHandshakeRefusals: CounterFamily
    private let fanOutHolds: CounterFamily
    private let snsRequests: CounterFamily
    private let messages: CounterFamily
    private let webhookSent: CounterFamily
    private let webhookRetried: CounterFamily
    private let webhookDropped: CounterFamily
    private let deliveryLogRows: CounterFamily
    private let webhookPending: GaugeFamily

    static let latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
    /// From 100 µs: a provider on the same network (or `pushgate mock-apns` on loopback) answers in
    /// well under a millisecond, and `pushgate bench` reads its latency from this histogram.
    static let providerBuckets = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    init(apps: [AppConfiguration]) {
        let family = registry.counter(
            "pushgate_notifications_total",
            help: "Final per-token results, from Send and from Publish fan-outs.",
            labels: ["app", "platform", "status", "reason"])
        notificationFamily = family
        notifications = Locked(
            Dictionary(
                apps.map {
                    ($0.name, NotificationCounters(family: family, app: $0.name, platform: $0.platform.rawValue))
                },
                uniquingKeysWith: { first, _ in first }))
        providerRequestSeconds = registry.histogram(
            "pushgate_provider_request_seconds",
            help: "Provider (APNs, FCM, ADM) request time, submit to response, per request that got a response.",
            labels: ["app"], buckets: Self.providerBuckets)
        providerProtections = registry.counter(
            "pushgate_provider_protections_total",
            help: "Protections against a misbehaving provider that acted: refused streams spaced out or FAILED, "
                + "stalled connections and unanswered PINGs given up.",
            labels: ["app", "event"])
        providerHandshakeRefusals = registry.counter(
            "pushgate_provider_handshake_refusals_total",
            help: "Provider connections ended during or right after the TLS handshake, before any answer, by the "
                + "alert received (goaway: a GOAWAY before any answer; closed: a close without an alert).",
            labels: ["app", "alert"])
        fanOutHolds = registry.counter(
            "pushgate_fanout_holds_total",
            help: "Publish recipients held for a provider that could not take them (held), and held ones "
                + "FAILED once fanout.max_hold_seconds had passed (given_up).",
            labels: ["app", "event"])
        snsRequests = registry.counter(
            "pushgate_sns_requests_total",
            help: "Requests to the SNS API by action (unknown: none or not SNS's; -: refused before its "
                + "parameters were read, by its head or its signature) and answer (OK, or SNS's error code).",
            labels: ["action", "code"])
        messages = registry.counter(
            "pushgate_messages_total",
            help: "Publish messages by target (topic, endpoint, user) and event: published (fan-out at once), "
                + "scheduled (a deliver_at to come), cancelled.",
            labels: ["target", "event"])
        webhookSent = registry.counter(
            "pushgate_webhook_events_sent_total", help: "Webhook events delivered (answered 2xx).",
            labels: ["webhook"])
        webhookRetried = registry.counter(
            "pushgate_webhook_batches_retried_total",
            help: "Webhook batches sent again after a 5xx, 429, timeout or connection failure.", labels: ["webhook"])
        webhookDropped = registry.counter(
            "pushgate_webhook_events_dropped_total",
            help: "Webhook events dropped: max_pending (the outbox was full), max_age (too old), refused (a 4xx), "
                + "buffer (the store could not keep up).",
            labels: ["webhook", "reason"])
        webhookPending = registry.gauge(
            "pushgate_webhook_events_pending", help: "Webhook events waiting in the outbox (as last counted).",
            labels: ["webhook"])
        deliveryLogRows = registry.counter(
            "pushgate_delivery_log_rows_total", help: "Delivery-log rows written and purged by this instance.",
            labels: ["event"])
        sendSeconds = registry.histogram(
            "pushgate_send_seconds",
            help: "End-to-end time of a SendRequest (Send, or one request of a SendStream), validation to answer.",
            buckets: Self.latencyBuckets
        ).labels()
        rpc = RPCMetrics(registry: registry, buckets: Self.latencyBuckets)
    }

    /// The Prometheus client libraries' standard process metrics (the names dashboards expect),
    /// read from /proc when scraped.
    private func registerProcessMetrics() {
        registry.gauge("process_resident_memory_bytes", help: "Resident memory size in bytes.") {
            ProcessSample.readSelf().map { [([], Double($0.rssKiB) * 1024)] } ?? []
        }
        registry.counter("process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.") {
            ProcessSample.readSelf().map { [([], Double($0.cpuTicks) / ProcessSample.ticksPerSecond)] } ?? []
        }
        registry.gauge("process_open_fds", help: "Number of open file descriptors.") {
            ProcessSample.openDescriptors().map { [([], Double($0))] } ?? []
        }
        let started = Double(unixSeconds())
        registry.gauge("process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.") {
            [([], started)]
        }
    }

    /// The per-app outcome counters; nil for an app that is not configured.
    func notifications(app: String) -> NotificationCounters? { notifications.withLock { $0[app] } }

    /// Series for apps a reload added.
    func add(apps: [AppConfiguration]) {
        notifications.withLock { table in
            for app in apps where table[app.name] == nil {
                table[app.name] = NotificationCounters(
                    family: notificationFamily, app: app.name, platform: app.platform.rawValue)
            }
        }
    }

    /// An app's TLS handshake refusals so far, over every alert.
    func handshakeRefusals(app: String) -> Int { providerHandshakeRefusals.total(where: "app", is: app) }

    /// `pushgate_fanout_holds_total` of an app: `held` or `given_up`.
    func fanOutHolds(app: String, event: String) -> Counter { fanOutHolds.labels(app, event) }

    /// Counts one SNS API answer. `action` is one of SNS's action names, `unknown` or `-`, never a
    /// client's text; `code` is `OK` or one of the gateway's SNS error codes.
    func snsRequest(action: String, code: String) { snsRequests.labels(action, code).increment() }

    /// Counts a message published, scheduled or cancelled through this instance.
    func message(target: MessageTarget?, event: String) {
        let name =
            switch target {
            case .topic: "topic"
            case .endpoint: "endpoint"
            case .user: "user"
            case nil: "unknown"
            }
        messages.labels(name, event).increment()
    }

    /// The provider latency histogram of an app (resolved once per APNs client).
    func webhookSent(_ webhook: String, _ count: Int) { webhookSent.labels(webhook).increment(by: count) }
    func webhookRetried(_ webhook: String) { webhookRetried.labels(webhook).increment() }
    func webhookDropped(_ webhook: String, reason: String, _ count: Int) {
        webhookDropped.labels(webhook, reason).increment(by: count)
    }
    func webhookPending(_ webhook: String, _ count: Int) { webhookPending.labels(webhook).set(Double(count)) }
    func deliveryLogRows(_ event: String, _ count: Int) { deliveryLogRows.labels(event).increment(by: count) }

    func providerRequestSeconds(app: String) -> Histogram { providerRequestSeconds.labels(app) }

    /// What an app's provider client counts (resolved once per client).
    func provider(app: String) -> ProviderMetrics {
        let refusals = providerHandshakeRefusals
        return ProviderMetrics(
            requestSeconds: providerRequestSeconds(app: app),
            protections: Dictionary(
                uniqueKeysWithValues: ProviderProtection.allCases.map {
                    ($0, providerProtections.labels(app, $0.rawValue))
                }),
            handshakeRefusals: { refusals.labels(app, $0) })
    }

    /// The gauges computed when scraped, from the running parts.
    func registerGauges(clients current: @escaping @Sendable () -> [String: any DeliveryClient], fanOut: FanOut) {
        var clients: [(key: String, value: any DeliveryClient)] { current().sorted { $0.key < $1.key } }
        registry.gauge(
            "pushgate_provider_connections", help: "Provider (APNs) connections open.", labels: ["app"]
        ) { clients.map { ([$0.key], Double($0.value.openConnections)) } }
        registry.gauge(
            "pushgate_provider_streams_in_flight", help: "Provider requests sent and not yet answered.", labels: ["app"]
        ) { clients.map { ([$0.key], Double($0.value.streamsInFlight)) } }
        registry.gauge(
            "pushgate_queue_depth", help: "Notifications an app holds: queued, waiting to retry, in flight.",
            labels: ["app"]
        ) { clients.map { ([$0.key], Double($0.value.heldRequests)) } }
        // Weak: the fan-out holds these metrics, and a strong capture here would make a cycle
        // (metrics → registry → this closure → fan-out → metrics) that outlives the gateway.
        registry.gauge(
            "pushgate_fanouts_running",
            help: "Publish fan-out chunks in progress (up to two per fanout.workers, and rate-capped ones)."
        ) { [weak fanOut] in
            [([], Double(fanOut?.activeCount ?? 0))]
        }
        registerProcessMetrics()
        registry.gauge(
            "pushgate_provider_token_age_seconds",
            help: "Age of the provider token (JWT) in use; apps with token auth that have signed one.",
            labels: ["app"]
        ) {
            let now = unixSeconds()
            return clients.compactMap { name, client in
                client.credentialIssuedAt.map { ([name], Double(now - $0)) }
            }
        }
    }
}

/// `pushgate_notifications_total` for one app: the `delivered` series resolved up front; the others
/// (status × reason, a bounded set) resolved at first use and kept in a small table.
final class NotificationCounters: Sendable {
    private let family: CounterFamily
    private let app: String
    private let platform: String
    private let delivered: Counter
    private let others = Locked<[Outcome: Counter]>([:])

    private struct Outcome: Hashable {
        var status: DeliveryStatus
        var reason: String
    }

    init(family: CounterFamily, app: String, platform: String) {
        self.family = family
        self.app = app
        self.platform = platform
        delivered = family.labels(app, platform, "delivered", "")
    }

    /// Counts final results: one atomic add for all the delivered ones, one per other result.
    func record(_ results: some Collection<DeliveryResult>) {
        var deliveredCount = 0
        for result in results {
            if result.status == .delivered {
                deliveredCount += 1
            } else {
                counter(result.status, Self.reasonLabel(result, platform: platform)).increment()
            }
        }
        if deliveredCount > 0 { delivered.increment(by: deliveredCount) }
    }

    /// Every result counted so far by status and reason (delivered first, without a reason).
    func outcomes() -> [(status: DeliveryStatus, reason: String, count: Int)] {
        let others = self.others.withLock { $0.map { ($0.key, $0.value.value) } }
        return [(.delivered, "", delivered.value)]
            + others.map { (status: $0.0.status, reason: $0.0.reason, count: $0.1) }.sorted {
                (Self.statusLabel($0.status), $0.reason) < (Self.statusLabel($1.status), $1.reason)
            }
    }

    private func counter(_ status: DeliveryStatus, _ reason: String) -> Counter {
        let outcome = Outcome(status: status, reason: reason)
        return others.withLock { table in
            if let counter = table[outcome] { return counter }
            let counter = family.labels(app, platform, Self.statusLabel(status), reason)
            table[outcome] = counter
            return counter
        }
    }

    static func statusLabel(_ status: DeliveryStatus) -> String {
        switch status {
        case .delivered: "delivered"
        case .rejected: "rejected"
        case .failed: "failed"
        }
    }

    /// FCM's error codes and canonical statuses that a result can carry (docs/providers.md B.3).
    static let fcmReasons: Set<String> = [
        "UNREGISTERED", "SENDER_ID_MISMATCH", "INVALID_ARGUMENT", "QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL",
        "THIRD_PARTY_AUTH_ERROR", "APNS_AUTH_ERROR", "PERMISSION_DENIED", "UNAUTHENTICATED", "NOT_FOUND",
        "RESOURCE_EXHAUSTED",
    ]
    /// ADM's reasons.
    static let admReasons = ADMResponseClassifier.tokenReasons.union(ADMResponseClassifier.messageReasons)
        .union(["AccessTokenExpired", "MaxRateExceeded"])
    /// A Huawei reason's business code (`80300007 All the tokens are invalid` → `80300007`): eight
    /// digits, a bounded set; anything else is `other`.
    static func huaweiCode(_ reason: String) -> String {
        let code = reason.prefix { $0 != " " }
        return code.count == 8 && code.allSatisfy(\.isASCII) && code.allSatisfy(\.isNumber) ? String(code) : "other"
    }

    static let providerReasons = Set(APNsReason.known.map(\.string)).union(fcmReasons).union(admReasons)

    /// The `reason` label: one of Pushgate's own failures by its name (docs/api.md, "Send results"; the
    /// details in its reason dropped), a provider's reason when it is a known one, `other` for
    /// anything else: the label set stays bounded. `platform` names a missing credential: a
    /// provider token for APNs, an OAuth2 token for the others.
    static func reasonLabel(_ result: DeliveryResult, platform: String) -> String {
        switch result.code {
        case .delivered: ""
        case .unreachable: "ProviderUnreachable"
        case .connectionLost: "ConnectionLost"
        case .streamReset: "StreamReset"
        case .streamRefused: "StreamRefused"
        case .expired: "Expired"
        case .deadlineExceeded: "DeadlineExceeded"
        case .shutdown: "Shutdown"
        case .cancelled: "Cancelled"
        case .wrongPlatform: "WrongPlatform"
        case .noCredential: platform == "apns" ? "ProviderTokenError" : "OAuthTokenError"
        case .unsendable, .unroutableToken, .tooManyOrigins, .addressRefused: "other"
        case .rejectedByProvider, .credentialsRefused, .firebaseCredentialsRefused, .sendingNotPermitted,
            .unauthenticated, .providerUnavailable:
            result.reason.isEmpty || providerReasons.contains(result.reason)
                ? result.reason : platform == "hms" ? huaweiCode(result.reason) : "other"
        }
    }
}

/// `pushgate_rpc_total{method,code}` and `pushgate_rpc_seconds{method}`, fed by the gRPC server.
/// The method label is the served method (`pushgate.v1.Push/Send`; the server reports a path only
/// for calls that reached one, so the set is bounded), or `unknown`.
final class RPCMetrics: GRPCCallObserver {
    private let calls: CounterFamily
    private let seconds: HistogramFamily
    /// `pushgate_grpc_protections_total{event}`: one series per ``GRPCServerEvent`` kind.
    private let protections: [String: Counter]
    /// Per path: the latency series, and the call counters by status code, resolved at first use.
    private let methods = Locked<[String: (seconds: Histogram, calls: [GRPCStatusCode: Counter])]>([:])
    /// The same by ``GRPCCallSummary/methodIndex`` (counters by code's raw value), for calls that
    /// come with one: an array index instead of hashing the path. Each keeps its path, and a call
    /// whose path is not it (another server's methods) goes by the path.
    private let byIndex = Locked<[MethodSeries?]>([])

    /// A class: read on every call, where a struct was copied out of the table (a retain per field).
    /// Its counters change only under ``byIndex``'s lock.
    private final class MethodSeries {
        let path: String
        let seconds: Histogram
        var calls: [Counter?]

        init(path: String, seconds: Histogram, calls: [Counter?]) {
            self.path = path
            self.seconds = seconds
            self.calls = calls
        }
    }

    init(registry: MetricsRegistry, buckets: [Double]) {
        calls = registry.counter(
            "pushgate_rpc_total", help: "gRPC calls answered, by method and status code.", labels: ["method", "code"])
        seconds = registry.histogram(
            "pushgate_rpc_seconds", help: "gRPC call time, request headers to status.", labels: ["method"],
            buckets: buckets)
        let family = registry.counter(
            "pushgate_grpc_protections_total",
            help: "Times the gRPC server protected itself from a client: request_budget_exceeded (a request "
                + "message did not fit the request budget), unread_client_closed (a client that did not read "
                + "its responses was closed), response_not_sent (a response could not be sent; its stream was reset), "
                + "control_frame_flood (a client flooding WINDOW_UPDATE, PING or other frames was closed).",
            labels: ["event"])
        var protections: [String: Counter] = [:]
        for kind in ["request_budget_exceeded", "unread_client_closed", "response_not_sent", "control_frame_flood"] {
            protections[kind] = family.labels(kind)
        }
        self.protections = protections
    }

    func serverEvent(_ event: GRPCServerEvent) {
        protections[event.kind]?.increment()
    }

    func callFinished(_ call: GRPCCallSummary) {
        let code = call.status.code
        if let index = call.methodIndex, let path = call.path {
            // Recorded under the lock, where the series are read in place: handed out, the two
            // series were a retain and a release each and an optional pair copied and destroyed.
            // Both are atomic updates, as short as the look-up.
            let recorded = byIndex.withLock { table -> Bool in
                guard index < table.count, let entry = table[index], entry.path == path,
                    let counter = entry.calls[code.rawValue]
                else { return false }
                entry.seconds.observe(nanoseconds: call.nanoseconds)
                counter.increment()
                return true
            }
            if recorded { return }
            let (histogram, counter) = resolve(index: index, path: path, code: code)
            histogram.observe(nanoseconds: call.nanoseconds)
            counter.increment()
            return
        }
        let (histogram, counter) = series(path: call.path, code: code)
        histogram.observe(nanoseconds: call.nanoseconds)
        counter.increment()
    }

    /// A method's series the first time its index comes with `code` (or after another path took the index).
    private func resolve(index: Int, path: String, code: GRPCStatusCode) -> (Histogram, Counter) {
        let (histogram, counter) = series(path: path, code: code)
        byIndex.withLock { table in
            if table.count <= index { table += Array(repeating: nil, count: index + 1 - table.count) }
            if table[index]?.path != path {
                table[index] = MethodSeries(
                    path: path, seconds: histogram, calls: Array(repeating: nil, count: GRPCStatusCode.allCases.count))
            }
            if code.rawValue < table[index]!.calls.count { table[index]!.calls[code.rawValue] = counter }
        }
        return (histogram, counter)
    }

    /// A path's series by the path.
    private func series(path: String?, code: GRPCStatusCode) -> (Histogram, Counter) {
        let key = path ?? ""
        let (histogram, counter) = methods.withLock { methods in
            if let entry = methods[key], let counter = entry.calls[code] { return (entry.seconds, counter) }
            // First call of this method, or first with this code: resolve the series once.
            let label = path.map { String($0.drop { $0 == "/" }) } ?? "unknown"
            let histogram = methods[key]?.seconds ?? seconds.labels(label)
            let counter = calls.labels(label, code.name)
            methods[key, default: (histogram, [:])].calls[code] = counter
            return (histogram, counter)
        }
        return (histogram, counter)
    }
}

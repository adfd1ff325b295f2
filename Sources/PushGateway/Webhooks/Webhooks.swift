import PushCore
import PushDelivery
import PushPosix
import PushStore
import PushSync
import PushTLS
import PushTransport
import PushWebhook

/// The configured webhooks at run time: the router that picks their events, the writer for events
/// outside a fan-out's commit, and a sender per webhook with its own engine client.
final class Webhooks: Sendable {
    let router: WebhookRouter
    let writer: WebhookOutboxWriter
    private let senders: [WebhookSender]
    private let tasks = Locked<[Task<Void, Never>]>([])
    private let store: any Store
    private let owner: String

    /// Reads each webhook's secret and CA file and makes its client; errors name the key.
    init(
        _ webhooks: [WebhookConfiguration], store: any Store, owner: String, group: EventLoopGroup, log: Log,
        metrics: GatewayMetrics?
    ) throws(ConfigurationError) {
        self.store = store
        self.owner = owner
        router = WebhookRouter(webhooks)
        writer = WebhookOutboxWriter(store: store, log: log) { webhook, count in
            metrics?.webhookDropped(webhook, reason: "buffer", count)
        }
        var senders: [WebhookSender] = []
        for (index, webhook) in webhooks.enumerated() {
            let path = "config.webhooks[\(index)]"
            let client = try Self.client(webhook, path: path, group: group, log: log)
            senders.append(
                WebhookSender(
                    configuration: webhook, client: client, store: store, owner: owner, metrics: metrics, log: log))
        }
        self.senders = senders
    }

    static let minimumSecretBytes = 16

    private static func client(_ webhook: WebhookConfiguration, path: String, group: EventLoopGroup, log: Log)
        throws(ConfigurationError) -> WebhookClient
    {
        let secret: [UInt8]
        do {
            secret = try SecretFile.readBytes(webhook.secretFile)
        } catch {
            throw ConfigurationError("\(path).secret_file: webhook \(webhook.name): \(error.description)")
        }
        guard secret.count >= minimumSecretBytes else {
            throw ConfigurationError(
                "\(path).secret_file: webhook \(webhook.name)'s secret is \(secret.count) bytes; use at least "
                    + "\(minimumSecretBytes) (e.g. openssl rand -hex 32)")
        }
        guard let (origin, _) = HTTPSOrigin.parse(url: webhook.url) else {
            throw ConfigurationError("\(path).url: webhook \(webhook.name): not an https://host[:port]/path URL")
        }
        var settings = ProviderClientConfiguration()
        settings.connections = 1
        // One batch at a time: a small queue; the outbox keeps the rest.
        settings.queueLimit = 16
        // The outbox retries, with its own backoff, for hours; the engine sends each batch once.
        settings.retry = RetryPolicy(maxAttempts: 1)
        settings.maxConnectAttempts = 1
        settings.connectTimeout = .milliseconds(min(10_000, webhook.timeoutMilliseconds))
        settings.httpVersion = .auto
        settings.proxy = try DeliveryClientFactory.proxyChoice(webhook.proxy, path: path)
        let tls: TLSContext
        do {
            tls = try TLSContext.client(
                alpn: HTTPVersionPolicy.auto.alpn, caFile: webhook.caFile.isEmpty ? nil : webhook.caFile)
        } catch {
            throw ConfigurationError("\(path).ca_file: webhook \(webhook.name): \(error)")
        }
        return ProviderClient(
            name: "webhook:" + webhook.name, endpoint: origin,
            dialect: WebhookDialect(secret: secret, userAgent: "pushgate-webhook/1", clock: unixSeconds),
            tlsContext: tls, configuration: settings, group: group,
            logger: { message, error in
                log.warning(message, ["webhook": webhook.name, "error": error.map { "\($0)" } ?? ""])
            })
    }

    func start() {
        tasks.withLock { tasks in
            for sender in senders { tasks.append(Task { await sender.run() }) }
        }
    }

    /// Writes the events still buffered, stops the senders and lets another instance take their
    /// webhooks at once.
    func stop() async {
        await writer.flush()
        let running = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in running { task.cancel() }
        for sender in senders { sender.client.shutdown() }
        for task in running { await task.value }
        if !senders.isEmpty { try? await store.releaseWebhookLeases(owner: owner) }
    }
}

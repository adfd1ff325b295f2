import PushCore

/// One notification as sent to a provider, shared by all of its tokens (payload and headers built
/// once). The engine needs only these three things of it.
public protocol ProviderJob: AnyObject, Sendable {
    /// Index of the notification in its Send.
    var notificationIndex: Int { get }
    /// Unix seconds after which the provider would drop it anyway: no retry past this.
    var expiration: Int64? { get }
    /// Where its results go.
    var collector: DeliveryCollector { get }
}

/// One token of a job: what is queued, sent, retried and answered.
///
/// Not generic over the job type on purpose: the engine is generic over its dialect and cannot be
/// specialized from its own module, so every use of a generic request type in its hot loops cost a
/// run-time metadata look-up per token. The engine hands the dialect
/// its job back typed (``ProviderConnection`` casts; the jobs are the dialect's own).
public struct ProviderRequest: Sendable {
    public let job: any ProviderJob
    public let token: String
    /// Where the result goes in the Send's result list.
    public let slot: Int
    /// Sends so far.
    public var attempts = 0
    /// Whether this request was already resent after its credential was refused.
    var authorizationRenewed = false
    /// Times it came back unprocessed (REFUSED_STREAM), bounded by ``RetryPolicy/maxRefusals``.
    var refusals: Int32 = 0

    public init(job: any ProviderJob, token: String, slot: Int) {
        self.job = job
        self.token = token
        self.slot = slot
    }

    func result(
        _ status: DeliveryStatus, _ code: DeliveryCode, httpStatus: Int = 0, reason: String = "", id: String = "",
        unregisteredAt: Int64 = 0, invalidatesToken: Bool = false, canonicalToken: String = ""
    ) -> DeliveryResult {
        DeliveryResult(
            notificationIndex: job.notificationIndex, token: token, status: status, code: code, httpStatus: httpStatus,
            reason: reason, providerID: id, unregisteredAt: unregisteredAt, attempts: attempts,
            invalidatesToken: invalidatesToken, canonicalToken: canonicalToken)
    }

    /// FAILED `Cancelled`: its sender took it back (``DeliveryCancellation``) before it went out.
    var cancelledResult: DeliveryResult { result(.failed, .cancelled, reason: "Cancelled") }
}

/// A FIFO of requests (an array with a moving head: no per-element allocation).
///
/// Elements are moved in and out, not copied: a request's copy is a retain and a release of its
/// job and token, several times on its way to the wire. A taken element leaves nil behind.
public struct RequestQueue<Element> {
    private var storage: [Element?] = []
    private var head = 0

    public init() {}

    public var isEmpty: Bool { head == storage.count }
    public var count: Int { storage.count - head }

    public mutating func append(_ element: consuming Element) { storage.append(element) }
    public mutating func append(contentsOf elements: some Sequence<Element>) {
        for element in elements { storage.append(element) }
    }

    /// Puts an element back at the front (a refused stream keeps its turn).
    public mutating func prepend(_ element: consuming Element) {
        if head > 0 {
            head -= 1
            storage[head] = element
        } else {
            storage.insert(element, at: 0)
        }
    }

    public mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 4096)
            head = 0
        } else if head >= 4096 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    public mutating func removeAll() -> [Element] {
        let rest = storage[head...].map { $0! }
        storage.removeAll()
        head = 0
        return rest
    }
}

import PushCore
import PushHTTP2

/// One notification as sent to APNs, shared by all of its tokens: the payload bytes and the header
/// list are built once; per token only `:path` (and the current `authorization`) differ.
final class APNsJob: Sendable {
    /// Index of `:path` in ``headers``; the pseudo-headers come first, as HTTP/2 requires.
    static let pathIndex = 3
    /// Index of `authorization` with token auth (its value is set per request from the cache).
    static let authorizationIndex = 4

    let notificationIndex: Int
    let headers: [HTTP2Header]
    /// ``headers`` prepared once for nghttp2; per token only `:path` (and `authorization`) are set.
    let template: HTTP2HeaderTemplate
    let usesProviderToken: Bool
    let payload: [UInt8]
    /// Unix seconds after which APNs would drop it anyway: no retry past this.
    let expiration: Int64?
    let collector: DeliveryCollector

    init(
        _ notification: PreparedNotification, notificationIndex: Int, authority: String, usesProviderToken: Bool,
        collector: DeliveryCollector
    ) {
        var headers = [
            HTTP2Header(":method", "POST"),
            HTTP2Header(":scheme", "https"),
            HTTP2Header(":authority", authority),
            // Apple's HPACK guidance: :path and authorization as literals without indexing.
            HTTP2Header(name: Array(":path".utf8), value: [], indexable: false),
        ]
        if usesProviderToken {
            headers.append(HTTP2Header(name: Array("authorization".utf8), value: [], indexable: false))
        }
        headers.append(HTTP2Header("apns-topic", notification.topic))
        headers.append(HTTP2Header("apns-push-type", notification.pushType.rawValue))
        headers.append(HTTP2Header("apns-priority", String(notification.priority)))
        if let expiration = notification.expiration {
            headers.append(HTTP2Header("apns-expiration", String(expiration)))
        }
        if let collapseID = notification.collapseID {
            headers.append(HTTP2Header("apns-collapse-id", collapseID))
        }
        if let apnsID = notification.apnsID {
            headers.append(HTTP2Header("apns-id", apnsID))
        }
        self.headers = headers
        self.template = HTTP2HeaderTemplate(headers)
        self.notificationIndex = notificationIndex
        self.usesProviderToken = usesProviderToken
        self.payload = notification.payload
        self.expiration = notification.expiration
        self.collector = collector
    }

    /// The header list for one token (what ``template`` submits; for tests and logs).
    func headers(token: String, authorization: [UInt8]?) -> [HTTP2Header] {
        var list = headers
        list[Self.pathIndex].value = Self.pathPrefix + token.utf8
        if usesProviderToken, let authorization {
            list[Self.authorizationIndex].value = authorization
        }
        return list
    }

    static let pathPrefix = Array("/3/device/".utf8)
}

/// One token of a job: what is queued, sent, retried and answered.
struct APNsRequest {
    let job: APNsJob
    let token: String
    /// Where the result goes in the Send's result list.
    let slot: Int
    /// Sends so far.
    var attempts = 0

    func result(
        _ status: DeliveryStatus, httpStatus: Int = 0, reason: String = "", apnsID: String = "",
        unregisteredAt: Int64 = 0
    ) -> DeliveryResult {
        DeliveryResult(
            notificationIndex: job.notificationIndex, token: token, status: status, httpStatus: httpStatus,
            reason: reason, apnsID: apnsID, unregisteredAt: unregisteredAt, attempts: attempts)
    }
}

/// A FIFO of requests (an array with a moving head: no per-element allocation).
struct RequestQueue {
    private var storage: [APNsRequest] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }

    mutating func append(_ request: APNsRequest) { storage.append(request) }
    mutating func append(contentsOf requests: some Sequence<APNsRequest>) { storage.append(contentsOf: requests) }

    /// Puts a request back at the front (a refused stream keeps its turn).
    mutating func prepend(_ request: APNsRequest) {
        if head > 0 {
            head -= 1
            storage[head] = request
        } else {
            storage.insert(request, at: 0)
        }
    }

    mutating func popFirst() -> APNsRequest? {
        guard head < storage.count else { return nil }
        let request = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 4096)
            head = 0
        } else if head >= 4096 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return request
    }

    mutating func removeAll() -> [APNsRequest] {
        let rest = Array(storage[head...])
        storage.removeAll()
        head = 0
        return rest
    }
}

public import PushCore
public import PushCredentials
import PushHTTP2
public import PushTransport

/// What one provider (APNs, FCM, ADM) adds to the engine: how a request is written, how the request is
/// authorized, and what an answer means. The engine (``ProviderConnection``) owns everything else:
/// the queue, stream limits, retries, reconnects, liveness. One dialect object serves every
/// connection of an app, from their loops at once, so it must be thread-safe.
public protocol ProviderDialect: AnyObject, Sendable {
    associatedtype Job: ProviderJob

    /// `APNs`, `FCM`: for logs.
    var providerName: String { get }

    /// The response header whose value becomes the result's id (`apns-id`); nil: none.
    var idHeader: [UInt8]? { get }

    /// The job for one notification of a Send (its bytes built once, shared by all its tokens), or
    /// nil when the push is not for this provider (the client then FAILs it `WrongPlatform`).
    func makeJob(for push: PreparedPush, notificationIndex: Int, collector: DeliveryCollector) -> Job?

    /// The credential to put in `authorization` now. Called before each pass of submits, so keep
    /// it cheap (a lock and a retain). `.pending` promises one call of
    /// ``AuthorizationWaiter/authorizationDidChange()`` on `waiter` (from any thread) once the
    /// credential is there or could not be had.
    func authorization(for waiter: any AuthorizationWaiter) -> ProviderAuthorization

    /// Submits one token's request on `session`: `job`'s prepared headers and body (`job` is
    /// `request.job`, typed), the token, and `authorization` (the `authorization` header value,
    /// when there is one). `scratch` is a per-connection buffer to build per-token bytes in
    /// without allocating.
    func submit(
        _ request: ProviderRequest, job: Job, authorization: [UInt8]?, on wire: ProviderWire, scratch: inout [UInt8]
    ) -> Result<Int32, ProviderWireError>

    /// What a complete response to `token`'s request means. `now`: Unix seconds.
    func outcome(of response: ProviderResponse, token: String, now: Int64) -> ProviderOutcome

    /// The provider refused the credential of `generation` (APNs ExpiredProviderToken, FCM 401):
    /// replace it if it is still the current one.
    func authorizationRejected(generation: Int64)

    /// When the credential in use was obtained (Unix seconds); nil without one (for a gauge).
    var credentialIssuedAt: Int64? { get }

    /// Whether tokens name their own origin (``origin(ofToken:)``). False (the default): every
    /// request goes to the app's endpoint, and no token is looked at.
    var routesByToken: Bool { get }

    /// The origin `token`'s request goes to (a Web Push subscription's push service); nil: the
    /// app's endpoint, or, with ``failsUnroutedTokens``, no request at all. Asked only when
    /// ``routesByToken``. Such a dialect writes each request's `:authority` for its token's origin.
    func origin(ofToken token: String) -> HTTPSOrigin?

    /// Whether a token ``origin(ofToken:)`` names no origin for is FAILED at once (`InvalidToken`)
    /// rather than sent to the app's endpoint: a Web Push app has no endpoint of its own, so such a
    /// token (a subscription on a host no longer allowed) must not make it connect anywhere.
    var failsUnroutedTokens: Bool { get }
}

extension ProviderDialect {
    public var routesByToken: Bool { false }

    public func origin(ofToken token: String) -> HTTPSOrigin? { nil }

    public var failsUnroutedTokens: Bool { false }
}

/// What an answer means for one request.
public enum ProviderOutcome: Sendable, Equatable {
    /// Accepted; `id` is the provider's id for it (apns-id, FCM message name, a Web Push
    /// message's URL); `canonicalToken` the device's new token when the provider gave one (ADM),
    /// else empty; `httpStatus` the answer's (200, or Web Push's 201).
    case delivered(id: String, canonicalToken: String = "", httpStatus: Int = 200)
    /// A permanent refusal: sending it again as is will not help. `code`: what kind of refusal.
    case rejected(
        reason: String, httpStatus: Int, unregisteredAt: Int64, invalidatesToken: Bool,
        code: DeliveryCode = .rejectedByProvider)
    /// May succeed when sent again; `retry` says when.
    case transient(reason: String, httpStatus: Int, retry: ProviderRetry)
}

extension ProviderOutcome {
    /// The engine's outcome for a classified answer; `delivered` turns the id the body gave into
    /// the delivered outcome (the one step that differs between providers).
    public init(_ answer: ClassifiedAnswer, delivered: (String) -> ProviderOutcome) {
        switch answer {
        case .delivered(let id):
            self = delivered(id)
        case .rejected(let reason, let httpStatus, let invalidatesToken, let unregisteredAt, let code):
            self = .rejected(
                reason: reason, httpStatus: httpStatus, unregisteredAt: unregisteredAt,
                invalidatesToken: invalidatesToken, code: code)
        case .transient(let reason, let httpStatus, let retryAfter):
            self = .transient(reason: reason, httpStatus: httpStatus, retry: .afterBackoff(notBefore: retryAfter))
        case .connectionClosing(let reason, let httpStatus):
            self = .transient(reason: reason, httpStatus: httpStatus, retry: .onNewConnection)
        case .unauthenticated(let reason, let httpStatus):
            self = .transient(reason: reason, httpStatus: httpStatus, retry: .afterRenewingAuthorization)
        }
    }
}

/// When a transient failure may be sent again.
public enum ProviderRetry: Sendable, Equatable {
    /// After the policy's backoff, and no sooner than `notBefore` when the server said so
    /// (`Retry-After`).
    case afterBackoff(notBefore: Duration?)
    /// The connection is going away (APNs Shutdown, IdleTimeout): stop using it, retry on a new one.
    case onNewConnection
    /// The credential was refused: it is renewed (once, for every request that saw it refused) and
    /// the request sent once more; a second refusal of the same request rejects it.
    case afterRenewingAuthorization
}

/// One response as it arrives: `:status`, the dialect's id header, `retry-after`, and the body.
public struct ProviderResponse: Sendable {
    public var status = 0
    public var id = ""
    public var retryAfter: String?
    public var body: [UInt8] = []
    /// The body was longer than ``maxBody``: `body` holds its start, and the rest was not read
    /// (the stream was reset, or the HTTP/1.1 connection closed).
    public internal(set) var truncated = false

    /// Error bodies are small JSON objects; anything much larger is not the provider's and is cut.
    public static let maxBody = 16_384

    public init(status: Int = 0, id: String = "", retryAfter: String? = nil, body: [UInt8] = []) {
        self.status = status
        self.id = id
        self.retryAfter = retryAfter
        self.body = body
    }

    /// Appends `data`; false once the body has passed ``maxBody`` (what fits is kept).
    mutating func append(_ data: UnsafeRawBufferPointer) -> Bool {
        guard body.count + data.count <= Self.maxBody else {
            body.append(contentsOf: data.prefix(Self.maxBody - body.count))
            truncated = true
            return false
        }
        body.append(contentsOf: data)
        return true
    }
}

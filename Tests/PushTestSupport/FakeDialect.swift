public import PushCore
public import PushCredentials
public import PushDelivery
import PushHTTP2
public import PushTransport

/// A provider dialect that is no real provider's, for the engine's own tests: any push (but a
/// channel request) becomes `POST /fake/<token>` with a small JSON body, no credential; 2xx is
/// delivered with the `fake-id` header as its id, 5xx is transient, anything else rejected with
/// `HTTP <status>`. With `routes`, a token's first character names its origin (as a Web Push
/// subscription names its push service); other tokens go to the app's endpoint.
public final class FakeDialect: ProviderDialect {
    public let providerName = "Fake"
    public let idHeader: [UInt8]? = Array("fake-id".utf8)
    public let routes: [Character: HTTPSOrigin]
    private let template: HTTP2HeaderTemplate
    private let authority: [UInt8]
    private static let authorityIndex = 2
    private static let pathIndex = 3
    static let body = Array(#"{"fake":true}"#.utf8)

    public init(authority: String, routes: [Character: HTTPSOrigin] = [:]) {
        self.routes = routes
        self.authority = Array(authority.utf8)
        template = HTTP2HeaderTemplate([
            HTTP2Header(":method", "POST"),
            HTTP2Header(":scheme", "https"),
            HTTP2Header(name: Array(":authority".utf8), value: [], indexable: false),
            HTTP2Header(name: Array(":path".utf8), value: [], indexable: false),
            HTTP2Header("content-type", "application/json"),
        ])
    }

    /// A push for `tokens` that this dialect takes.
    public static func push(tokens: [String]) -> PreparedPush {
        .adm(PreparedADMMessage(body: body, expiration: nil, tokens: tokens))
    }

    public var routesByToken: Bool { !routes.isEmpty }

    public func origin(ofToken token: String) -> HTTPSOrigin? { token.first.flatMap { routes[$0] } }

    public func makeJob(for push: PreparedPush, notificationIndex: Int, collector: DeliveryCollector) -> FakeJob? {
        if case .apnsChannel = push { return nil }
        return FakeJob(notificationIndex: notificationIndex, collector: collector)
    }

    public func authorization(for waiter: any AuthorizationWaiter) -> ProviderAuthorization { .none }

    public func submit(
        _ request: ProviderRequest, job: FakeJob, authorization: [UInt8]?, on wire: ProviderWire,
        scratch: inout [UInt8]
    ) -> Result<Int32, ProviderWireError> {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: "/fake/".utf8)
        scratch.append(contentsOf: request.token.utf8)
        let authority = origin(ofToken: request.token).map { Array($0.authority.utf8) } ?? self.authority
        let template = self.template
        return scratch.withUnsafeBytes { path in
            authority.withUnsafeBytes { authority in
                Result { () throws(ProviderWireError) in
                    try wire.submitRequest(
                        template: template, replacing: (Self.pathIndex, path), (Self.authorityIndex, authority),
                        body: Self.body)
                }
            }
        }
    }

    public func outcome(of response: ProviderResponse, token: String, now: Int64) -> ProviderOutcome {
        switch response.status {
        case 200..<300: .delivered(id: response.id, httpStatus: response.status)
        case 500..<600:
            .transient(
                reason: "HTTP \(response.status)", httpStatus: response.status, retry: .afterBackoff(notBefore: nil))
        default:
            .rejected(
                reason: "HTTP \(response.status)", httpStatus: response.status, unregisteredAt: 0,
                invalidatesToken: false)
        }
    }

    public func authorizationRejected(generation: Int64) {}

    public var credentialIssuedAt: Int64? { nil }
}

/// One push as ``FakeDialect`` sends it: nothing but where its results go.
public final class FakeJob: ProviderJob {
    public let notificationIndex: Int
    public let expiration: Int64? = nil
    public let collector: DeliveryCollector

    init(notificationIndex: Int, collector: DeliveryCollector) {
        self.notificationIndex = notificationIndex
        self.collector = collector
    }
}

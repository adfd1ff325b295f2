import PushCore
import PushHTTP2
public import PushPosix
public import PushTLS
public import PushTransport

/// An OAuth2 token endpoint (Google's for FCM, Login with Amazon's for ADM): a form POSTed over
/// TLS (HTTP/2 or HTTP/1.1, as the server chooses) on a short connection of its own, through the
/// app's proxy if it has one, answered with `access_token` and `expires_in`.
public struct OAuthTokenEndpoint: Sendable {
    /// Why a token request failed: the endpoint's own words when it gave any.
    public struct ExchangeError: Error, CustomStringConvertible, Sendable {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let url: String
    private let endpoint: HTTPSOrigin
    private let path: String
    private let tlsContext: TLSContext
    private let loop: EventLoop
    private let timeout: Duration
    private let proxy: HTTPProxy?

    /// - Throws: when `url` is not an `https://host[:port]/path` URL.
    public init(
        url: String, tlsContext: TLSContext, loop: EventLoop, timeout: Duration = .seconds(10),
        proxy: ProxyChoice = .direct
    ) throws(ExchangeError) {
        guard let (endpoint, path) = HTTPSOrigin.parse(url: url) else {
            throw ExchangeError(description: "token URL \(url.debugDescription) is not https://host[:port]/path")
        }
        self.url = url
        self.endpoint = endpoint
        self.path = path
        self.proxy = proxy.proxy(for: endpoint.host)
        self.tlsContext = tlsContext
        self.loop = loop
        self.timeout = timeout
    }

    /// POSTs `form` (application/x-www-form-urlencoded) and answers the token and its lifetime.
    public func requestToken(form: [(String, String)]) async throws -> (accessToken: String, expiresIn: Int64) {
        let headers = [
            HTTP2Header(":method", "POST"),
            HTTP2Header(":scheme", "https"),
            HTTP2Header(":authority", endpoint.authority),
            HTTP2Header(":path", path),
            HTTP2Header("content-type", "application/x-www-form-urlencoded"),
            HTTP2Header("accept", "application/json"),
        ]
        let response = try await HTTPExchange.send(
            host: endpoint.host, port: endpoint.port, headers: headers, body: Array(FormURLEncoding.encode(form).utf8),
            tlsContext: tlsContext, loop: loop, timeout: timeout, maxBody: 64 << 10, proxy: proxy)
        return try Self.parse(status: response.status, body: response.body)
    }

    /// The access token and its lifetime from a token endpoint's answer (default lifetime 3600 s
    /// when `expires_in` is missing); an error with the endpoint's `error` and
    /// `error_description` otherwise.
    public static func parse(status: Int, body: [UInt8]) throws(ExchangeError) -> (
        accessToken: String, expiresIn: Int64
    ) {
        let members: [(String, JSONValue)]
        if let json = try? JSONParser.parse(body), case .object(let object) = json {
            members = object
        } else {
            members = []
        }
        func string(_ key: String) -> String? {
            for (name, value) in members where name == key {
                if case .string(let text) = value { return text }
            }
            return nil
        }
        guard status == 200 else {
            let error = string("error") ?? "HTTP \(status)"
            let detail = string("error_description").map { ": \($0)" } ?? ""
            throw ExchangeError(description: "the token endpoint answered \(status) \(error)\(detail)")
        }
        guard let token = string("access_token"), !token.isEmpty else {
            throw ExchangeError(description: "the token endpoint's answer has no access_token")
        }
        var expiresIn: Int64 = 3600
        for (name, value) in members where name == "expires_in" {
            if case .number(let text) = value, let seconds = Int64(text), seconds > 0 { expiresIn = seconds }
        }
        return (token, expiresIn)
    }
}

extension OAuthTokenEndpoint {
    /// A fetch for ``AccessTokenCache`` by the OAuth 2.0 client-credentials grant (RFC 6749 4.4):
    /// `grant_type=client_credentials`, the `scope` when there is one, the client id and secret in
    /// the form. What Login with Amazon (ADM) and Huawei's OAuth server (Push Kit v1/v2) share.
    /// - Throws: when `tokenURL` is not an `https://host[:port]/path` URL.
    public static func clientCredentials(
        clientID: String, clientSecret: String, scope: String? = nil, tokenURL: String, tlsContext: TLSContext,
        loop: EventLoop, timeout: Duration, proxy: ProxyChoice
    ) throws(ExchangeError) -> AccessTokenCache.Fetch {
        let endpoint = try OAuthTokenEndpoint(
            url: tokenURL, tlsContext: tlsContext, loop: loop, timeout: timeout, proxy: proxy)
        let form =
            [("grant_type", "client_credentials")] + (scope.map { [("scope", $0)] } ?? [])
            + [("client_id", clientID), ("client_secret", clientSecret)]
        return { try await endpoint.requestToken(form: form) }
    }
}

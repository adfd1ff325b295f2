import PushCore
import PushDelivery
import PushHTTP2
import PushPosix
import PushTLS
import PushTransport

/// The two-legged OAuth2 flow of a Google service account (protocols.md B.5): an RS256-signed JWT
/// assertion exchanged at the token URI for an access token.
public enum GoogleOAuth {
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// Why a token exchange failed: the endpoint's own words when it gave any.
    public struct ExchangeError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// A fetch for ``AccessTokenCache``: signs a fresh assertion (iat now, exp +1 h) and exchanges
    /// it at `tokenURL` over HTTP/2 + TLS.
    /// - Throws: when `tokenURL` is not an `https://host[:port]/path` URL.
    public static func fetch(
        account: GoogleServiceAccount, signer: RS256Signer, tokenURL: String, tlsContext: TLSContext,
        loop: EventLoop, clock: @escaping @Sendable () -> Int64 = unixSeconds, timeout: Duration = .seconds(10)
    ) throws(ExchangeError) -> AccessTokenCache.Fetch {
        guard let (endpoint, path) = ProviderEndpoint.parse(url: tokenURL) else {
            throw ExchangeError(description: "token URL \(tokenURL.debugDescription) is not https://host[:port]/path")
        }
        return {
            let assertion = try OAuthAssertion.make(
                account: account, audience: tokenURL, scope: messagingScope, issuedAt: clock(), signer: signer)
            let headers = [
                HTTP2Header(":method", "POST"),
                HTTP2Header(":scheme", "https"),
                HTTP2Header(":authority", endpoint.authority),
                HTTP2Header(":path", path),
                HTTP2Header("content-type", "application/x-www-form-urlencoded"),
                HTTP2Header("accept", "application/json"),
            ]
            let body = FormURLEncoding.encode([("grant_type", grantType), ("assertion", assertion)])
            let response = try await HTTP2Exchange.send(
                host: endpoint.host, port: endpoint.port, headers: headers, body: Array(body.utf8),
                tlsContext: tlsContext, loop: loop, timeout: timeout, maxBody: 64 << 10)
            return try parse(status: response.status, body: response.body)
        }
    }

    /// The access token and its lifetime from a token endpoint's answer.
    public static func parse(status: Int, body: [UInt8]) throws(ExchangeError) -> (accessToken: String, expiresIn: Int64) {
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

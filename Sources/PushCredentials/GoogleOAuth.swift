import PushCore
public import PushPosix
public import PushTLS
public import PushTransport

/// The two-legged OAuth2 flow of a Google service account (docs/providers.md B.5): an RS256-signed JWT
/// assertion exchanged at the token URI for an access token.
public enum GoogleOAuth {
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// A fetch for ``AccessTokenCache``: signs a fresh assertion (iat now, exp +1 h, audience the
    /// token URL) and exchanges it at `tokenURL`.
    /// - Throws: when `tokenURL` is not an `https://host[:port]/path` URL.
    public static func fetch(
        account: GoogleServiceAccount, signer: RSASigner, tokenURL: String, tlsContext: TLSContext,
        loop: EventLoop, clock: @escaping @Sendable () -> Int64 = unixSeconds, timeout: Duration = .seconds(10),
        proxy: ProxyChoice = .direct
    ) throws(OAuthTokenEndpoint.ExchangeError) -> AccessTokenCache.Fetch {
        let endpoint = try OAuthTokenEndpoint(
            url: tokenURL, tlsContext: tlsContext, loop: loop, timeout: timeout, proxy: proxy)
        return {
            let assertion = try OAuthAssertion.make(
                account: account, audience: tokenURL, scope: messagingScope, issuedAt: clock(), signer: signer)
            return try await endpoint.requestToken(form: [("grant_type", grantType), ("assertion", assertion)])
        }
    }
}

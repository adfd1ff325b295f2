import PushCore
public import PushPosix
public import PushTLS
public import PushTransport

/// Login with Amazon's client-credentials grant, which ADM senders use: the app's client id and
/// secret exchanged for an access token with scope `messaging:push` (docs/providers.md D.4).
public enum AmazonOAuth {
    public static let defaultTokenURL = "https://api.amazon.com/auth/o2/token"
    public static let scope = "messaging:push"

    /// A fetch for ``AccessTokenCache``.
    /// - Throws: when `tokenURL` is not an `https://host[:port]/path` URL.
    public static func fetch(
        clientID: String, clientSecret: String, tokenURL: String = defaultTokenURL, tlsContext: TLSContext,
        loop: EventLoop, timeout: Duration = .seconds(10), proxy: ProxyChoice = .direct
    ) throws(OAuthTokenEndpoint.ExchangeError) -> AccessTokenCache.Fetch {
        try OAuthTokenEndpoint.clientCredentials(
            clientID: clientID, clientSecret: clientSecret, scope: scope, tokenURL: tokenURL, tlsContext: tlsContext,
            loop: loop, timeout: timeout, proxy: proxy)
    }
}

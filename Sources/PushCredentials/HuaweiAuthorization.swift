import PushCore
public import PushPosix
public import PushTLS
public import PushTransport

/// Push Kit v3's authorization: a JWT the app signs itself with its service-account key and sends as
/// the bearer token (no exchange at a token endpoint; docs/providers.md, Huawei H.3). Header
/// `{"kid":<key_id>,"typ":"JWT","alg":"PS256"}`, claims `iss` (sub_account), `aud` (the fixed token
/// URL), `iat` and `exp` (an hour later, Huawei's recommendation; over a day is refused).
public enum HuaweiJWT {
    public static let lifetime: Int64 = 3600

    public static func make(account: HuaweiServiceAccount, issuedAt: Int64, signer: RSASigner) throws(TLSError)
        -> String
    {
        let header = FlatJSONObject.serialize([
            ("kid", .string(account.keyID)), ("typ", .string("JWT")), ("alg", .string("PS256")),
        ])
        let claims = FlatJSONObject.serialize([
            ("iss", .string(account.subAccount)), ("aud", .string(HuaweiServiceAccount.audience)),
            ("iat", .integer(issuedAt)), ("exp", .integer(issuedAt + lifetime)),
        ])
        let signingInput = base64URLEncode(header) + "." + base64URLEncode(claims)
        return signingInput + "." + base64URLEncode(try signer.sign(Array(signingInput.utf8)))
    }

    /// A fetch for ``AccessTokenCache``: a freshly signed JWT, valid an hour (signed locally, so
    /// renewing costs a signature, never a request).
    public static func fetch(
        account: HuaweiServiceAccount, signer: RSASigner, clock: @escaping @Sendable () -> Int64 = unixSeconds
    ) -> AccessTokenCache.Fetch {
        { (try make(account: account, issuedAt: clock(), signer: signer), lifetime) }
    }
}

/// The OAuth 2.0 client-credentials grant of Push Kit's v1/v2 API (HMS Core devices, HarmonyOS 4 and
/// earlier): the app's OAuth client id (the app id) and secret for an access token at
/// `oauth-login.cloud.huawei.com` (docs/providers.md, Huawei H.5).
public enum HuaweiOAuth {
    public static let defaultTokenURL = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"

    public static func fetch(
        clientID: String, clientSecret: String, tokenURL: String = defaultTokenURL, tlsContext: TLSContext,
        loop: EventLoop, timeout: Duration = .seconds(10), proxy: ProxyChoice = .direct
    ) throws(OAuthTokenEndpoint.ExchangeError) -> AccessTokenCache.Fetch {
        try OAuthTokenEndpoint.clientCredentials(
            clientID: clientID, clientSecret: clientSecret, tokenURL: tokenURL, tlsContext: tlsContext, loop: loop,
            timeout: timeout, proxy: proxy)
    }
}

/// A `reason` string from an APNs error response (docs/providers.md A.6), with what it means for the
/// sender. Unknown strings are kept as ``other(_:)`` so they can be reported verbatim.
public enum APNsReason: Sendable, Hashable, CustomStringConvertible {
    case badCollapseId, badDeviceToken, badExpirationDate, badMessageId, badPriority, badTopic
    case deviceTokenNotForTopic, duplicateHeaders, idleTimeout, invalidPushType, missingDeviceToken
    case missingTopic, payloadEmpty, topicDisallowed
    case badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden, invalidProviderToken
    case missingProviderToken, unrelatedKeyIdInToken, badEnvironmentKeyIdInToken
    /// Not in Apple's table, but reported returned by APNs (docs/providers.md A.6 [obs]).
    case badEnvironmentKeyInToken
    case badPath, methodNotAllowed, expiredToken, unregistered, payloadTooLarge
    case tooManyProviderTokenUpdates, tooManyRequests, internalServerError, serviceUnavailable, shutdown
    /// A reason this table doesn't know, verbatim.
    case other(String)

    /// When a push that got this reason may be sent again.
    public enum Retry: Sendable, Hashable {
        /// Permanent: sending the same push again won't help.
        case never
        /// Transient: retry after a delay with backoff (429 TooManyRequests, 500, 503).
        case afterBackoff
        /// The connection is going away: retry on a new connection (IdleTimeout, Shutdown).
        case onNewConnection
        /// Retry once the provider token is dealt with: a fresh JWT for `ExpiredProviderToken`,
        /// the cached one (no new minting) for `TooManyProviderTokenUpdates`.
        case afterProviderTokenHandling
    }

    /// All the known reasons, for tables and tests.
    public static let known: [APNsReason] = [
        .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
        .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
        .missingTopic, .payloadEmpty, .topicDisallowed, .badCertificate, .badCertificateEnvironment,
        .expiredProviderToken, .forbidden, .invalidProviderToken, .missingProviderToken,
        .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken, .badPath,
        .methodNotAllowed, .expiredToken, .unregistered, .payloadTooLarge, .tooManyProviderTokenUpdates,
        .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown,
    ]

    /// The reason for a response body's `reason` string.
    public init(_ string: String) {
        self = APNsReason.known.first { $0.string == string } ?? .other(string)
    }

    /// The reason as APNs spells it.
    public var description: String { string }

    /// True when the token is dead for this topic and should be dropped or disabled.
    public var invalidatesToken: Bool {
        switch self {
        case .unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic: true
        default: false
        }
    }

    /// True when APNs refused the app's own credentials (its key, team or certificate): every
    /// push of the app fails until its configuration is fixed.
    public var refusesCredentials: Bool {
        switch self {
        case .invalidProviderToken, .badCertificate, .badCertificateEnvironment, .badEnvironmentKeyIdInToken,
            .badEnvironmentKeyInToken, .unrelatedKeyIdInToken:
            true
        default: false
        }
    }

    /// Whether and how to retry. Unknown reasons are never retried here; callers fall back on the
    /// HTTP status (see ``Retry/init(httpStatus:)``).
    public var retry: Retry {
        switch self {
        case .tooManyRequests, .internalServerError, .serviceUnavailable: .afterBackoff
        case .idleTimeout, .shutdown: .onNewConnection
        case .expiredProviderToken, .tooManyProviderTokenUpdates: .afterProviderTokenHandling
        default: .never
        }
    }

    /// True unless ``retry`` is ``Retry/never``.
    public var isRetryable: Bool { retry != .never }
}

extension APNsReason.Retry {
    /// The retry rule from the HTTP status alone, for unknown reasons or missing bodies:
    /// 429, 500, 502, 503 and 504 are transient; everything else is permanent.
    public init(httpStatus: Int) {
        self = [429, 500, 502, 503, 504].contains(httpStatus) ? .afterBackoff : .never
    }
}

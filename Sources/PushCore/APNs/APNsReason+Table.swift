// The wire spelling and documented HTTP status of each reason (docs/providers.md A.6).
extension APNsReason {
    /// The reason as APNs spells it, e.g. `"BadDeviceToken"`.
    public var string: String { entry.string }

    /// The HTTP status APNs documents for this reason; nil for ``other(_:)``.
    public var httpStatus: Int? { entry.status }

    private var entry: (string: String, status: Int?) {
        switch self {
        case .badCollapseId: ("BadCollapseId", 400)
        case .badDeviceToken: ("BadDeviceToken", 400)
        case .badExpirationDate: ("BadExpirationDate", 400)
        case .badMessageId: ("BadMessageId", 400)
        case .badPriority: ("BadPriority", 400)
        case .badTopic: ("BadTopic", 400)
        case .deviceTokenNotForTopic: ("DeviceTokenNotForTopic", 400)
        case .duplicateHeaders: ("DuplicateHeaders", 400)
        case .idleTimeout: ("IdleTimeout", 400)
        case .invalidPushType: ("InvalidPushType", 400)
        case .missingDeviceToken: ("MissingDeviceToken", 400)
        case .missingTopic: ("MissingTopic", 400)
        case .payloadEmpty: ("PayloadEmpty", 400)
        case .topicDisallowed: ("TopicDisallowed", 400)
        case .badCertificate: ("BadCertificate", 403)
        case .badCertificateEnvironment: ("BadCertificateEnvironment", 403)
        case .expiredProviderToken: ("ExpiredProviderToken", 403)
        case .forbidden: ("Forbidden", 403)
        case .invalidProviderToken: ("InvalidProviderToken", 403)
        case .missingProviderToken: ("MissingProviderToken", 403)
        case .unrelatedKeyIdInToken: ("UnrelatedKeyIdInToken", 403)
        case .badEnvironmentKeyIdInToken: ("BadEnvironmentKeyIdInToken", 403)
        case .badEnvironmentKeyInToken: ("BadEnvironmentKeyInToken", 403)
        case .badPath: ("BadPath", 404)
        case .methodNotAllowed: ("MethodNotAllowed", 405)
        case .expiredToken: ("ExpiredToken", 410)
        case .unregistered: ("Unregistered", 410)
        case .payloadTooLarge: ("PayloadTooLarge", 413)
        case .tooManyProviderTokenUpdates: ("TooManyProviderTokenUpdates", 429)
        case .tooManyRequests: ("TooManyRequests", 429)
        case .internalServerError: ("InternalServerError", 500)
        case .serviceUnavailable: ("ServiceUnavailable", 503)
        case .shutdown: ("Shutdown", 503)
        case .other(let string): (string, nil)
        }
    }
}

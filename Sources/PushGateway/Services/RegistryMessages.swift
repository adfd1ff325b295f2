import PushCore
import PushProto
import PushStore
import PushWebPush

extension PushgateV1.Endpoint {
    init(_ record: EndpointRecord) {
        self.init()
        id = record.id
        app = record.app
        token = record.token
        enabled = record.enabled
        customUserData = record.customUserData
        createdAt = record.createdAt
        disabledReason = record.disabledReason
        userID = record.userID
    }
}

extension PushgateV1.Subscription {
    init(_ record: SubscriptionRecord) {
        self.init()
        id = record.id
        topic = record.topic
        endpointID = record.endpointID
        filterPolicyJSON = record.filterPolicyJSON
        filterPolicyScope = SNSFilterScope.name(ofStored: record.filterPolicyScope)
    }
}

extension PushgateV1.Delivery {
    init(_ record: DeliveryLogRecord) {
        self.init()
        messageID = record.messageID
        endpointID = record.endpointID
        app = record.app
        token = record.token
        status =
            switch record.status {
            case .delivered: .delivered
            case .rejected: .rejected
            case .failed: .failed
            }
        reason = record.reason
        httpStatus = Int32(clamping: record.httpStatus)
        id = record.providerID
        attempts = Int32(clamping: record.attempts)
        time = record.time
    }
}

extension PushgateV1.Message {
    init(_ record: MessageRecord) {
        self.init()
        messageID = record.id
        state = Self.state(record.state)
        total = record.total
        delivered = record.delivered
        rejected = record.rejected
        failed = record.failed
        skipped = record.skipped
        cancelled = record.cancelled
        publishedAt = record.publishedAt
        waitingForProvider = record.waitingForProvider
        topic = record.topic ?? ""
        endpointID = record.endpointID ?? ""
        userID = record.userID ?? ""
        deliverAt = record.deliverAt
        maxPerSecond = record.maxPerSecond
    }

    static func state(_ state: MessageState) -> PushgateV1.MessageState {
        switch state {
        case .scheduled: .scheduled
        case .accepted: .accepted
        case .fanningOut: .fanningOut
        case .completed: .completed
        case .expired: .expired
        case .cancelled: .cancelled
        }
    }
}

/// page_size for store-backed lists: 0 means the default (100); at most 1000.
func pageLimit(_ pageSize: Int32) throws(GRPCStatus) -> Int {
    guard pageSize >= 0 else { throw GRPCStatus(.invalidArgument, "page_size: must not be negative") }
    return pageSize == 0 ? 100 : min(Int(pageSize), 1000)
}

/// The checks on request fields the store leaves to its callers.
enum RegistryValidation {
    static let maxCustomUserDataBytes = 2048

    /// The token as stored: APNs tokens in lowercase hex; FCM registration tokens and ADM
    /// registration ids as they are (they are case-sensitive); Web Push subscriptions checked
    /// against the app's allowed hosts and kept in one canonical JSON form (endpoint and keys).
    static func normalizedToken(
        _ token: String, app: AppConfiguration, field: String = "token"
    ) throws(GRPCStatus) -> String {
        guard !token.isEmpty else { throw GRPCStatus(.invalidArgument, "\(field): required") }
        switch app.keys {
        case .webpush(let web):
            do {
                return try WebPushSubscription(token, field: field, hosts: web.allowedHosts).canonicalJSON
            } catch {
                throw GRPCStatus(.invalidArgument, error.description)
            }
        case .apns:
            guard let valid = DeviceToken(token) else {
                throw GRPCStatus(.invalidArgument, "\(field): \(DeviceToken.requirement)")
            }
            return valid.hex
        case .fcm:
            do {
                try FCMToken.validate(token, field: field)
            } catch {
                throw GRPCStatus(.invalidArgument, error.description)
            }
            return token
        case .hms:
            do {
                try HMSToken.validate(token, field: field)
            } catch {
                throw GRPCStatus(.invalidArgument, error.description)
            }
            return token
        case .adm:
            do {
                try ADMRegistrationID.validate(token, field: field)
            } catch {
                throw GRPCStatus(.invalidArgument, error.description)
            }
            return token
        }
    }

    static func customUserData(_ data: String, field: String = "custom_user_data") throws(GRPCStatus) {
        let size = data.utf8.count
        guard size <= maxCustomUserDataBytes else {
            throw GRPCStatus(
                .invalidArgument, "\(field): \(size) bytes, over the limit of \(maxCustomUserDataBytes) bytes")
        }
        // PostgreSQL's text cannot hold U+0000 (and libpq passes parameters as C strings).
        guard !data.utf8.contains(0) else {
            throw GRPCStatus(.invalidArgument, "\(field): must not contain the NUL character (U+0000)")
        }
    }

    /// Topic names are [A-Za-z0-9_-]{1,256}, like SNS's.
    static func topicName(_ name: String, field: String = "name") throws(GRPCStatus) {
        guard SNSNames.isTopicName(name) else {
            throw GRPCStatus(.invalidArgument, "\(field): must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        }
    }

    static let maxUserIDBytes = 256

    /// A user id is the caller's own id for a person: 1 to 256 bytes of UTF-8 without control
    /// characters (`allowEmpty`: "" means none, where a field may clear it).
    static func userID(_ id: String, field: String = "user_id", allowEmpty: Bool = false) throws(GRPCStatus) {
        if id.isEmpty {
            guard allowEmpty else { throw GRPCStatus(.invalidArgument, "\(field): required") }
            return
        }
        let size = id.utf8.count
        guard size <= maxUserIDBytes else {
            throw GRPCStatus(.invalidArgument, "\(field): \(size) bytes, over the limit of \(maxUserIDBytes) bytes")
        }
        guard !id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw GRPCStatus(.invalidArgument, "\(field): must not contain control characters")
        }
    }

    static func required(_ value: String, _ field: String) throws(GRPCStatus) {
        guard !value.isEmpty else { throw GRPCStatus(.invalidArgument, "\(field): required") }
    }
}

extension NotificationRequest {
    /// The ActivityKit fields of a Live Activity push (docs/providers.md A.8): what the `aps`
    /// dictionary carries besides the alert.
    public struct LiveActivity: Sendable, Equatable {
        /// What the push does to the activity.
        public enum Event: String, Sendable, CaseIterable {
            /// Push-to-start (iOS 17.2+): a new activity, from `attributes_type` and `attributes`.
            case start
            case update
            case end
        }

        /// `start`, `update` or `end`, as given (checked by the builder, which names the field).
        public var event: String
        /// `content-state`: the activity's ContentState, a JSON object.
        public var contentStateJSON: String
        /// `timestamp`, Unix seconds; 0: the time the notification is prepared.
        public var timestamp: Int64
        /// `stale-date`, Unix seconds; 0: none.
        public var staleDate: Int64
        /// `dismissal-date` (end only), Unix seconds; 0: the system's default.
        public var dismissalDate: Int64
        /// `relevance-score`; nil: none.
        public var relevanceScore: Double?
        /// `attributes-type` and `attributes` (start only): the ActivityAttributes type and value.
        public var attributesType: String
        public var attributesJSON: String
        /// `input-push-token: 1` (start only): the new activity gets an update token.
        public var inputPushToken: Bool
        /// `input-push-channel` (start only): the broadcast channel the new activity listens to.
        public var inputPushChannel: String

        public init(
            event: String, contentStateJSON: String = "", timestamp: Int64 = 0, staleDate: Int64 = 0,
            dismissalDate: Int64 = 0, relevanceScore: Double? = nil, attributesType: String = "",
            attributesJSON: String = "", inputPushToken: Bool = false, inputPushChannel: String = ""
        ) {
            self.event = event
            self.contentStateJSON = contentStateJSON
            self.timestamp = timestamp
            self.staleDate = staleDate
            self.dismissalDate = dismissalDate
            self.relevanceScore = relevanceScore
            self.attributesType = attributesType
            self.attributesJSON = attributesJSON
            self.inputPushToken = inputPushToken
            self.inputPushChannel = inputPushChannel
        }
    }
}

extension NotificationRequest {
    /// Refuses `live_activity` for a provider other than APNs: ActivityKit pushes go only through
    /// APNs, and dropping the field would send a different notification than the one asked for.
    func refuseLiveActivity(provider: String) throws(ValidationError) {
        guard liveActivity == nil else {
            throw ValidationError(
                field: "live_activity", message: "is for APNs (ActivityKit); \(provider) cannot carry a Live Activity")
        }
        guard filterCriteria.isEmpty else {
            throw ValidationError(
                field: "filter_criteria",
                message: "is APNs's (a Focus filter, aps.filter-criteria); \(provider) cannot carry it")
        }
    }
}

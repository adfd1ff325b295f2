/// One notification of a `Send` request: a plain Swift mirror of `pushgate.v1.Notification`.
///
/// The gateway converts from protobuf; empty strings, `false` and `0` mean "not set", as in proto3,
/// and `badge` is nil when the `badge_value` oneof is absent.
public struct NotificationRequest: Sendable, Equatable {
    /// The alert part of the payload (`pushgate.v1.Alert`).
    public struct Alert: Sendable, Equatable {
        /// `title`.
        public var title: String
        /// `subtitle`.
        public var subtitle: String
        /// `body`.
        public var body: String
        /// `launch-image`.
        public var launchImage: String
        /// `title-loc-key`.
        public var titleLocKey: String
        /// `title-loc-args`.
        public var titleLocArgs: [String]
        /// `loc-key`.
        public var locKey: String
        /// `loc-args`.
        public var locArgs: [String]
        /// An image URL: FCM's `notification.image`. APNs has no alert image, so the APNs payload
        /// leaves it out (a rich iOS notification downloads its image in a service extension).
        public var image: String
        /// `action-loc-key`, Apple's legacy key for the action button's localized label.
        public var actionLocKey: String

        /// Creates an alert; every field defaults to unset.
        public init(
            title: String = "", subtitle: String = "", body: String = "", launchImage: String = "",
            titleLocKey: String = "", titleLocArgs: [String] = [], locKey: String = "", locArgs: [String] = [],
            image: String = "", actionLocKey: String = ""
        ) {
            self.title = title
            self.subtitle = subtitle
            self.body = body
            self.launchImage = launchImage
            self.titleLocKey = titleLocKey
            self.titleLocArgs = titleLocArgs
            self.locKey = locKey
            self.locArgs = locArgs
            self.image = image
            self.actionLocKey = actionLocKey
        }

        /// True when no field is set. An empty alert is treated exactly like no alert: it adds
        /// nothing to the payload and doesn't conflict with `payload_json`.
        public var isEmpty: Bool { isEmptyForAPNs && image.isEmpty }

        /// True when no field that APNs sends is set (`image` is FCM-only), so an alert holding
        /// only an image builds no `aps.alert` rather than `"alert":{}`.
        public var isEmptyForAPNs: Bool {
            title.isEmpty && subtitle.isEmpty && body.isEmpty && launchImage.isEmpty && titleLocKey.isEmpty
                && titleLocArgs.isEmpty && locKey.isEmpty && locArgs.isEmpty && actionLocKey.isEmpty
        }
    }

    /// The configured app to send through; empty means the default app.
    public var app: String = ""
    /// Device tokens as received; one result per token.
    public var tokens: [String] = []
    /// `aps.alert`; nil or empty adds nothing.
    public var alert: Alert? = nil
    /// `aps.badge`; nil leaves the badge alone, 0 clears it.
    public var badge: Int32? = nil
    /// `aps.sound`; `"default"` plays the system sound.
    public var sound: String = ""
    /// `aps.category`.
    public var category: String = ""
    /// `aps.thread-id` (`thread_id`).
    public var threadID: String = ""
    /// `aps.content-available: 1`.
    public var contentAvailable: Bool = false
    /// `aps.mutable-content: 1`.
    public var mutableContent: Bool = false
    /// `passive`, `active`, `time-sensitive` or `critical`.
    public var interruptionLevel: String = ""
    /// A JSON object whose keys go next to `aps`.
    public var dataJSON: String = ""
    /// A complete payload used as is; the payload-building fields must then be empty.
    public var payloadJSON: String = ""
    /// nil: inferred from the payload (``PushType/infer(fromPayload:)``).
    public var pushType: PushType? = nil
    /// 0 (default), 1, 5 or 10.
    public var priority: Int32 = 0
    /// Unix seconds; 0 means no `apns-expiration` header.
    public var expiration: Int64 = 0
    /// `apns-collapse-id`, at most 64 bytes; empty sends none.
    public var collapseID: String = ""
    /// The explicit `apns-topic`; empty means the app's bundle id plus the push type's suffix.
    public var topic: String = ""
    /// The `apns-id`; empty lets APNs generate one.
    public var id: String = ""
    /// Web Push only: the `Urgency` header (`very-low`, `low`, `normal`, `high`); empty: from
    /// `priority`.
    public var urgency: String = ""
    /// APNs only: a Live Activity push (``LiveActivity``); nil: an ordinary notification.
    public var liveActivity: LiveActivity? = nil
    /// APNs only: play `sound` as a critical alert.
    public var criticalSound: CriticalSound? = nil
    /// FCM only: the Android notification's look, the analytics label.
    public var fcm: FCMOptions? = nil
    /// Web Push only: the declarative form and its members.
    public var webPush: WebPushOptions? = nil
    /// APNs only: `aps.filter-criteria` (a Focus filter).
    public var filterCriteria: String = ""

    /// Creates a request with every field unset: what ``assign(proto:)`` fills in place. Not the
    /// initializer below with its defaults: that one, called from another module, built the whole
    /// value and copied it out (a retain and a release per field, and ~600 bytes moved twice).
    public init() {}

    /// Creates a request; every field defaults to unset.
    public init(
        app: String = "", tokens: [String] = [], alert: Alert? = nil, badge: Int32? = nil, sound: String = "",
        category: String = "", threadID: String = "", contentAvailable: Bool = false,
        mutableContent: Bool = false, interruptionLevel: String = "", dataJSON: String = "",
        payloadJSON: String = "", pushType: PushType? = nil, priority: Int32 = 0, expiration: Int64 = 0,
        collapseID: String = "", topic: String = "", id: String = "", urgency: String = "",
        liveActivity: LiveActivity? = nil, criticalSound: CriticalSound? = nil, fcm: FCMOptions? = nil
    ) {
        self.app = app
        self.tokens = tokens
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.category = category
        self.threadID = threadID
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.interruptionLevel = interruptionLevel
        self.dataJSON = dataJSON
        self.payloadJSON = payloadJSON
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.topic = topic
        self.id = id
        self.urgency = urgency
        self.liveActivity = liveActivity
        self.criticalSound = criticalSound
        self.fcm = fcm
    }
}

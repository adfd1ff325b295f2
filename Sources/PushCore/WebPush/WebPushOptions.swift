extension NotificationRequest {
    /// Web Push's own options (`Notification.webpush`): the declarative form (Declarative Web Push,
    /// Safari 18.4+; docs/providers.md) and the members only it has.
    public struct WebPushOptions: Sendable, Equatable {
        /// Send `{"web_push": 8030, "notification": {…}}` rather than Pushgate's own JSON.
        public var declarative: Bool
        /// The https URL opened on a click; required with `declarative`.
        public var navigate: String
        /// A BCP 47 language tag.
        public var lang: String
        /// `auto`, `ltr` or `rtl`.
        public var dir: String
        public var silent: Bool
        /// Let a service worker change the notification before it is shown.
        public var mutable: Bool

        public init(
            declarative: Bool = false, navigate: String = "", lang: String = "", dir: String = "",
            silent: Bool = false, mutable: Bool = false
        ) {
            self.declarative = declarative
            self.navigate = navigate
            self.lang = lang
            self.dir = dir
            self.silent = silent
            self.mutable = mutable
        }

        /// True when nothing is set (the message as if `webpush` were absent).
        public var isEmpty: Bool {
            !declarative && navigate.isEmpty && lang.isEmpty && dir.isEmpty && !silent && !mutable
        }

        /// The first member set that only the declarative form carries, when `declarative` is off.
        var firstDeclarativeOnlyField: String? {
            if !navigate.isEmpty { return "navigate" }
            if !lang.isEmpty { return "lang" }
            if !dir.isEmpty { return "dir" }
            if silent { return "silent" }
            if mutable { return "mutable" }
            return nil
        }
    }
}

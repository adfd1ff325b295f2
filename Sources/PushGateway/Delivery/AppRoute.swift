import PushCore
import PushDelivery
import PushWebPush

/// One configured app as a Send reaches it: its settings, its delivery client and its metric
/// series, put together when the configuration is loaded (or reloaded), so a Send resolves its app
/// once, by name, and then reaches the client and the counters through this reference. Before, a
/// 1-token Send copied the app's settings (a retain per field) and found the client, the counters
/// and the app again in three dictionaries keyed by the app's name.
final class AppRoute: Sendable {
    let app: AppConfiguration
    /// Nil only where no clients were made (validation on its own, in tests and the gorush mapping).
    let client: (any DeliveryClient)?
    /// `pushgate_notifications_total` of the app; nil without metrics.
    let counters: NotificationCounters?

    /// What validating a notification needs of the app's keys, read out once: switching on
    /// `app.keys` copied the platform's whole key set (a retain per field) for every notification.
    let platform: Platform

    enum Platform: Sendable {
        /// `bundleID` is the default topic; `usesCertificate`: certificate auth (no Live Activities).
        case apns(bundleID: String, usesCertificate: Bool)
        case fcm
        case adm
        case webpush(allowedHosts: WebPushHostPolicy)
        case hms(HMSAPI)
    }

    init(_ app: AppConfiguration, client: (any DeliveryClient)?, counters: NotificationCounters?) {
        self.app = app
        self.client = client
        self.counters = counters
        switch app.keys {
        case .apns(let apns): platform = .apns(bundleID: apns.bundleID, usesCertificate: !apns.certFile.isEmpty)
        case .fcm: platform = .fcm
        case .adm: platform = .adm
        case .webpush(let web): platform = .webpush(allowedHosts: web.allowedHosts)
        case .hms(let hms): platform = .hms(hms.api)
        }
    }

    var name: String { app.name }
}

/// The apps of one configuration in its order, found the way ``GatewayConfiguration/app(named:)``
/// finds them (an empty name is the first app).
struct AppRoutes: Sendable {
    let all: [AppRoute]

    init(_ all: [AppRoute]) { self.all = all }

    /// Routes without clients or counters: for checking requests against a configuration alone.
    init(configuration: GatewayConfiguration) {
        all = configuration.apps.map { AppRoute($0, client: nil, counters: nil) }
    }

    func route(named name: String) -> AppRoute? {
        GatewayConfiguration.app(named: name, in: all, name: \.name)
    }
}

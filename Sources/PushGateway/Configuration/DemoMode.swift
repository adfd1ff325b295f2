public import PushPosix

/// Demo mode, as the gateway sees it: with no apps configured (and `demoWhenNoApps` set), it asks
/// `start` for a stand-in app on its own event loops and delivers to it. What serves that app is
/// the caller's (the executable starts a mock APNs), so this module depends on no mock.
public struct DemoMode: Sendable {
    /// The app's name, known before anything starts: the configuration's checks need it.
    public let appName: String
    public let start: @Sendable (EventLoopGroup) throws -> DemoApp

    public init(appName: String, start: @escaping @Sendable (EventLoopGroup) throws -> DemoApp) {
        self.appName = appName
        self.start = start
    }
}

/// A started demo app: its configuration, what the DEMO MODE warning names, and how to stop what
/// serves it (at the gateway's stop).
public struct DemoApp: Sendable {
    public let app: AppConfiguration
    /// What the app delivers to, for the warning: "MOCK APNs".
    public let standIn: String
    /// Where the stand-in listens ("127.0.0.1:port").
    public let address: String
    let close: @Sendable () -> Void

    public init(
        app: AppConfiguration, standIn: String, address: String, close: @escaping @Sendable () -> Void
    ) {
        self.app = app
        self.standIn = standIn
        self.address = address
        self.close = close
    }
}

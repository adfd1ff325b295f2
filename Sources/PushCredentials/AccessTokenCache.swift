public import PushPosix
import PushSync

/// The OAuth2 access token of one app (FCM, ADM), shared by all of its connections.
///
/// Fetched on first use, then renewed in the background a few minutes before it expires (5 min,
/// or half its life when that is shorter) while the old one is still used; a 401 renews it once
/// for all the requests that saw it refused. Never one per send: ``fetches`` counts them.
public final class AccessTokenCache: Sendable {
    /// Gets a new token: the access token and its lifetime in seconds (`expires_in`).
    public typealias Fetch = @Sendable () async throws -> (accessToken: String, expiresIn: Int64)

    private struct State {
        /// `Bearer <token>`; empty: none usable.
        var header = ""
        var generation: Int64 = 0
        var obtainedAt: Int64 = 0
        /// Renew from here on (in the background: the token still works until `usableUntil`).
        var renewAt: Int64 = 0
        /// Not used from here on: it could expire on the way (10 s before `expires_in` runs out,
        /// or a quarter of its life when that is shorter).
        var usableUntil: Int64 = 0
        var fetching = false
        var waiters: [any AuthorizationWaiter] = []
        /// The last fetch failed: the reason, and when (new requests fail fast for a moment rather
        /// than hammer the token endpoint).
        var failure: (reason: String, at: Int64)?
        var fetches = 0
    }

    /// After a failed fetch, requests fail at once for this long before a new fetch is tried.
    static let failureHoldoff: Int64 = 1
    /// A background renewal that failed is tried again after this long (the old token still works).
    static let backgroundRetryDelay: Int64 = 30

    private let fetch: Fetch
    private let clock: @Sendable () -> Int64
    private let logger: @Sendable (String, (any Error)?) -> Void
    private let attempts: Int
    private let state = Locked(State())

    /// - Parameters:
    ///   - attempts: tries per renewal before the waiting requests are FAILED.
    public init(
        attempts: Int = 3, clock: @escaping @Sendable () -> Int64 = unixSeconds,
        logger: @escaping @Sendable (String, (any Error)?) -> Void = { _, _ in }, fetch: @escaping Fetch
    ) {
        self.fetch = fetch
        self.clock = clock
        self.logger = logger
        self.attempts = max(1, attempts)
    }

    /// The credential for a connection about to submit (see ``ProviderDialect``).
    public func authorization(for waiter: any AuthorizationWaiter) -> ProviderAuthorization {
        let now = clock()
        let (answer, startFetch) = state.withLock { state -> (ProviderAuthorization, Bool) in
            let usable = !state.header.isEmpty && now < state.usableUntil
            if usable {
                // Renew in the background; keep using this one meanwhile.
                let recentlyFailed = state.failure.map { now - $0.at < Self.backgroundRetryDelay } ?? false
                let start = now >= state.renewAt && !state.fetching && !recentlyFailed
                if start { state.fetching = true }
                return (.credential(state.header, generation: state.generation), start)
            }
            if !state.fetching, let failure = state.failure, now - failure.at < Self.failureHoldoff {
                return (.failed(failure.reason), false)
            }
            state.waiters.append(waiter)
            let start = !state.fetching
            state.fetching = true
            return (.pending, start)
        }
        if startFetch { renew() }
        return answer
    }

    /// FCM refused the token of `generation` (401): drop it unless a newer one is already there,
    /// so the next request fetches one. Many refused requests, one renewal.
    public func reportRejected(generation: Int64) {
        state.withLock { state in
            guard state.generation == generation, !state.header.isEmpty else { return }
            state.header = ""
        }
    }

    /// When the token in use was obtained (Unix seconds); nil before the first.
    public var obtainedAt: Int64? {
        state.withLock { $0.generation == 0 ? nil : $0.obtainedAt }
    }

    /// Tokens fetched so far (tests, metrics).
    public var fetches: Int { state.withLock { $0.fetches } }

    private func renew() {
        Task { [self] in
            var lastError: (any Error)?
            for attempt in 0..<attempts {
                if attempt > 0 { try? await Task.sleep(for: .milliseconds(250 << attempt)) }
                do {
                    let (token, expiresIn) = try await fetch()
                    installed(token: token, expiresIn: expiresIn)
                    return
                } catch {
                    lastError = error
                    logger("access token request failed", error)
                }
            }
            failed("OAuthTokenError: \(lastError.map { "\($0)" } ?? "no answer")")
        }
    }

    private func installed(token: String, expiresIn: Int64) {
        let now = clock()
        let waiters = state.withLock { state -> [any AuthorizationWaiter] in
            state.header = "Bearer \(token)"
            state.generation += 1
            state.fetches += 1
            state.obtainedAt = now
            state.usableUntil = now + expiresIn - min(10, expiresIn / 4)
            state.renewAt = now + max(expiresIn - 300, expiresIn / 2)
            state.fetching = false
            state.failure = nil
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.authorizationDidChange() }
    }

    private func failed(_ reason: String) {
        let now = clock()
        let waiters = state.withLock { state -> [any AuthorizationWaiter] in
            state.fetching = false
            state.failure = (reason, now)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.authorizationDidChange() }
    }
}

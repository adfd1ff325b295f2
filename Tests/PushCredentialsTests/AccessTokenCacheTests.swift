import PushPosix
import PushSync
import Synchronization
import Testing

@testable import PushCredentials

/// Counts the wake-ups a connection would get.
private final class Waiter: AuthorizationWaiter {
    let calls = Atomic<Int>(0)
    func authorizationDidChange() { calls.add(1, ordering: .relaxed) }
}

/// A token endpoint in memory: hands out `token-N`, or fails while `failing` is set.
private final class FakeEndpoint: Sendable {
    let fetches = Atomic<Int>(0)
    let failing = Atomic<Bool>(false)
    /// While set, a fetch waits (so a test can line up several requests behind it first).
    let held = Atomic<Bool>(false)
    let lifetime: Int64

    init(lifetime: Int64 = 3600) { self.lifetime = lifetime }

    func fetch() async throws -> (accessToken: String, expiresIn: Int64) {
        while held.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(1)) }
        let n = fetches.add(1, ordering: .relaxed).newValue
        if failing.load(ordering: .relaxed) { throw OAuthTokenEndpoint.ExchangeError(description: "invalid_grant") }
        return ("token-\(n)", lifetime)
    }
}

@Suite("FCM access tokens")
struct AccessTokenCacheTests {
    /// Polls until `condition` holds (the fetch runs in a task) or 5 s pass.
    func eventually(_ condition: () -> Bool) async {
        for _ in 0..<500 where !condition() {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("one fetch serves every waiter and every later request until renewal is due")
    func oneFetch() async {
        let endpoint = FakeEndpoint()
        // Held until all three have asked: on a loaded machine (or under a sanitizer) the fetch
        // task could otherwise finish between two of them.
        endpoint.held.store(true, ordering: .relaxed)
        let now = Locked<Int64>(1_000)
        let cache = AccessTokenCache(clock: { now.withLock { $0 } }, fetch: endpoint.fetch)
        let waiters = (0..<3).map { _ in Waiter() }
        for waiter in waiters {
            guard case .pending = cache.authorization(for: waiter) else {
                Issue.record("the first request must wait for the token")
                return
            }
        }
        endpoint.held.store(false, ordering: .relaxed)
        await eventually { waiters.allSatisfy { $0.calls.load(ordering: .relaxed) == 1 } }
        #expect(waiters.allSatisfy { $0.calls.load(ordering: .relaxed) == 1 })
        for _ in 0..<1000 {
            guard case .credential(let value, let generation) = cache.authorization(for: waiters[0]) else {
                Issue.record("a fetched token must be used")
                return
            }
            #expect(value == "Bearer token-1")
            #expect(generation == 1)
        }
        #expect(endpoint.fetches.load(ordering: .relaxed) == 1)
        #expect(cache.obtainedAt == 1_000)
    }

    @Test("renewed in the background 5 minutes before expiry, the old token used meanwhile")
    func backgroundRenewal() async {
        let endpoint = FakeEndpoint()
        let now = Locked<Int64>(1_000)
        let cache = AccessTokenCache(clock: { now.withLock { $0 } }, fetch: endpoint.fetch)
        let waiter = Waiter()
        _ = cache.authorization(for: waiter)
        await eventually { cache.fetches == 1 }
        now.withLock { $0 += 3600 - 300 }
        guard case .credential(let old, _) = cache.authorization(for: waiter) else {
            Issue.record("a token still valid must be used while its successor is fetched")
            return
        }
        #expect(old == "Bearer token-1")
        await eventually { cache.fetches == 2 }
        guard case .credential(let renewed, let generation) = cache.authorization(for: waiter) else {
            Issue.record("the renewed token must be used")
            return
        }
        #expect(renewed == "Bearer token-2")
        #expect(generation == 2)
        #expect(endpoint.fetches.load(ordering: .relaxed) == 2)
    }

    @Test("a refused token is renewed once, however many requests saw it refused")
    func renewOnce() async {
        let endpoint = FakeEndpoint()
        let cache = AccessTokenCache(fetch: endpoint.fetch)
        let waiter = Waiter()
        _ = cache.authorization(for: waiter)
        await eventually { cache.fetches == 1 }
        for _ in 0..<100 { cache.reportRejected(generation: 1) }
        guard case .pending = cache.authorization(for: waiter) else {
            Issue.record("a refused token must not be used again")
            return
        }
        await eventually { cache.fetches == 2 }
        for _ in 0..<100 { cache.reportRejected(generation: 1) }
        guard case .credential(let value, let generation) = cache.authorization(for: waiter) else {
            Issue.record("late reports about the old token must not drop the new one")
            return
        }
        #expect(value == "Bearer token-2")
        #expect(generation == 2)
        #expect(endpoint.fetches.load(ordering: .relaxed) == 2)
    }

    @Test("a failed fetch fails the waiters with the reason, then is tried again")
    func failure() async throws {
        let endpoint = FakeEndpoint()
        endpoint.failing.store(true, ordering: .relaxed)
        let now = Locked<Int64>(1_000)
        let cache = AccessTokenCache(attempts: 2, clock: { now.withLock { $0 } }, fetch: endpoint.fetch)
        let waiter = Waiter()
        _ = cache.authorization(for: waiter)
        await eventually { waiter.calls.load(ordering: .relaxed) == 1 }
        #expect(endpoint.fetches.load(ordering: .relaxed) == 2, "tried `attempts` times")
        guard case .failed(let reason) = cache.authorization(for: waiter) else {
            Issue.record("requests right after a failed fetch must fail with its reason")
            return
        }
        #expect(reason.contains("OAuthTokenError"))
        #expect(reason.contains("invalid_grant"))
        endpoint.failing.store(false, ordering: .relaxed)
        now.withLock { $0 += 2 }
        guard case .pending = cache.authorization(for: waiter) else {
            Issue.record("after the hold-off a new fetch is tried")
            return
        }
        await eventually { cache.fetches == 1 }
        #expect(cache.fetches == 1)
    }

    @Test("token endpoint answers: success, Google's error body, no token")
    func parse() throws {
        let ok = try OAuthTokenEndpoint.parse(
            status: 200, body: Array(#"{"access_token":"ya29.x","expires_in":3599,"token_type":"Bearer"}"#.utf8))
        #expect(ok.accessToken == "ya29.x")
        #expect(ok.expiresIn == 3599)
        #expect(throws: OAuthTokenEndpoint.ExchangeError.self) {
            try OAuthTokenEndpoint.parse(status: 200, body: Array(#"{"token_type":"Bearer"}"#.utf8))
        }
        do {
            _ = try OAuthTokenEndpoint.parse(
                status: 400,
                body: Array(#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#.utf8))
            Issue.record("a 400 must throw")
        } catch {
            #expect(error.description == "the token endpoint answered 400 invalid_grant: Invalid JWT Signature.")
        }
    }
}

import PushSync

/// Verified VAPID tokens by `Authorization` value, so a sender that reuses its token (as every
/// sender does, for hours) costs one ES256 verification, not one per push. Bounded: emptied when
/// full. Also says whether a token is seen for the first time, for the distinct-token counts.
final class PresentedVAPIDTokens: Sendable {
    private struct State {
        var verified: [String: PresentedVAPIDToken] = [:]
        /// Hashes of every JWT verified so far (8 bytes each, never emptied), so a token that
        /// fell out of `verified` is not counted again.
        var seen: Set<Int> = []
    }

    private let limit: Int
    private let state = Locked(State())

    init(limit: Int) { self.limit = max(1, limit) }

    /// The verified token of `authorization`, and whether its JWT was never seen before.
    func token(for authorization: String?) -> Result<(token: PresentedVAPIDToken, firstSeen: Bool), VAPIDFailure> {
        if let authorization, let cached = state.withLock({ $0.verified[authorization] }) {
            return .success((cached, false))
        }
        let parameters: (token: String, key: String)
        switch PresentedVAPIDToken.parameters(of: authorization) {
        case .failure(let failure): return .failure(failure)
        case .success(let found): parameters = found
        }
        // Verified outside the lock: an ES256 verification is the slow part.
        let token: PresentedVAPIDToken
        switch PresentedVAPIDToken.verify(jwt: parameters.token, key: parameters.key) {
        case .failure(let failure): return .failure(failure)
        case .success(let verified): token = verified
        }
        let firstSeen = state.withLock { state in
            if state.verified.count >= limit { state.verified.removeAll(keepingCapacity: true) }
            state.verified[authorization ?? ""] = token
            return state.seen.insert(token.jwt.hashValue).inserted
        }
        return .success((token, firstSeen))
    }
}

import PushCore
import PushMockSupport

extension MockWebPushShared {
    static let maxSubscriptionsPerRequest = 100_000

    /// `POST /_mock/subscriptions` with `{"count":N,"prefix":"…","host":"…"}` (all optional; an
    /// empty body takes the defaults: 1, "", the request's authority): a JSON array of new
    /// subscriptions, each `PushSubscription.toJSON()` plus `private_key`. Mock only.
    func issueSubscriptions(_ request: MockRequest) -> MockResponse {
        guard request.method == "POST" else {
            return WebPushRefusal(.methodNotAllowed, "POST a JSON object to \(Self.subscriptionsPath)")
                .response(retryAfter: nil)
        }
        let options: (count: Int, prefix: String, host: String)
        switch Self.subscriptionOptions(request) {
        case .failure(let refusal): return refusal.response(retryAfter: nil)
        case .success(let read): options = read
        }
        var writer = JSONWriter(reservingCapacity: options.count * 330 + 2)
        writer.beginArray()
        for id in newIDs(count: options.count, prefix: options.prefix) {
            do {
                MockWebPushSubscription(id: id, authority: options.host, keys: try keys.keys(for: id))
                    .write(to: &writer, privateKey: true)
            } catch {
                return WebPushRefusal(.internalError, "Cannot derive the keys of \(id): \(error)")
                    .response(retryAfter: nil)
            }
        }
        writer.endArray()
        stats.update { $0.subscriptionsIssued += options.count }
        return .json(200, writer.bytes, contentType: "application/json")
    }

    private static func subscriptionOptions(
        _ request: MockRequest
    ) -> Result<(count: Int, prefix: String, host: String), WebPushRefusal> {
        func bad(_ message: String) -> Result<(count: Int, prefix: String, host: String), WebPushRefusal> {
            .failure(WebPushRefusal(.badRequest, message))
        }
        var count = 1
        var prefix = ""
        var host = request.authority
        if !request.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            guard request.bodyLength == request.body.count, let document = try? JSONParser.parse(request.body),
                document.objectMembers != nil
            else { return bad("the body must be a JSON object: {\"count\":N,\"prefix\":\"…\",\"host\":\"…\"}") }
            if let value = document["count"] {
                guard case .number(let text) = value, let number = Int(text),
                    (1...maxSubscriptionsPerRequest).contains(number)
                else { return bad("count: must be an integer from 1 to \(maxSubscriptionsPerRequest)") }
                count = number
            }
            if let value = document["prefix"] {
                guard case .string(let text) = value, SubscriptionID.isValidPrefix(text) else {
                    return bad("prefix: must be a string of A-Z a-z 0-9 - _ (under \(SubscriptionID.maxLength))")
                }
                prefix = text
            }
            if let value = document["host"] {
                guard case .string(let text) = value, Self.isAuthority(text) else {
                    return bad("host: must be an authority such as localhost:8446 (no scheme, path or spaces)")
                }
                host = text
            }
        }
        guard Self.isAuthority(host) else { return bad("host: the request has no authority; give one") }
        // The ids end with `s<n>`: keep room for up to 12 digits.
        guard prefix.utf8.count + 13 <= SubscriptionID.maxLength else {
            return bad("prefix: at most \(SubscriptionID.maxLength - 13) characters")
        }
        return .success((count, prefix, host))
    }

    /// A host with an optional port, as an endpoint's authority: no scheme, path, user info or spaces.
    static func isAuthority(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255
            && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && !"/?#@\\\"".utf8.contains($0) }
    }
}

import PushCommandLine
import PushCore
import PushHTTP2
import PushPosix
import PushTLS
import PushTransport

/// Web Push subscriptions for a bench run, from the mock push service's own door
/// (`POST /_mock/subscriptions`), as browsers get theirs from their push service.
enum BenchSubscriptions {
    /// `count` subscriptions on `origin` (`127.0.0.1:port`), each as the browser's
    /// `PushSubscription.toJSON()` text (the mock's `private_key` left out).
    static func fetch(count: Int, from origin: String, caFile: String) async throws -> [String] {
        let tls = try TLSContext.client(alpn: ["h2", "http/1.1"], caFile: caFile, useSystemRoots: false)
        guard let endpoint = HTTPSOrigin(url: "https://" + origin) else {
            throw CommandLineError("mock-webpush: cannot read its origin from \(origin)")
        }
        var request = JSONWriter()
        request.beginObject()
        request.key("count")
        request.int(count)
        request.key("host")
        request.string(origin)
        request.endObject()
        let loop = try EventLoopGroup(loopCount: 1, namePrefix: "bench-subscriptions")
        defer { loop.shutdown() }
        let response = try await HTTPExchange.send(
            host: endpoint.host, port: endpoint.port,
            headers: [
                HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "https"),
                HTTP2Header(":authority", endpoint.authority), HTTP2Header(":path", "/_mock/subscriptions"),
                HTTP2Header("content-type", "application/json"),
            ], body: request.bytes, tlsContext: tls, loop: loop.loops[0], timeout: .seconds(60), maxBody: 64 << 20)
        guard response.status == 200, case .array(let items)? = try? JSONParser.parse(response.body),
            items.count == count
        else {
            throw CommandLineError(
                "mock-webpush: POST /_mock/subscriptions answered \(response.status): "
                    + String(decoding: response.body.prefix(300), as: UTF8.self))
        }
        return items.map { item in
            let members = (item.objectMembers ?? []).filter { $0.0 != "private_key" }
            return String(decoding: JSONWriter.encode(.object(members)), as: UTF8.self)
        }
    }
}

import PushMetrics

#if canImport(Glibc)
    import Glibc
#endif

/// The gateway's own provider-request latency (`pushgate_provider_request_seconds`: a request
/// submitted to APNs or FCM until its response, per request that got one), read from its
/// `/metrics` before and after the measured run.
///
/// It splits an RPC's latency in two: the provider's round trip as the gateway saw it, and the rest
/// (the bench client, the gRPC front door, validation and the answer). Summed over the gateway's
/// apps: the bench's own gateway has one, and a `--target` gateway is taken to have no other traffic.
enum ProviderLatency {
    static let family = "pushgate_provider_request_seconds"

    /// One blocking `GET /metrics` (a second at most) and the family from it; nil when the
    /// gateway serves no metrics there or does not answer.
    static func scrape(host: String, port: Int) -> HistogramReading? {
        guard let text = httpGet(host: host, port: port, path: "/metrics") else { return nil }
        return HistogramReading.parse(text, family: family)
    }

    static func httpGet(host: String, port: Int, path: String) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, "\(port)", &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var limit = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else { return nil }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count
        else {
            return nil
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { break }
            guard n > 0 else { return nil }
            response += chunk[..<n]
            if response.count > 8 << 20 { return nil }
        }
        let separator = Array("\r\n\r\n".utf8)
        guard response.starts(with: Array("HTTP/1.1 200".utf8)),
            let headEnd = response.indices.first(where: { response[$0...].starts(with: separator) })
        else { return nil }
        return String(decoding: response[(headEnd + separator.count)...], as: UTF8.self)
    }
}

import Glibc
import PushMetrics
import PushPosix
import Testing

@Suite("Metrics HTTP server")
struct HTTPServerTests {
    @Test("GET /metrics, /healthz, 404, 405, 400, oversized head, 503 when stopping")
    func routes() throws {
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "metrics-http")
        defer { group.shutdown() }
        let registry = MetricsRegistry()
        registry.counter("things_total", help: "Things.").labels().increment(by: 7)
        let server = try MetricsHTTPServer(host: "127.0.0.1", port: 0, group: group, registry: registry)
        defer { server.close() }
        let port = server.localPort

        let metrics = try exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(metrics.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(metrics.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
        #expect(metrics.contains("Connection: close\r\n"))
        #expect(metrics.hasSuffix("\r\n\r\n" + registry.render()))
        #expect(metrics.contains("things_total 7\n"))
        #expect(try exchange(port, "GET /metrics?x=1 HTTP/1.0\r\n\r\n").hasPrefix("HTTP/1.1 200 OK\r\n"))

        let health = try exchange(port, "GET /healthz HTTP/1.1\r\n\r\n")
        #expect(health.hasPrefix("HTTP/1.1 200 OK\r\n") && health.hasSuffix("\r\n\r\nok\n"))
        #expect(try exchange(port, "GET /other HTTP/1.1\r\n\r\n").hasPrefix("HTTP/1.1 404 "))
        let post = try exchange(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        #expect(post.hasPrefix("HTTP/1.1 405 ") && post.contains("Allow: GET\r\n"))
        #expect(try exchange(port, "nonsense\r\n\r\n").hasPrefix("HTTP/1.1 400 "))
        let huge = "GET /metrics HTTP/1.1\r\nX: " + String(repeating: "a", count: 10_000) + "\r\n\r\n"
        #expect(try exchange(port, huge).hasPrefix("HTTP/1.1 431 "))

        server.setStopping()
        let stopping = try exchange(port, "GET /healthz HTTP/1.1\r\n\r\n")
        #expect(stopping.hasPrefix("HTTP/1.1 503 "))
    }

    @Test("a large /metrics body arrives whole")
    func largeBody() throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "metrics-big")
        defer { group.shutdown() }
        let registry = MetricsRegistry()
        let family = registry.counter("series_total", help: "Many series.", labels: ["n"])
        for index in 0..<20_000 { family.labels("value-\(index)").increment(by: index) }
        let server = try MetricsHTTPServer(host: "127.0.0.1", port: 0, group: group, registry: registry)
        defer { server.close() }
        let response = try exchange(server.localPort, "GET /metrics HTTP/1.1\r\n\r\n")
        #expect(response.hasSuffix(registry.render()))
        #expect(response.contains("series_total{n=\"value-19999\"} 19999\n"))
    }

    /// Sends `request` on a blocking socket and reads until the server closes.
    private func exchange(_ port: Int, _ request: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the server may answer (431) and close before taking it all
            sent += n
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        return String(decoding: response, as: UTF8.self)
    }
}

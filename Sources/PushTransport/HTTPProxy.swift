import PushHTTP1
import PushPosix
import PushTLS

/// An HTTP proxy that opens tunnels with `CONNECT` (RFC 9110 §9.3.6), and the Basic credentials
/// it wants, if any. Its description never shows the credentials.
public struct HTTPProxy: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int
    /// The `Proxy-Authorization` value (`Basic …`), or nil.
    let authorization: String?

    /// From `http://[user:password@]host[:port]` (port 80 by default; a trailing `/` is fine).
    public init(url: String) throws(TransportError) {
        guard let parsed = HTTP1URL(url), parsed.scheme == "http", parsed.path.isEmpty || parsed.path == "/" else {
            throw TransportError(
                "proxy \(Self.redacted(url)): not http://[user:password@]host[:port] (an HTTPS proxy URL is not supported)"
            )
        }
        host = parsed.host
        port = parsed.port ?? 80
        authorization = parsed.userinfo.map { "Basic " + base64Encode(Array($0.utf8)) }
    }

    public var description: String { "http://\(authorization != nil ? "***@" : "")\(host):\(port)" }

    /// `url` with any `user:password@` replaced by `***@`, with or without a scheme before it.
    static func redacted(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@") else { return url }
        var start = url.startIndex
        if let scheme = url.firstRange(of: "://"), scheme.upperBound <= at { start = scheme.upperBound }
        return String(url[..<start]) + "***" + String(url[at...])
    }
}

/// Which proxy a client uses for which host: one given for everything, or the conventional
/// `HTTPS_PROXY` / `NO_PROXY` environment (as curl reads it).
public struct ProxyChoice: Sendable, Equatable {
    public var proxy: HTTPProxy?
    /// Hosts that bypass the proxy: exact names or domain suffixes (`example.com` and
    /// `.example.com` both cover `api.example.com`); `*` bypasses it for all.
    public var bypass: [String]

    public init(proxy: HTTPProxy? = nil, bypass: [String] = []) {
        self.proxy = proxy
        self.bypass = bypass
    }

    /// None.
    public static let direct = ProxyChoice()

    /// `HTTPS_PROXY` (or `https_proxy`) and `NO_PROXY` (or `no_proxy`) of `environment`.
    public static func fromEnvironment(_ environment: [String: String]) throws(TransportError) -> ProxyChoice {
        guard let url = environment["HTTPS_PROXY"] ?? environment["https_proxy"], !url.isEmpty else { return .direct }
        let bypass = (environment["NO_PROXY"] ?? environment["no_proxy"] ?? "")
            .split(separator: ",").map { $0.trimmingSpaces.lowercased() }.filter { !$0.isEmpty }
        do {
            return ProxyChoice(proxy: try HTTPProxy(url: url), bypass: bypass)
        } catch {
            throw TransportError("HTTPS_PROXY: \(error.description)")
        }
    }

    /// The proxy to reach `host` through, or nil for a direct connection.
    public func proxy(for host: String) -> HTTPProxy? {
        guard let proxy else { return nil }
        let name = host.lowercased()
        for entry in bypass {
            if entry == "*" { return nil }
            let domain = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            if name == domain || name.hasSuffix("." + domain) { return nil }
        }
        return proxy
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// Opens a tunnel through a proxy on a fresh connection: `CONNECT host:port`, the proxy's answer
/// read by ``HTTP1Parser``, then the connection is handed over (TLS to the provider starts on it).
final class ProxyTunnel: ConnectionHandler, HTTP1ParserDelegate {
    private let target: String
    private let proxy: HTTPProxy
    private var completion: ((Result<Connection, TransportError>) -> Void)?
    private let parser = HTTP1Parser(.response)
    private var status = 0
    private var connection: Connection?

    init(host: String, port: Int, proxy: HTTPProxy, completion: @escaping (Result<Connection, TransportError>) -> Void)
    {
        target = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        self.proxy = proxy
        self.completion = completion
        parser.delegate = self
        parser.nextHasNoBody = true
    }

    func start(_ connection: Connection) {
        self.connection = connection
        connection.handler = self
        var head: [UInt8] = []
        var headers = [("Host", target)]
        if let authorization = proxy.authorization { headers.append(("Proxy-Authorization", authorization)) }
        do {
            try HTTP1Writer.requestHead(
                method: "CONNECT", target: Array(target.utf8), headers: headers, contentLength: nil, into: &head)
        } catch {
            finish(.failure(TransportError("proxy \(proxy): \(error)")))
            return
        }
        connection.write(head)
    }

    private func finish(_ result: Result<Connection, TransportError>) {
        guard let completion else { return }
        self.completion = nil
        if case .failure = result { connection?.close(flushFirst: false) }
        completion(result)
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        do {
            try parser.receive(bytes)
        } catch {
            finish(
                .failure(TransportError("proxy \(proxy): its answer to CONNECT \(target) is not HTTP/1.1 (\(error))")))
        }
    }

    func connectionDidClose(_ connection: Connection, error: IOError?) {
        let why = error.map { ": \($0)" } ?? ""
        finish(
            .failure(TransportError("proxy \(proxy) closed the connection before answering CONNECT \(target)\(why)")))
    }

    func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {}

    func http1HeadersComplete(_ head: HTTP1Head) { status = head.status }

    func http1Body(_ bytes: UnsafeRawBufferPointer) {}

    func http1MessageComplete(keepAlive: Bool) {
        guard let connection else { return }
        guard (200..<300).contains(status) else {
            let hint = status == 407 ? " (it wants credentials: http://user:password@host:port)" : ""
            finish(.failure(TransportError("proxy \(proxy) refused CONNECT \(target): HTTP \(status)\(hint)")))
            return
        }
        finish(.success(connection))
    }
}

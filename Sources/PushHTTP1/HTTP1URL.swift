import CHTTPParser

/// The parts of an absolute URL, as libhttp-parser reads it.
public struct HTTP1URL: Sendable, Equatable {
    public var scheme: String
    public var userinfo: String?
    public var host: String
    public var port: Int?
    public var path: String

    /// nil when `text` is not an absolute URL with a host.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        var url = http_parser_url()
        http_parser_url_init(&url)
        let failed = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { http_parser_parse_url($0.baseAddress, $0.count, 0, &url) }
        }
        guard failed == 0 else { return nil }
        func field(_ name: http_parser_url_fields) -> String? {
            var offset: UInt32 = 0
            var length: UInt32 = 0
            guard pushgate_url_field(&url, Int32(name.rawValue), &offset, &length) != 0 else { return nil }
            return String(decoding: bytes[Int(offset)..<Int(offset + length)], as: UTF8.self)
        }
        guard let scheme = field(UF_SCHEMA), let host = field(UF_HOST), !host.isEmpty else { return nil }
        self.scheme = scheme.lowercased()
        self.host = host
        userinfo = field(UF_USERINFO)
        port = field(UF_PORT).flatMap { Int($0) }
        path = field(UF_PATH) ?? ""
    }
}

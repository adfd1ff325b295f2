import PushCore
import PushHTTP2

/// What the request headers of a new call say: path, timeout, metadata, and whether it is gRPC at all.
struct GRPCRequestHead {
    var path = ""
    /// nil: no `grpc-timeout`; .some(nil): present but invalid.
    var timeout: Duration??
    var metadata: [(name: String, value: String)] = []
    /// An HTTP status for requests that are not gRPC (wrong method or content type).
    var httpRejection: Int?

    init(headers: [HTTP2Header]) {
        var method = ""
        var contentType = ""
        for header in headers {
            let name = header.nameString
            switch name {
            case ":path": path = header.valueString
            case ":method": method = header.valueString
            case ":scheme", ":authority": continue
            case "content-type":
                contentType = header.valueString
                metadata.append((name, contentType))
            case "grpc-timeout":
                timeout = .some(GRPCTimeout.parse(header.valueString))
            default:
                metadata.append((name, header.valueString))
            }
        }
        if method != "POST" {
            httpRejection = 405
        } else if !contentType.hasPrefix("application/grpc") {
            // PROTOCOL-HTTP2.md: a content type that does not start with application/grpc gets 415.
            httpRejection = 415
        }
    }
}

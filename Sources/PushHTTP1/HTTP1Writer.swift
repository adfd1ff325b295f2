/// Writes HTTP/1.1 message heads into a byte buffer: writing, unlike reading, needs no library.
/// Callers pass header names and values they control; CR and LF in them are refused, so a value
/// taken from outside (a token in a path) cannot split the message.
public enum HTTP1Writer {
    /// `METHOD target HTTP/1.1`, the headers, then `Content-Length` (unless nil: a CONNECT) and
    /// the blank line.
    public static func requestHead(
        method: String, target: some Collection<UInt8>, headers: [(name: String, value: String)], contentLength: Int?,
        into buffer: inout [UInt8]
    ) throws(HTTP1Error) {
        try checked(target)
        buffer.append(contentsOf: method.utf8)
        buffer.append(0x20)
        buffer.append(contentsOf: target)
        buffer.append(contentsOf: " HTTP/1.1\r\n".utf8)
        try fields(headers, contentLength: contentLength, into: &buffer)
    }

    /// `HTTP/1.1 status reason`, the headers, then `Content-Length` (unless nil: a chunked body
    /// whose `Transfer-Encoding` is among the headers) and the blank line.
    public static func responseHead(
        status: Int, reason: String, headers: [(name: String, value: String)], contentLength: Int?,
        into buffer: inout [UInt8]
    ) throws(HTTP1Error) {
        buffer.append(contentsOf: "HTTP/1.1 \(status) \(reason)\r\n".utf8)
        try fields(headers, contentLength: contentLength, into: &buffer)
    }

    /// The standard reason phrase of a status line (clients ignore it), or a generic one.
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 304: "Not Modified"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 429: "Too Many Requests"
        case 499: "Client Closed Request"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default:
            status < 300 ? "Success" : status < 400 ? "Redirection" : status < 500 ? "Client Error" : "Server Error"
        }
    }

    private static func fields(
        _ headers: [(name: String, value: String)], contentLength: Int?, into buffer: inout [UInt8]
    ) throws(HTTP1Error) {
        for (name, value) in headers {
            try checked(name.utf8)
            try checked(value.utf8)
            buffer.append(contentsOf: name.utf8)
            buffer.append(contentsOf: ": ".utf8)
            buffer.append(contentsOf: value.utf8)
            buffer.append(contentsOf: "\r\n".utf8)
        }
        if let contentLength { buffer.append(contentsOf: "Content-Length: \(contentLength)\r\n".utf8) }
        buffer.append(contentsOf: "\r\n".utf8)
    }

    private static func checked(_ bytes: some Collection<UInt8>) throws(HTTP1Error) {
        if bytes.contains(where: { $0 == 0x0D || $0 == 0x0A }) {
            throw HTTP1Error(name: "header", description: "a header name or value, or the target, holds CR or LF")
        }
    }
}

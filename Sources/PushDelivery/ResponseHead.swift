import PushHTTP2

/// The fields of one response header block the engine reads, taken as nghttp2 decodes them: no
/// header array, no copy of names, one String for the id. Not generic, so the per-field work
/// needs no run-time metadata.
final class ResponseHead: HTTP2HeaderFieldSink {
    let idHeader: [UInt8]?
    var status = 0
    var id: String?
    var retryAfter: String?

    init(idHeader: [UInt8]?) {
        self.idHeader = idHeader
    }

    func reset() {
        status = 0
        id = nil
        retryAfter = nil
    }

    override func headerField(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {
        if name.equals(ResponseHeaderName.status) {
            var number = 0
            for byte in value {
                guard byte >= 0x30 && byte <= 0x39 else {
                    number = 0
                    break
                }
                number = number * 10 + Int(byte - 0x30)
            }
            status = number
        } else if let idHeader, name.equals(idHeader) {
            id = String(decoding: value, as: UTF8.self)
        } else if name.equals(ResponseHeaderName.retryAfter) {
            retryAfter = String(decoding: value, as: UTF8.self)
        }
    }
}

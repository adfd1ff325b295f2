import PushCore
import PushGzip

/// The message compression of one call (gRPC compression.md): what the client's messages are
/// compressed with (`grpc-encoding`) and whether it takes gzip in answers (`grpc-accept-encoding`).
///
/// Identity calls pay only for reading the two headers; everything else here runs for messages
/// with the compressed flag set, or for answers large enough to compress.
struct GRPCCompression: Equatable {
    /// The client's `grpc-encoding`.
    enum Encoding: Equatable {
        /// Absent or `identity`: no message may have the compressed flag set.
        case identity
        case gzip
        /// An encoding Pushgate does not implement; the call is refused at its headers.
        case unsupported(String)
    }

    /// What Pushgate's answers advertise in `grpc-accept-encoding` (identity is implied).
    static let acceptedEncodings = "gzip"

    /// Answers this large or larger are compressed for a client that accepts gzip. Below it the
    /// gzip header and trailer (18 bytes) and zlib's state (about 256 KiB set up per message)
    /// cost more than they save; most answers (a Send of a few tokens, an endpoint) are smaller.
    static let minCompressedResponseBytes = 1 << 10

    var encoding = Encoding.identity
    var acceptsGzip = false

    init(encoding: Encoding = .identity, acceptsGzip: Bool = false) {
        self.encoding = encoding
        self.acceptsGzip = acceptsGzip
    }

    /// The encoding named by a `grpc-encoding` value.
    static func encoding(named value: [UInt8]) -> Encoding {
        switch String(decoding: value, as: UTF8.self).lowercased() {
        case "", "identity": .identity
        case "gzip": .gzip
        case let other: .unsupported(other)
        }
    }

    /// Whether a `grpc-accept-encoding` value (a comma-separated list) names gzip. By bytes and
    /// without allocating: grpcio sends the header on every call.
    static func acceptsGzip(_ value: [UInt8]) -> Bool {
        var start = 0
        for end in 0...value.count where end == value.count || value[end] == UInt8(ascii: ",") {
            var token = value[start..<end]
            start = end + 1
            while let first = token.first, first == 0x20 || first == 0x09 { token = token.dropFirst() }
            while let last = token.last, last == 0x20 || last == 0x09 { token = token.dropLast() }
            if token.count == 4, zip(token, "gzip".utf8).allSatisfy({ $0 | 0x20 == $1 }) { return true }
        }
        return false
    }

    /// UNIMPLEMENTED for a call whose `grpc-encoding` is not implemented; nil if it is.
    var refusal: GRPCStatus? {
        guard case .unsupported(let name) = encoding else { return nil }
        let shown = name.count > 64 ? String(name.prefix(64)) + "…" : name
        return GRPCStatus(
            .unimplemented,
            "grpc-encoding \"\(shown)\" is not supported; supported: \(Self.acceptedEncodings), identity")
    }

    /// The bytes of a message that came with the compressed flag set, inflated.
    ///
    /// The inflated bytes are reserved in `budget` as they are made (before each growth of the
    /// output), so a small message cannot hold more memory than the budget allows; on success the
    /// wire bytes' reservation (`reserved`) is given back and `reserved` becomes the inflated
    /// bytes'. On failure nothing of the inflation stays reserved, and `reserved` is unchanged.
    ///
    /// - Parameters:
    ///   - maxSize: the call's message limit, which applies to the inflated message.
    ///   - budgetRefused: called when the budget had no room (for the protection event).
    /// - Throws: INTERNAL without `grpc-encoding: gzip` (compression.md, test case 6) or for data
    ///   that is not gzip; RESOURCE_EXHAUSTED past `maxSize` or the budget.
    func inflate(
        _ message: [UInt8], maxSize: Int, budget: GRPCRequestBudget, reserved: inout Int,
        budgetRefused: () -> Void = {}
    ) throws(GRPCStatus) -> [UInt8] {
        guard encoding == .gzip else {
            throw GRPCStatus(
                .internalError,
                "a message has the compressed flag set, but the call's grpc-encoding is identity or absent")
        }
        var grown = 0
        var full: GRPCRequestBudget?
        do {
            let inflated = try Gzip.decompress(message, maxSize: maxSize) { bytes in
                full = budget.refusal(reserving: bytes)
                if full == nil { grown += bytes }
                return full == nil
            }
            budget.release(reserved)
            reserved = grown
            return inflated
        } catch {
            budget.release(grown)
            switch error {
            case .tooLarge:
                throw GRPCStatus(
                    .resourceExhausted,
                    "the gzip message inflates past the limit of \(maxSize) bytes (stopped there)")
            case .refused:
                budgetRefused()
                let owner = full.map { " of \($0.owner) (\($0.limit) bytes)" } ?? ""
                throw GRPCStatus(
                    .resourceExhausted,
                    "the inflated gzip message does not fit in the request budget\(owner) "
                        + "(send smaller or fewer messages at once)")
            case .outOfMemory:
                throw GRPCStatus(.resourceExhausted, "no memory to inflate the gzip message")
            case .truncated, .corrupt:
                throw GRPCStatus(.internalError, "the gzip message could not be inflated: \(error)")
            }
        }
    }

    /// zlib's fastest level for answers: on a `Send` answer of 1,000 results (113 KB) it took half
    /// the time of the default level (6) for a size within 0.3% of it.
    static let responseLevel: Int32 = 1

    /// An answer gzipped at ``responseLevel``; nil if zlib fails.
    static func gzip(_ message: [UInt8]) -> [UInt8]? {
        Gzip.compress(message, level: responseLevel)
    }

    /// `message` framed for a client: gzip-compressed (flag set) when it accepts gzip, the message
    /// is large enough, and compressing makes it smaller; otherwise as it is.
    func frame(_ message: [UInt8]) -> [UInt8] {
        if acceptsGzip, message.count >= Self.minCompressedResponseBytes,
            let gzipped = Self.gzip(message), gzipped.count < message.count
        {
            return GRPCMessageFramer.frame(gzipped, compressed: true)
        }
        return GRPCMessageFramer.frame(message)
    }

    /// `message` (room for a prefix, then the message: `serializedBytes(reservingPrefix:)`) framed
    /// for a client as ``frame(_:)`` frames: gzip-compressed when that applies, otherwise with
    /// its prefix written in place (no copy).
    func frame(prefixed message: consuming [UInt8]) -> [UInt8] {
        if acceptsGzip, message.count - GRPCMessageFramer.prefixSize >= Self.minCompressedResponseBytes {
            // Rare (large answers to gzip clients): the compressor's own copy dwarfs this one.
            let body = Array(message[GRPCMessageFramer.prefixSize...])
            if let gzipped = Self.gzip(body), gzipped.count < body.count {
                return GRPCMessageFramer.frame(gzipped, compressed: true)
            }
        }
        return GRPCMessageFramer.frame(prefixed: message)
    }
}

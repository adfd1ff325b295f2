import PushCore

/// A Connect request body made into the binary request message the handlers take, without I/O.
enum ConnectRequestBody {
    /// Checks the size, takes the one envelope of a streaming request, inflates gzip (bounded by
    /// `maxMessageSize` and `budget`, as gRPC's messages are) and turns JSON into binary protobuf.
    ///
    /// - Throws: RESOURCE_EXHAUSTED over the limit (after inflation too); INVALID_ARGUMENT for a
    ///   body that is not one message, or JSON that is not the request (naming the field);
    ///   INTERNAL for gzip that does not inflate or a compressed flag without an encoding;
    ///   UNIMPLEMENTED for JSON on a method served in binary only.
    static func decode(
        _ body: [UInt8], bodyLength: Int, head: ConnectRequestHead, maxMessageSize: Int, json: GRPCJSONTranscoding?,
        budget: GRPCRequestBudget, reserved: inout Int
    ) throws(GRPCStatus) -> [UInt8] {
        let message = try unwrap(
            body, bodyLength: bodyLength, head: head, maxMessageSize: maxMessageSize, budget: budget,
            reserved: &reserved)
        return try transcode(message, head: head, json: json)
    }

    /// The body's one message, out of its envelope and inflated: everything ``decode`` does but JSON.
    static func unwrap(
        _ body: [UInt8], bodyLength: Int, head: ConnectRequestHead, maxMessageSize: Int,
        budget: GRPCRequestBudget, reserved: inout Int
    ) throws(GRPCStatus) -> [UInt8] {
        let envelopeBytes = head.shape == .streaming ? GRPCMessageFramer.prefixSize : 0
        guard bodyLength <= maxMessageSize + envelopeBytes, body.count == bodyLength else {
            throw GRPCStatus(
                .resourceExhausted,
                "the request body of \(bodyLength) bytes is over the limit of \(maxMessageSize) bytes")
        }
        var message = body
        var compressed = head.compression.encoding == .gzip && !body.isEmpty
        if head.shape == .streaming {
            var deframer = GRPCMessageDeframer(maxMessageSize: maxMessageSize)
            body.withUnsafeBytes { deframer.append($0) }
            guard let first = try deframer.next(), deframer.bufferedByteCount == 0 else {
                throw GRPCStatus(
                    .invalidArgument,
                    "the request body is not one enveloped message (this method takes one request message)")
            }
            message = first.bytes
            compressed = first.compressed
        }
        if compressed {
            var compression = head.compression
            if compression.encoding != .gzip {
                throw GRPCStatus(
                    .internalError, "a message has the compressed flag set, but connect-content-encoding is identity")
            }
            compression.encoding = .gzip
            message = try compression.inflate(message, maxSize: maxMessageSize, budget: budget, reserved: &reserved)
        }
        return message
    }

    /// A JSON message turned into binary protobuf; a binary one as it is.
    static func transcode(
        _ message: [UInt8], head: ConnectRequestHead, json: GRPCJSONTranscoding?
    ) throws(GRPCStatus) -> [UInt8] {
        guard head.codec == .json else { return message }
        guard let json else {
            throw GRPCStatus(.unimplemented, "\(head.path) is served as application/proto only")
        }
        return try json.request(message)
    }
}

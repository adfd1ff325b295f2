public import PushCore

/// The shape of a gRPC method: how many messages each side sends.
public enum GRPCMethodKind: Sendable {
    case unary
    case serverStreaming
    case clientStreaming
    case bidirectionalStreaming
}

/// Runs one call: reads request messages from `requests`, writes responses with `responses`, and
/// returns to end the call with OK or throws to end it with that status.
///
/// A thrown ``GRPCStatus`` is sent as is; any other error becomes INTERNAL with its description.
/// The task running the handler is cancelled when the client cancels, the deadline passes or the
/// connection closes.
public typealias GRPCHandler =
    @Sendable (_ requests: GRPCRequestStream, _ responses: GRPCResponseWriter, _ context: GRPCCallContext)
    async throws -> Void

/// Answers one unary call without a task of its own: called on the call's event loop once the
/// request message is complete; it answers through `responder`, now or later, from any thread.
public typealias GRPCImmediateUnaryHandler =
    @Sendable (_ request: [UInt8], _ context: GRPCCallContext, _ responder: GRPCUnaryResponder) -> Void

/// Answers one request message of an ordered stream (``GRPCMethod/orderedStream(_:window:_:)``)
/// without a task: called on the call's event loop for each message in turn, once a slot of the
/// stream's window is free; it answers that message through `responder`, now or later, from any
/// thread.
public typealias GRPCOrderedStreamHandler =
    @Sendable (_ request: [UInt8], _ context: GRPCCallContext, _ responder: GRPCUnaryResponder) -> Void

/// Decides from a call's headers alone, before any of its request is read, whether the call may
/// run: it throws the status to answer (UNAUTHENTICATED, PERMISSION_DENIED) or returns what the
/// handler then finds in ``GRPCCallContext/admission`` (such as the resolved caller). A call
/// refused here is answered at once and none of its request bytes are kept.
///
/// What it returns is an object: one reference to store and to cast back with a class check (a
/// value in an `any Sendable` was boxed, assigned through value witnesses and cast back with
/// `swift_dynamicCast` on every call).
public typealias GRPCAdmission =
    @Sendable (_ context: GRPCCallContext) throws(GRPCStatus) -> (any Sendable & AnyObject)?

/// One method of a service: its name, kind and handler.
public struct GRPCMethod: Sendable {
    /// How a call of the method runs.
    enum Body: Sendable {
        /// In a task of its own, which reads the requests and writes the responses.
        case task(GRPCHandler)
        /// Unary, on the call's loop, answering through a responder (``immediateUnary(_:_:)``).
        case immediate(GRPCImmediateUnaryHandler)
        /// Bidirectional, each request message answered on the call's loop (``orderedStream(_:window:_:)``).
        case ordered(window: Int, GRPCOrderedStreamHandler)
    }

    public let name: String
    public let kind: GRPCMethodKind
    let body: Body
    /// Checked at HEADERS time (see ``GRPCAdmission``); nil: every call may run.
    public private(set) var admission: GRPCAdmission?
    /// A request-message limit below the server's `maxMessageSize`, for methods that take small
    /// requests (and, being keyless, should let nobody make the server buffer much); nil: the
    /// server's limit.
    public private(set) var maxRequestMessageSize: Int?

    /// How its messages read and write as proto3 JSON (Connect's JSON codec); nil: binary only.
    public private(set) var json: GRPCJSONTranscoding?

    /// This method with its messages also served as JSON.
    public func transcodingJSON(_ json: GRPCJSONTranscoding) -> GRPCMethod {
        var method = self
        method.json = json
        return method
    }

    /// This method with `admission` checked before each call's request is read.
    public func admitting(_ admission: @escaping GRPCAdmission) -> GRPCMethod {
        var method = self
        method.admission = admission
        return method
    }

    /// This method with request messages limited to `bytes`.
    public func limitingRequestMessages(to bytes: Int) -> GRPCMethod {
        var method = self
        method.maxRequestMessageSize = bytes
        return method
    }

    public init(name: String, kind: GRPCMethodKind, handler: @escaping GRPCHandler) {
        self.name = name
        self.kind = kind
        self.body = .task(handler)
    }

    /// A unary method whose handler answers through a ``GRPCUnaryResponder`` instead of
    /// returning. The busiest method (Push/Send) is one: a call then costs no Swift task, no
    /// request queue and no hops between task and loop, which on a small machine is a good part
    /// of a one-token Send's work and of the tail of its latency.
    public static func immediateUnary(_ name: String, _ body: @escaping GRPCImmediateUnaryHandler) -> GRPCMethod {
        GRPCMethod(name: name, kind: .unary, body: .immediate(body))
    }

    /// A bidirectional method whose every request message gets exactly one answer, sent in
    /// request order: the handler runs on the call's loop for each message (no task, no queue
    /// between loop and task), at most `window` unanswered at once. Further messages wait, and
    /// hold back the client's flow-control window, until the oldest is answered out; a client
    /// with more than ``GRPCResponseWriter/maxQueuedBytes`` of answers unread gets no more run
    /// until it reads. A failed answer ends the call with its status after the answers before it,
    /// cancelling the rest (through their responders' ``GRPCUnaryResponder/onCancel(_:)``).
    public static func orderedStream(
        _ name: String, window: Int, _ body: @escaping GRPCOrderedStreamHandler
    ) -> GRPCMethod {
        GRPCMethod(name: name, kind: .bidirectionalStreaming, body: .ordered(window: window, body))
    }

    private init(name: String, kind: GRPCMethodKind, body: Body) {
        self.name = name
        self.kind = kind
        self.body = body
    }

    /// A unary method: exactly one request message, one response message.
    public static func unary(
        _ name: String, _ body: @escaping @Sendable ([UInt8], GRPCCallContext) async throws -> [UInt8]
    ) -> GRPCMethod {
        GRPCMethod(name: name, kind: .unary) { requests, responses, context in
            let request = try await requests.single()
            let response = try await body(request, context)
            await responses.send(response)
        }
    }

    /// A server-streaming method: one request message, any number of responses.
    public static func serverStreaming(
        _ name: String,
        _ body: @escaping @Sendable ([UInt8], GRPCResponseWriter, GRPCCallContext) async throws -> Void
    ) -> GRPCMethod {
        GRPCMethod(name: name, kind: .serverStreaming) { requests, responses, context in
            let request = try await requests.single()
            try await body(request, responses, context)
        }
    }

    /// A bidirectional-streaming method.
    public static func bidirectionalStreaming(_ name: String, _ body: @escaping GRPCHandler) -> GRPCMethod {
        GRPCMethod(name: name, kind: .bidirectionalStreaming, handler: body)
    }
}

/// The proto3 JSON form of a method's messages, for Connect's JSON codec: the handlers take and
/// give binary protobuf, so a JSON request is decoded and encoded as binary on the way in, and
/// the answer the other way on the way out.
public struct GRPCJSONTranscoding: Sendable {
    /// A JSON request as binary protobuf; INVALID_ARGUMENT naming the field when it is not valid.
    public let request: @Sendable ([UInt8]) throws(GRPCStatus) -> [UInt8]
    /// A binary response message as JSON; INTERNAL if it does not decode (a handler's bug).
    public let response: @Sendable ([UInt8]) throws(GRPCStatus) -> [UInt8]

    public init(
        request: @escaping @Sendable ([UInt8]) throws(GRPCStatus) -> [UInt8],
        response: @escaping @Sendable ([UInt8]) throws(GRPCStatus) -> [UInt8]
    ) {
        self.request = request
        self.response = response
    }
}

/// A gRPC service: a fully qualified name (`package.Service`) and its methods.
public struct GRPCService: Sendable {
    public let name: String
    public let methods: [String: GRPCMethod]

    public init(name: String, methods: [GRPCMethod]) {
        self.name = name
        self.methods = Dictionary(methods.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }
}

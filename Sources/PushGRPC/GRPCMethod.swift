import PushCore

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

/// One method of a service: its name, kind and handler.
public struct GRPCMethod: Sendable {
    public let name: String
    public let kind: GRPCMethodKind
    public let handler: GRPCHandler

    public init(name: String, kind: GRPCMethodKind, handler: @escaping GRPCHandler) {
        self.name = name
        self.kind = kind
        self.handler = handler
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

/// A gRPC service: a fully qualified name (`package.Service`) and its methods.
public struct GRPCService: Sendable {
    public let name: String
    public let methods: [String: GRPCMethod]

    public init(name: String, methods: [GRPCMethod]) {
        self.name = name
        self.methods = Dictionary(methods.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }
}

import PushCore
import PushGRPC
import PushProto

/// Typed gRPC methods over ``ProtoMessage``s, named apart from PushGRPC's byte-level constructors
/// they wrap: `proto…` decode the request (a decoding failure answers INVALID_ARGUMENT naming the
/// message type), `authorized…` also resolve the caller from its API key first. Each is also
/// served as proto3 JSON to Connect clients (``GRPCJSONTranscoding/proto(_:_:)``).
extension GRPCMethod {
    static func protoUnary<Request: ProtoJSONMessage, Response: ProtoJSONMessage>(
        _ name: String, _ request: Request.Type,
        _ body: @escaping @Sendable (Request, GRPCCallContext) async throws -> Response
    ) -> GRPCMethod {
        GRPCMethod.unary(name) { bytes, context in
            try await body(try decode(Request.self, bytes), context).serializedBytes()
        }
        .transcodingJSON(.proto(Request.self, Response.self))
    }

    static func protoServerStreaming<Request: ProtoJSONMessage, Response: ProtoJSONMessage>(
        _ name: String, _ request: Request.Type, _ response: Response.Type,
        _ body: @escaping @Sendable (Request, ProtoResponseWriter<Response>, GRPCCallContext) async throws -> Void
    ) -> GRPCMethod {
        GRPCMethod.serverStreaming(name) { bytes, writer, context in
            try await body(try decode(Request.self, bytes), ProtoResponseWriter(writer: writer), context)
        }
        .transcodingJSON(.proto(Request.self, Response.self))
    }

    /// A unary method behind the API keys: the ``Caller`` is resolved from the call's headers,
    /// before any of its request is read (UNAUTHENTICATED first), and `.admin` methods need an
    /// admin key (PERMISSION_DENIED).
    static func authorizedUnary<Request: ProtoJSONMessage, Response: ProtoJSONMessage>(
        _ name: String, _ request: Request.Type, _ authorizer: Authorizer, _ access: Access,
        _ body: @escaping @Sendable (Request, Caller, GRPCCallContext) async throws -> Response
    ) -> GRPCMethod {
        GRPCMethod.unary(name) { bytes, context in
            try await body(try decode(Request.self, bytes), try Caller.admitted(context), context).serializedBytes()
        }
        .admitting(authorizer.admission(access, method: name))
        .transcodingJSON(.proto(Request.self, Response.self))
    }

    /// An immediate unary method (``GRPCMethod/immediateUnary(_:_:)``: no task per call) behind the
    /// API keys, checked as ``authorizedUnary(_:_:_:_:_:)`` checks. `body` runs on the call's loop and
    /// answers through its responder, now or later; what it throws is the call's status.
    static func authorizedImmediateUnary<Request: ProtoJSONMessage, Response: ProtoJSONMessage>(
        _ name: String, _ request: Request.Type, _ response: Response.Type, _ authorizer: Authorizer, _ access: Access,
        _ body:
            @escaping @Sendable (Request, Caller, GRPCCallContext, ProtoUnaryResponder<Response>) throws(GRPCStatus) ->
            Void
    ) -> GRPCMethod {
        authorizedImmediateUnary(name, request, response, authorizer, access) {
            (bytes: [UInt8], caller, context, responder) throws(GRPCStatus) in
            try body(try decode(Request.self, bytes), caller, context, responder)
        }
    }

    /// The same with the request's bytes as they came, for a method that reads them itself (Send:
    /// ``SendRequestMessage``); `Request` is still its JSON mapping for Connect clients.
    static func authorizedImmediateUnary<Request: ProtoJSONMessage, Response: ProtoJSONMessage>(
        _ name: String, _ request: Request.Type, _ response: Response.Type, _ authorizer: Authorizer, _ access: Access,
        _ body:
            @escaping @Sendable ([UInt8], Caller, GRPCCallContext, ProtoUnaryResponder<Response>) throws(GRPCStatus) ->
            Void
    ) -> GRPCMethod {
        GRPCMethod.immediateUnary(name) { bytes, context, responder in
            do throws(GRPCStatus) {
                let caller = try Caller.admitted(context)
                try body(bytes, caller, context, ProtoUnaryResponder(responder: responder))
            } catch {
                responder.fail(error)
            }
        }
        .admitting(authorizer.admission(access, method: name))
        .transcodingJSON(.proto(Request.self, Response.self))
    }

    /// A method whose capability arrives later: UNIMPLEMENTED with a message that says when.
    static func notYetAvailable(_ name: String, _ message: String) -> GRPCMethod {
        GRPCMethod(name: name, kind: .unary) { _, _, _ in
            throw GRPCStatus(.unimplemented, message)
        }
    }
}

func decode<Request: ProtoMessage>(_ type: Request.Type, _ bytes: [UInt8]) throws(GRPCStatus) -> Request {
    do {
        return try Request(serializedBytes: bytes)
    } catch {
        throw GRPCStatus(.invalidArgument, error.description)
    }
}

extension GRPCJSONTranscoding {
    /// The proto3 JSON mapping of `Request` and `Response` (PushProto's generated one): a JSON
    /// request that does not read is INVALID_ARGUMENT naming the field (`notifications[0].tokens[1]: …`).
    static func proto<Request: ProtoJSONMessage, Response: ProtoJSONMessage>(
        _ request: Request.Type, _ response: Response.Type
    ) -> GRPCJSONTranscoding {
        GRPCJSONTranscoding(
            request: { bytes throws(GRPCStatus) in
                do throws(ProtoJSONError) {
                    return try Request(jsonBytes: bytes).serializedBytes()
                } catch {
                    throw GRPCStatus(.invalidArgument, error.description)
                }
            },
            response: { bytes throws(GRPCStatus) in try decode(Response.self, bytes).jsonBytes() })
    }
}

/// Sends typed response messages of one call.
struct ProtoResponseWriter<Response: ProtoMessage>: Sendable {
    let writer: GRPCResponseWriter

    func send(_ response: Response) async {
        await writer.send(response.serializedBytes())
    }
}

/// Answers one call of a typed immediate unary method: usable from any thread, first answer counts.
struct ProtoUnaryResponder<Response: ProtoMessage>: Sendable {
    let responder: GRPCUnaryResponder

    func respond(_ response: Response) {
        responder.respond(prefixed: response.serializedBytes(reservingPrefix: GRPCMessageFramer.prefixSize))
    }

    func fail(_ status: GRPCStatus) {
        responder.fail(status)
    }

    /// `action` runs if the call ends before it is answered (see ``GRPCUnaryResponder/onCancel(_:)``).
    func onCancel(_ action: @escaping @Sendable () -> Void) {
        responder.onCancel(action)
    }
}

/// Who may call a method: any authenticated caller, or admin keys only.
enum Access: Sendable {
    case anyCaller
    case admin
}

extension Authorizer {
    /// The caller of a call of `method`, resolved from its headers (UNAUTHENTICATED first);
    /// `.admin` methods need an admin key (PERMISSION_DENIED).
    func caller(_ context: GRPCCallContext, access: Access, method: String) throws(GRPCStatus) -> Caller {
        let caller = try caller(context)
        if access == .admin { try caller.requireAdmin(method) }
        return caller
    }

    /// The admission of `method`'s calls: the resolved ``Caller``, checked at HEADERS time so that
    /// a client without a valid key has nothing of its request kept (see ``GRPCAdmission``).
    func admission(_ access: Access, method: String) -> GRPCAdmission {
        { [self] context throws(GRPCStatus) in try caller(context, access: access, method: method) }
    }
}

extension Caller {
    /// The caller a method's admission resolved for this call.
    static func admitted(_ context: GRPCCallContext) throws(GRPCStatus) -> Caller {
        guard let caller = context.admission as? Caller else {
            // Every keyed method is registered with its admission; reaching here is a wiring bug.
            throw GRPCStatus(.internalError, "the call reached its handler without being authorized")
        }
        return caller
    }
}

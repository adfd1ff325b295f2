import PushCore
import PushGRPC
import PushProto

/// `grpc.reflection.v1.ServerReflection` and `grpc.reflection.v1alpha.ServerReflection`: the API's
/// own description, for grpcurl, grpcui, Postman and the like (config `reflection`, on by default).
enum ReflectionService {
    static let names = ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"]

    /// Reflection requests are a name or two; held small like Health's, though the calls are keyed.
    static let maxRequestBytes = 4096

    /// Both versions, answering for `served` (the other services' names; the two reflection
    /// services are added, as the reference servers list themselves).
    ///
    /// Behind the API keys like Push: the API's shape is no secret (the .proto files are public), but
    /// a server that answers only its callers says nothing to anyone else.
    static func make(served: [String], authorizer: Authorizer) -> [GRPCService] {
        let reflection = ServerReflection(index: DescriptorIndex(), services: served + names)
        return names.map { name in
            GRPCService(name: name, methods: [serverReflectionInfo(reflection, authorizer)])
        }
    }

    private static func serverReflectionInfo(_ reflection: ServerReflection, _ authorizer: Authorizer) -> GRPCMethod {
        let method = "ServerReflectionInfo"
        return GRPCMethod.bidirectionalStreaming(method) { requests, responses, context in
            _ = try Caller.admitted(context)
            var generation = authorizer.generation
            for await bytes in requests {
                if authorizer.generation != generation {
                    // Keys reloaded (SIGHUP): a stream opened with a key since removed ends here.
                    generation = authorizer.generation
                    _ = try authorizer.caller(context, access: .anyCaller, method: method)
                }
                let request = try decode(ServerReflection.Request.self, bytes)
                await responses.send(reflection.answer(request).serializedBytes())
            }
        }
        .admitting(authorizer.admission(.anyCaller, method: method))
        .limitingRequestMessages(to: maxRequestBytes)
    }
}

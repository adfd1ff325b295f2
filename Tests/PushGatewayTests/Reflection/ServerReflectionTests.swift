import PushCore
import PushProto
import Testing

@testable import PushGateway

@Suite("Server reflection")
struct ServerReflectionTests {
    typealias Request = ServerReflection.Request

    /// A file made up for the index alone (its bytes are only compared).
    static func file(
        _ name: String, imports: [String] = [], messages: [String] = [],
        extensions: [ProtoFileDescriptor.Extension] = []
    ) -> ProtoFileDescriptor {
        ProtoFileDescriptor(
            name: name, dependencies: imports, services: [], messages: messages, extensions: extensions,
            symbols: messages + extensions.map { "\($0.extendee).ext\($0.number)" }, serialized: Array(name.utf8))
    }

    static func request(_ question: Request.MessageRequest?, host: String = "") -> Request {
        var request = Request()
        request.host = host
        request.messageRequest = question
        return request
    }

    let reflection = ServerReflection(
        index: DescriptorIndex(), services: ["pushgate.v1.Push", "grpc.health.v1.Health", "pushgate.v1.Registry"])

    @Test("the generated set: every import is in it, and every served service and method is found")
    func generatedSet() throws {
        let index = DescriptorIndex()
        let names = Set(ProtoFileDescriptor.all.map(\.name))
        for file in ProtoFileDescriptor.all {
            for dependency in file.dependencies { #expect(names.contains(dependency), "\(file.name) imports it") }
        }
        #expect(
            Set(index.services)
                == [
                    "grpc.health.v1.Health", "pushgate.v1.Push", "pushgate.v1.Registry", "pushgate.v1.Channels",
                    "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection",
                ])
        #expect(index.file(containingSymbol: "pushgate.v1.Push")?.name == "pushgate/v1/push.proto")
        #expect(index.file(containingSymbol: "pushgate.v1.Push.SendStream")?.name == "pushgate/v1/push.proto")
        #expect(index.file(containingSymbol: ".pushgate.v1.SendRequest")?.name == "pushgate/v1/push.proto")
        #expect(index.file(containingSymbol: "pushgate.v1.Registry")?.name == "pushgate/v1/registry.proto")
        // An enum value is a sibling of its enum (protobuf scoping), not its child.
        #expect(
            index.file(containingSymbol: "grpc.health.v1.HealthCheckResponse.SERVING")?.name
                == "grpc/health/v1/health.proto")
        #expect(index.file(containingSymbol: "grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING") == nil)
        #expect(index.file(containingSymbol: "pushgate.v1") == nil)
        #expect(index.file(containingSymbol: "") == nil)
        #expect(try #require(index.file(named: "pushgate/v1/push.proto")).serialized.count > 100)
    }

    @Test("a file comes with its imports, transitively, each once, itself first; a missing import is left out")
    func importClosure() {
        let files = [
            Self.file("c.proto"), Self.file("b.proto", imports: ["c.proto"]),
            Self.file("a.proto", imports: ["b.proto", "c.proto", "missing.proto"]),
        ]
        let index = DescriptorIndex(files)
        #expect(index.withImports(files[2]).map(\.name) == ["a.proto", "b.proto", "c.proto"])
        #expect(index.withImports(files[0]).map(\.name) == ["c.proto"])
    }

    @Test("extensions: the declaring file, and the numbers of a known type (none is an empty list)")
    func extensions() {
        let index = DescriptorIndex([
            Self.file("base.proto", messages: ["p.Base", "p.Plain"]),
            Self.file("more.proto", imports: ["base.proto"], extensions: [.init(extendee: "p.Base", number: 100)]),
        ])
        #expect(index.file(containingExtension: 100, of: "p.Base")?.name == "more.proto")
        #expect(index.file(containingExtension: 101, of: "p.Base") == nil)
        #expect(index.extensionNumbers(of: "p.Base") == [100])
        #expect(index.extensionNumbers(of: "p.Plain") == [])
        #expect(index.extensionNumbers(of: "p.Unknown") == nil)
    }

    @Test("list_services: the services sorted; the host and the request are echoed")
    func listServices() {
        let response = reflection.answer(Self.request(.listServices("*"), host: "localhost"))
        #expect(response.validHost == "localhost")
        #expect(response.originalRequest == Self.request(.listServices("*"), host: "localhost"))
        guard case .listServicesResponse(let list)? = response.messageResponse else {
            Issue.record("not a list: \(response)")
            return
        }
        #expect(list.service.map(\.name) == ["grpc.health.v1.Health", "pushgate.v1.Push", "pushgate.v1.Registry"])
    }

    @Test("file_containing_symbol and file_by_filename: the file's FileDescriptorProto first, then its imports")
    func files() {
        let push = DescriptorIndex().file(named: "pushgate/v1/push.proto")!
        for question in [
            Request.MessageRequest.fileContainingSymbol("pushgate.v1.Push.Send"), .fileByFilename(push.name),
        ] {
            guard case .fileDescriptorResponse(let files)? = reflection.answer(Self.request(question)).messageResponse
            else {
                Issue.record("no files for \(question)")
                continue
            }
            #expect(files.fileDescriptorProto.first == push.serialized)
            #expect(files.fileDescriptorProto.count == DescriptorIndex().withImports(push).count)
        }
    }

    @Test(
        "what is not known is a NOT_FOUND error_response naming the field; no question is INVALID_ARGUMENT",
        arguments: [
            (
                Request.MessageRequest.fileContainingSymbol("pushgate.v1.Nope"), 5,
                "file_containing_symbol: unknown symbol"
            ),
            (.fileByFilename("nope.proto"), 5, "file_by_filename: unknown file"),
            (.fileContainingExtension(extensionRequest("pushgate.v1.SendRequest", 7)), 5, "file_containing_extension:"),
            (.allExtensionNumbersOfType("pushgate.v1.Nope"), 5, "all_extension_numbers_of_type: unknown message type"),
            (nil, 3, "message_request: not set"),
        ])
    func errors(question: Request.MessageRequest?, code: Int32, message: String) {
        let response = reflection.answer(Self.request(question))
        guard case .errorResponse(let error)? = response.messageResponse else {
            Issue.record("not an error: \(response)")
            return
        }
        #expect(error.errorCode == code)
        #expect(error.errorMessage.hasPrefix(message), "\(error.errorMessage)")
    }

    @Test("the answer survives the wire, and a v1alpha request decodes as the v1 one it is on the wire")
    func wire() throws {
        var alpha = GRPCReflectionV1alpha.ServerReflectionRequest()
        alpha.host = "h"
        alpha.messageRequest = .listServices("")
        let request = try Request(serializedBytes: alpha.serializedBytes())
        #expect(request == Self.request(.listServices(""), host: "h"), "an empty list_services keeps its case")
        // A message member with nothing set is still the member that is set.
        let empty = Self.request(.fileContainingExtension(GRPCReflectionV1.ExtensionRequest()))
        #expect(empty.serializedBytes() == [0x2a, 0x00])
        #expect(try Request(serializedBytes: [0x2a, 0x00]) == empty)
        // Two members on the wire: the last one wins, as protobuf says for a oneof.
        #expect(
            try Request(serializedBytes: [0x3a, 0x00, 0x1a, 0x01, 0x78]) == Self.request(.fileByFilename("x")))
        let response = reflection.answer(Self.request(.fileContainingSymbol("grpc.health.v1.Health")))
        #expect(try ServerReflection.Response(serializedBytes: response.serializedBytes()) == response)
    }

    @Test("config: reflection is read")
    func configuration() throws {
        #expect(try !GatewayConfiguration.parse(json: Array(#"{"reflection": false}"#.utf8)).reflection)
    }
}

func extensionRequest(_ type: String, _ number: Int32) -> GRPCReflectionV1.ExtensionRequest {
    var request = GRPCReflectionV1.ExtensionRequest()
    request.containingType = type
    request.extensionNumber = number
    return request
}

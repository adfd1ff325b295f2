import PushCore
import PushProto

/// The answers of gRPC server reflection, without I/O: one ``ServerReflectionResponse`` per request.
///
/// The types are grpc.reflection.v1's; v1alpha's messages are the same on the wire (same fields and
/// numbers, only the package differs), so its requests are decoded and answered with these too.
struct ServerReflection: Sendable {
    typealias Request = GRPCReflectionV1.ServerReflectionRequest
    typealias Response = GRPCReflectionV1.ServerReflectionResponse

    let index: DescriptorIndex
    /// What `list_services` answers, sorted.
    let services: [String]

    /// - Parameter services: the names of the services this server serves (reflection included,
    ///   as the reference servers list it).
    init(index: DescriptorIndex, services: [String]) {
        self.index = index
        self.services = services.sorted()
    }

    func answer(_ request: Request) -> Response {
        var response = Response()
        response.validHost = request.host
        response.originalRequest = request
        response.messageResponse = messageResponse(request.messageRequest)
        return response
    }

    private func messageResponse(_ question: Request.MessageRequest?) -> Response.MessageResponse {
        switch question {
        case .listServices?:
            var list = GRPCReflectionV1.ListServiceResponse()
            list.service = services.map { name in
                var service = GRPCReflectionV1.ServiceResponse()
                service.name = name
                return service
            }
            return .listServicesResponse(list)
        case .fileByFilename(let name)?:
            guard let file = index.file(named: name) else {
                return Self.error(.notFound, "file_by_filename: unknown file \(TextCap.quoted(name))")
            }
            return files(file)
        case .fileContainingSymbol(let symbol)?:
            guard let file = index.file(containingSymbol: symbol) else {
                return Self.error(.notFound, "file_containing_symbol: unknown symbol \(TextCap.quoted(symbol))")
            }
            return files(file)
        case .fileContainingExtension(let request)?:
            guard let file = index.file(containingExtension: request.extensionNumber, of: request.containingType)
            else {
                return Self.error(
                    .notFound,
                    "file_containing_extension: no extension \(request.extensionNumber) of "
                        + "\(TextCap.quoted(request.containingType))")
            }
            return files(file)
        case .allExtensionNumbersOfType(let type)?:
            guard let numbers = index.extensionNumbers(of: type) else {
                return Self.error(
                    .notFound, "all_extension_numbers_of_type: unknown message type \(TextCap.quoted(type))")
            }
            var extensions = GRPCReflectionV1.ExtensionNumberResponse()
            extensions.baseTypeName = type
            extensions.extensionNumber = numbers
            return .allExtensionNumbersResponse(extensions)
        case nil:
            return Self.error(
                .invalidArgument,
                "message_request: not set; ask list_services, file_by_filename, file_containing_symbol, "
                    + "file_containing_extension or all_extension_numbers_of_type")
        }
    }

    /// The file and its imports, transitively. Sent whole every time, even when an earlier answer
    /// on the stream had some of them (the protocol allows leaving those out; clients need not
    /// keep track then, and the files are small).
    private func files(_ file: ProtoFileDescriptor) -> Response.MessageResponse {
        var response = GRPCReflectionV1.FileDescriptorResponse()
        response.fileDescriptorProto = index.withImports(file).map(\.serialized)
        return .fileDescriptorResponse(response)
    }

    static func error(_ code: GRPCStatusCode, _ message: String) -> Response.MessageResponse {
        var error = GRPCReflectionV1.ErrorResponse()
        error.errorCode = Int32(code.rawValue)
        error.errorMessage = message
        return .errorResponse(error)
    }
}

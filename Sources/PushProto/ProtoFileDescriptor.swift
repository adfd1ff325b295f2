/// One `.proto` file as protoc compiled it, for gRPC server reflection: the serialized
/// `google.protobuf.FileDescriptorProto` a client decodes, and what the file declares.
///
/// The values are generated at `make proto` time (`ProtoFileDescriptor.all`, from
/// scripts/gen-proto-descriptors.py), names included, so the gateway never decodes descriptors.
public struct ProtoFileDescriptor: Sendable {
    /// An extension field the file declares.
    public struct Extension: Sendable, Equatable {
        /// The fully qualified name of the message it extends.
        public let extendee: String
        public let number: Int32

        public init(extendee: String, number: Int32) {
            self.extendee = extendee
            self.number = number
        }
    }

    /// The path protoc compiled it under (`pushgate/v1/push.proto`), as imports name it.
    public let name: String
    /// The files it imports directly.
    public let dependencies: [String]
    /// The fully qualified services it declares.
    public let services: [String]
    /// The fully qualified message types it declares, nested ones included.
    public let messages: [String]
    public let extensions: [Extension]
    /// Every fully qualified symbol it declares: messages, fields, oneofs, enums, enum values,
    /// extensions, services and methods.
    public let symbols: [String]
    /// The serialized `FileDescriptorProto`.
    public let serialized: [UInt8]

    public init(
        name: String, dependencies: [String], services: [String], messages: [String], extensions: [Extension],
        symbols: [String], serialized: [UInt8]
    ) {
        self.name = name
        self.dependencies = dependencies
        self.services = services
        self.messages = messages
        self.extensions = extensions
        self.symbols = symbols
        self.serialized = serialized
    }
}

import PushProto

/// The compiled `.proto` files looked up by file name, symbol and extension, for server reflection.
///
/// The names come precomputed from `make proto` (``ProtoFileDescriptor``): protoc and the protobuf
/// package already parsed the descriptors there, so nothing here decodes a `FileDescriptorProto`.
struct DescriptorIndex: Sendable {
    private let files: [String: ProtoFileDescriptor]
    /// File order as generated (imports first), so that answers are stable.
    private let order: [String]
    private let fileOfSymbol: [String: String]
    private let messageTypes: Set<String>

    init(_ files: [ProtoFileDescriptor] = ProtoFileDescriptor.all) {
        var byName: [String: ProtoFileDescriptor] = [:]
        var fileOfSymbol: [String: String] = [:]
        for file in files {
            byName[file.name] = file
            for symbol in file.symbols { fileOfSymbol[symbol] = file.name }
        }
        self.files = byName
        self.order = files.map(\.name)
        self.fileOfSymbol = fileOfSymbol
        self.messageTypes = Set(files.flatMap(\.messages))
    }

    /// Every service the files declare.
    var services: [String] { order.compactMap { files[$0] }.flatMap(\.services) }

    func file(named name: String) -> ProtoFileDescriptor? { files[name] }

    /// The file that declares `symbol`, fully qualified (a leading dot, as in a field's type name, is
    /// accepted too).
    func file(containingSymbol symbol: String) -> ProtoFileDescriptor? {
        let name = symbol.hasPrefix(".") ? String(symbol.dropFirst()) : symbol
        return fileOfSymbol[name].flatMap { files[$0] }
    }

    /// The file that declares the extension `number` of the message `extendee`.
    func file(containingExtension number: Int32, of extendee: String) -> ProtoFileDescriptor? {
        order.lazy.compactMap { files[$0] }.first { file in
            file.extensions.contains(ProtoFileDescriptor.Extension(extendee: extendee, number: number))
        }
    }

    /// The field numbers of the extensions of the message `type`; nil when no file declares `type`.
    func extensionNumbers(of type: String) -> [Int32]? {
        guard messageTypes.contains(type) else { return nil }
        return order.compactMap { files[$0] }.flatMap(\.extensions).filter { $0.extendee == type }.map(\.number)
    }

    /// `file` and every file it imports, transitively, each once, `file` first: what a client needs
    /// to build the file's descriptors. An import missing from the set (which `make proto` cannot
    /// produce: it compiles with `--include_imports`) is left out rather than failing the answer.
    func withImports(_ file: ProtoFileDescriptor) -> [ProtoFileDescriptor] {
        var seen: Set<String> = [file.name]
        var result = [file]
        var next = 0
        while next < result.count {
            for dependency in result[next].dependencies where !seen.contains(dependency) {
                seen.insert(dependency)
                if let imported = files[dependency] { result.append(imported) }
            }
            next += 1
        }
        return result
    }
}

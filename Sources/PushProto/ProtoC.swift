internal import CProtobufC

#if canImport(Glibc)
import Glibc
#endif

/// Conversions between protobuf-c's C representation and Swift values, used by the generated code.
enum ProtoC {
    /// A protobuf-c string field (NUL-terminated; NULL for an absent message's field).
    ///
    /// protobuf-c keeps strings as C strings, so a string with an embedded NUL is cut there; invalid
    /// UTF-8 never gets here (``checkUTF8(_:messageName:)`` refuses the message first).
    static func string(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer)
    }

    /// Throws when a `string` field anywhere in the unpacked message `m` is not valid UTF-8, naming
    /// it: proto3 requires valid UTF-8, and protobuf-c does not check it.
    static func checkUTF8<Message>(_ m: UnsafeMutablePointer<Message>, messageName: String) throws(ProtoDecodingError) {
        let base = UnsafeRawPointer(m).assumingMemoryBound(to: ProtobufCMessage.self)
        if let field = cprotobufc_first_invalid_utf8(base) {
            throw ProtoDecodingError(messageName: messageName, detail: "string field \(String(cString: field)) is not valid UTF-8")
        }
    }

    static func bytes(_ data: ProtobufCBinaryData) -> [UInt8] {
        guard data.len > 0, let base = data.data else { return [] }
        return Array(UnsafeBufferPointer(start: base, count: data.len))
    }

    static func stringMap<Entry>(
        _ entries: UnsafeMutablePointer<UnsafeMutablePointer<Entry>?>?, count: Int,
        _ keyValue: (UnsafeMutablePointer<Entry>) -> (String, String)
    ) -> [String: String] {
        var map: [String: String] = [:]
        guard let entries else { return map }
        map.reserveCapacity(count)
        for index in 0..<count {
            guard let entry = entries[index] else { continue }
            let (key, value) = keyValue(entry)
            map[key] = value  // protobuf: the last entry for a key wins
        }
        return map
    }

    /// Calls protobuf-c's unpack with a non-NULL data pointer even for empty input.
    static func withInput<T>(_ bytes: UnsafeRawBufferPointer, _ body: (Int, UnsafePointer<UInt8>) -> T) -> T {
        if let base = bytes.baseAddress, bytes.count > 0 {
            return body(bytes.count, base.assumingMemoryBound(to: UInt8.self))
        }
        var empty: UInt8 = 0
        return withUnsafePointer(to: &empty) { body(0, $0) }
    }

    /// Packs into a new array of exactly `size` bytes.
    static func pack(size: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) -> [UInt8] {
        guard size > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = body(buffer.baseAddress!)
            precondition(count == size, "protobuf-c packed \(count) bytes, announced \(size)")
        }
    }
}

/// Owns every C allocation made while building one message for packing, and frees them together.
///
/// The generated `serializedBytes()` keeps the arena alive with `defer { arena.releaseAll() }`
/// until protobuf-c has packed the message.
final class ProtoCArena {
    private var allocations: [UnsafeMutableRawPointer] = []

    deinit { releaseAll() }

    func releaseAll() {
        for pointer in allocations { free(pointer) }
        allocations.removeAll()
    }

    /// A zeroed C value of type `T` (the caller runs the generated `__init` on it).
    func allocate<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
        guard let raw = calloc(1, MemoryLayout<T>.stride) else { fatalError("out of memory") }
        allocations.append(raw)
        return raw.bindMemory(to: T.self, capacity: 1)
    }

    func string(_ value: String) -> UnsafeMutablePointer<CChar> {
        var value = value
        return value.withUTF8 { utf8 in
            guard let raw = malloc(utf8.count + 1) else { fatalError("out of memory") }
            allocations.append(raw)
            let chars = raw.bindMemory(to: CChar.self, capacity: utf8.count + 1)
            if let base = utf8.baseAddress {
                UnsafeMutableRawPointer(chars).copyMemory(from: base, byteCount: utf8.count)
            }
            chars[utf8.count] = 0
            return chars
        }
    }

    func bytes(_ value: [UInt8]) -> ProtobufCBinaryData {
        guard !value.isEmpty, let raw = malloc(value.count) else { return ProtobufCBinaryData(len: 0, data: nil) }
        allocations.append(raw)
        value.withUnsafeBytes { raw.copyMemory(from: $0.baseAddress!, byteCount: value.count) }
        return ProtobufCBinaryData(len: value.count, data: raw.assumingMemoryBound(to: UInt8.self))
    }

    func array<Element, T>(_ items: [Element], _ make: (Element) -> T) -> UnsafeMutablePointer<T> {
        guard let raw = malloc(MemoryLayout<T>.stride * max(items.count, 1)) else { fatalError("out of memory") }
        allocations.append(raw)
        let typed = raw.bindMemory(to: T.self, capacity: items.count)
        for (index, item) in items.enumerated() {
            (typed + index).initialize(to: make(item))
        }
        return typed
    }
}

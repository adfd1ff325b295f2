import CProtobufC
import CPushgateProto

#if canImport(Glibc)
    import Glibc
#endif

/// Conversions between protobuf-c's C representation and Swift values, used by the generated code.
enum ProtoC {
    /// A protobuf-c string field (NUL-terminated; NULL for an absent message's field), checked
    /// as it is copied: proto3 requires valid UTF-8 and protobuf-c does not check it, so this is
    /// the one pass over its bytes (stock parsers refuse such messages; `String(cString:)` would
    /// repair them with U+FFFD without a word).
    ///
    /// protobuf-c keeps strings as C strings, so a string with an embedded NUL is cut there.
    /// - Throws: naming `field` (the message's name is added by the message being decoded).
    @inline(__always)
    static func string(_ pointer: UnsafePointer<CChar>?, field: StaticString) throws(ProtoDecodingError) -> String {
        guard let pointer, pointer.pointee != 0 else { return "" }  // absent: protobuf-c's empty string
        guard let string = String(validatingCString: pointer) else {
            throw ProtoDecodingError(messageName: "", detail: "string field \(field) is not valid UTF-8")
        }
        return string
    }

    static func bytes(_ data: ProtobufCBinaryData) -> [UInt8] {
        guard data.len > 0, let base = data.data else { return [] }
        return Array(UnsafeBufferPointer(start: base, count: data.len))
    }

    static func stringMap<Entry>(
        _ entries: UnsafeMutablePointer<UnsafeMutablePointer<Entry>?>?, count: Int,
        _ keyValue: (UnsafeMutablePointer<Entry>) throws(ProtoDecodingError) -> (String, String)
    ) throws(ProtoDecodingError) -> [String: String] {
        var map: [String: String] = [:]
        guard let entries else { return map }
        map.reserveCapacity(count)
        for index in 0..<count {
            guard let entry = entries[index] else { continue }
            let (key, value) = try keyValue(entry)
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
    /// Blocks of `blockSize` bytes handed out front to back; a SendResponse of 1,000 results is a
    /// few thousand small C values and strings, so one malloc per value was most of its packing.
    /// The first block (the thread's spare, see `cprotobufc_exchange_spare_block`) and the rest:
    /// a small message needs no array of blocks.
    private var firstBlock: UnsafeMutableRawPointer?
    private var blocks: [UnsafeMutableRawPointer] = []
    /// Values larger than a quarter block, allocated on their own.
    private var large: [UnsafeMutableRawPointer] = []
    private var cursor: UnsafeMutableRawPointer?
    private var remaining = 0
    private static let blockSize = 32 * 1024
    /// malloc's alignment on 64-bit Linux; no protobuf-c struct needs more.
    private static let alignment = 16

    deinit { releaseAll() }

    func releaseAll() {
        if let firstBlock {
            // Back to the thread's spare (the one there, if any, is freed).
            free(cprotobufc_exchange_spare_block(firstBlock))
            self.firstBlock = nil
        }
        for pointer in blocks { free(pointer) }
        for pointer in large { free(pointer) }
        blocks.removeAll()
        large.removeAll()
        cursor = nil
        remaining = 0
    }

    /// `byteCount` uninitialized bytes, aligned like malloc's, valid until ``releaseAll()``.
    private func raw(_ byteCount: Int) -> UnsafeMutableRawPointer {
        let size = (max(byteCount, 1) + Self.alignment - 1) & ~(Self.alignment - 1)
        if size > Self.blockSize / 4 {
            guard let pointer = malloc(size) else { fatalError("out of memory") }
            large.append(pointer)
            return pointer
        }
        if size > remaining {
            let block: UnsafeMutableRawPointer
            if firstBlock == nil {
                guard let first = cprotobufc_exchange_spare_block(nil) ?? malloc(Self.blockSize) else {
                    fatalError("out of memory")
                }
                firstBlock = first
                block = first
            } else {
                guard let next = malloc(Self.blockSize) else { fatalError("out of memory") }
                blocks.append(next)
                block = next
            }
            cursor = block
            remaining = Self.blockSize
        }
        let pointer = cursor!
        cursor = pointer + size
        remaining -= size
        return pointer
    }

    /// A zeroed C value of type `T` (the caller runs the generated `__init` on it).
    func allocate<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
        let pointer = raw(MemoryLayout<T>.stride)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<T>.stride)
        return pointer.bindMemory(to: T.self, capacity: 1)
    }

    func string(_ value: String) -> UnsafeMutablePointer<CChar> {
        var value = value
        return value.withUTF8 { utf8 in
            let chars = raw(utf8.count + 1).bindMemory(to: CChar.self, capacity: utf8.count + 1)
            if let base = utf8.baseAddress {
                UnsafeMutableRawPointer(chars).copyMemory(from: base, byteCount: utf8.count)
            }
            chars[utf8.count] = 0
            return chars
        }
    }

    func bytes(_ value: [UInt8]) -> ProtobufCBinaryData {
        guard !value.isEmpty else { return ProtobufCBinaryData(len: 0, data: nil) }
        let pointer = raw(value.count)
        value.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress!, byteCount: value.count) }
        return ProtobufCBinaryData(len: value.count, data: pointer.assumingMemoryBound(to: UInt8.self))
    }

    func array<Element, T>(_ items: [Element], _ make: (Element) -> T) -> UnsafeMutablePointer<T> {
        let typed = raw(MemoryLayout<T>.stride * max(items.count, 1)).bindMemory(to: T.self, capacity: items.count)
        for (index, item) in items.enumerated() {
            (typed + index).initialize(to: make(item))
        }
        return typed
    }
}

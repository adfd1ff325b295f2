import CProtobufC
import CPushgateProto

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

    /// ``string(_:field:)`` stored in `value` when the field is set (not empty): `value` holds
    /// the default, and most fields of a message are not set.
    @inline(__always)
    static func string(
        _ pointer: UnsafePointer<CChar>?, field: StaticString, into value: inout String
    ) throws(ProtoDecodingError) {
        guard let pointer, pointer.pointee != 0 else { return }
        value = try string(pointer, field: field)
    }

    /// A repeated field's elements (`count` > 0), each made by `element`, into an array of
    /// exactly that capacity.
    @inline(__always)
    static func array<CElement, Element>(
        _ elements: UnsafeMutablePointer<CElement>?, count: Int,
        _ element: (CElement) throws(ProtoDecodingError) -> Element
    ) throws(ProtoDecodingError) -> [Element] {
        guard let elements else { return [] }
        var array: [Element] = []
        array.reserveCapacity(count)
        for index in 0..<count {
            array.append(try element(elements[index]))
        }
        return array
    }

    /// A repeated message field's elements (`count` > 0), each made (`empty`) in the array's
    /// storage and decoded there in place (`decode`): a message returned by value, or appended,
    /// was copied field by field (see the generator).
    @inline(__always)
    static func messages<CMessage, Element>(
        _ elements: UnsafeMutablePointer<UnsafeMutablePointer<CMessage>?>?, count: Int,
        empty: () -> Element, _ decode: (UnsafePointer<CMessage>, inout Element) throws(ProtoDecodingError) -> Void
    ) throws(ProtoDecodingError) -> [Element] {
        guard let elements else { return [] }
        // Not `init(unsafeUninitializedCapacity:)`: it allocates through the standard library's
        // unspecialized path (a metadata lookup). Each element is appended empty, then decoded
        // where it lies.
        var array: [Element] = []
        array.reserveCapacity(count)
        for index in 0..<count {
            array.append(empty())
            try decode(elements[index]!, &array[index])
        }
        return array
    }

    /// A message decoded (`decode`) into a copy of `empty`, for a case of a several-field oneof.
    @inline(__always)
    static func message<CMessage, Element>(
        _ message: UnsafeMutablePointer<CMessage>, empty: Element,
        _ decode: (UnsafePointer<CMessage>, inout Element) throws(ProtoDecodingError) -> Void
    ) throws(ProtoDecodingError) -> Element {
        var value = empty
        try decode(message, &value)
        return value
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

    /// Decodes a message into `value` (which holds the defaults): protobuf-c's unpack (`unpack`, a generated `*__unpack` given the
    /// allocator) with every allocation in an arena (`cprotobufc_arena`: the thread's spare block,
    /// no malloc per value), `copy` of the C struct into Swift values, and the arena released as a
    /// whole (no free_unpacked walk). The Swift values own copies of everything: nothing points
    /// into the arena once it is released.
    /// - Throws: naming `messageName` when protobuf-c cannot unpack the bytes or `copy` throws.
    @inline(__always)
    static func decode<C, T>(
        _ bytes: UnsafeRawBufferPointer, messageName: StaticString, into value: inout T,
        unpack: (UnsafeMutablePointer<ProtobufCAllocator>, Int, UnsafePointer<UInt8>) -> UnsafeMutablePointer<C>?,
        copy: (UnsafePointer<C>, inout T) throws(ProtoDecodingError) -> Void
    ) throws(ProtoDecodingError) {
        let unpacking = { allocator in withInput(bytes) { unpack(allocator, $0, $1) } }
        try withUnpacked(unpacking: unpacking) { (unpacked) throws(ProtoDecodingError) in
            guard let message = unpacked else { throw ProtoDecodingError(messageName: "\(messageName)") }
            do throws(ProtoDecodingError) {
                try copy(message, &value)
            } catch {
                throw ProtoDecodingError(messageName: "\(messageName)", detail: error.detail)
            }
        }
    }

    /// Calls `body` with the message `unpack` made (protobuf-c's unpack given the allocator; nil
    /// when the bytes are not one), every allocation in an arena released as a whole when `body`
    /// returns: the message is valid only inside `body`. protobuf-c copies what it keeps
    /// (strings, repeated fields), so nothing points into the input.
    @inline(__always)
    static func withUnpacked<C, Result, E: Error>(
        unpacking unpack: (UnsafeMutablePointer<ProtobufCAllocator>) -> UnsafeMutablePointer<C>?,
        _ body: (UnsafePointer<C>?) throws(E) -> Result
    ) throws(E) -> Result {
        var arena = cprotobufc_arena()
        defer { cprotobufc_arena_release(&arena) }
        let unpacked = withUnsafeMutablePointer(to: &arena) { unpack(cprotobufc_arena_allocator($0)) }
        return try body(unpacked.map { UnsafePointer($0) })
    }

    /// Calls protobuf-c's unpack with a non-NULL data pointer even for empty input.
    @inline(__always)
    static func withInput<T>(_ bytes: UnsafeRawBufferPointer, _ body: (Int, UnsafePointer<UInt8>) -> T) -> T {
        if let base = bytes.baseAddress, bytes.count > 0 {
            return body(bytes.count, base.assumingMemoryBound(to: UInt8.self))
        }
        var empty: UInt8 = 0
        return withUnsafePointer(to: &empty) { body(0, $0) }
    }

    /// What a field adds to the encoding beyond its content, at most: a tag (at most 5 bytes)
    /// and a length or a varint (at most 10). The generated `packedSizeBound` adds it per field.
    static let fieldOverhead = 16

    /// Packs into a new array of `prefix` zero bytes (room for a framing prefix, see
    /// ``ProtoMessage/serializedBytes(reservingPrefix:)``) and then the message, `body` packing
    /// into room for `bound` bytes (the generated `packedSizeBound`, at least protobuf-c's
    /// get_packed_size, `size`, which debug builds check). An array left with much more room than
    /// the message needs is copied to one that fits.
    @inline(__always)
    static func pack(
        bound: Int, reservingPrefix prefix: Int, size: () -> Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int
    ) -> [UInt8] {
        precondition(prefix >= 0, "a negative prefix")
        assert(size() <= bound, "packedSizeBound \(bound) is below protobuf-c's size \(size())")
        var packed = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: prefix + bound) { buffer, count in
            let base = buffer.baseAddress!
            if prefix > 0 { base.initialize(repeating: 0, count: prefix) }
            packed = body(base + prefix)
            precondition(packed <= bound, "protobuf-c packed \(packed) bytes, past the bound of \(bound)")
            count = prefix + packed
        }
        if bound - packed > 4096 && bound - packed > packed / 2 { return Array(bytes) }
        return bytes
    }
}

/// Where the C struct of a message being encoded is built for protobuf-c's pack: a
/// `cprotobufc_arena` (CProtobufC/shim.h) on the encoder's stack, released as a whole.
///
/// The generated `serializedBytes(reservingPrefix:)` builds and packs the message within
/// ``with(_:)``.
struct ProtoCArena {
    private let arena: UnsafeMutablePointer<cprotobufc_arena>

    /// Calls `body` with an empty arena, released when `body` returns.
    @inline(__always)
    static func with<T, E: Error>(_ body: (ProtoCArena) throws(E) -> T) throws(E) -> T {
        var arena = cprotobufc_arena()
        defer { cprotobufc_arena_release(&arena) }
        return try withUnsafeMutablePointer(to: &arena) { (arena) throws(E) -> T in
            try body(ProtoCArena(arena: arena))
        }
    }

    /// `byteCount` uninitialized bytes, aligned like malloc's, valid until the release.
    @inline(__always)
    private func raw(_ byteCount: Int) -> UnsafeMutableRawPointer {
        guard let pointer = cprotobufc_arena_alloc(arena, max(byteCount, 1)) else { fatalError("out of memory") }
        return pointer
    }

    /// A zeroed C value of type `T` (the caller runs the generated `__init` on it).
    func allocate<T>(_ type: T.Type) -> UnsafeMutablePointer<T> {
        let pointer = raw(MemoryLayout<T>.stride)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<T>.stride)
        return pointer.bindMemory(to: T.self, capacity: 1)
    }

    /// `value` as a C string. Its UTF-8 is read where it is (a native string's is contiguous),
    /// not through a mutable copy.
    func string(_ value: String) -> UnsafeMutablePointer<CChar> {
        if let chars = value.utf8.withContiguousStorageIfAvailable({ cString($0) }) { return chars }
        var value = value
        return value.withUTF8 { cString($0) }
    }

    private func cString(_ utf8: UnsafeBufferPointer<UInt8>) -> UnsafeMutablePointer<CChar> {
        let chars = raw(utf8.count + 1).bindMemory(to: CChar.self, capacity: utf8.count + 1)
        if let base = utf8.baseAddress {
            UnsafeMutableRawPointer(chars).copyMemory(from: base, byteCount: utf8.count)
        }
        chars[utf8.count] = 0
        return chars
    }

    func bytes(_ value: [UInt8]) -> ProtobufCBinaryData {
        guard !value.isEmpty else { return ProtobufCBinaryData(len: 0, data: nil) }
        let pointer = raw(value.count)
        value.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress!, byteCount: value.count) }
        return ProtobufCBinaryData(len: value.count, data: pointer.assumingMemoryBound(to: UInt8.self))
    }

    /// The C array of `items`, each made by `make` from the element where it is in the array (the
    /// generated code reads its fields through the pointer).
    func array<Element, T>(_ items: [Element], _ make: (UnsafePointer<Element>) -> T) -> UnsafeMutablePointer<T> {
        let typed = raw(MemoryLayout<T>.stride * max(items.count, 1)).bindMemory(to: T.self, capacity: items.count)
        items.withUnsafeBufferPointer { elements in
            guard let base = elements.baseAddress else { return }
            for index in elements.indices {
                (typed + index).initialize(to: make(base + index))
            }
        }
        return typed
    }
}

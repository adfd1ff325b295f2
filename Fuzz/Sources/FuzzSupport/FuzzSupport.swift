/// Shared by the fuzz targets: the hand-off to libFuzzer's driver and a reader that splits one
/// fuzz input into the several values a target needs.

public typealias FuzzCallback = @convention(c) (UnsafeRawPointer, Int) -> CInt

@_silgen_name("LLVMFuzzerRunDriver")
func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: FuzzCallback
) -> CInt

/// Runs libFuzzer's command-line driver (corpus directories, `-runs=`, `-max_total_time=`, crash
/// files) on `callback`. Call it from the target's `<module>_main`.
public func runFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ callback: FuzzCallback
) -> CInt {
    var argc = argc
    var argv = argv
    return llvmFuzzerRunDriver(&argc, &argv, callback)
}

/// Stops with a message libFuzzer reports as a crash (and saves the input for).
public func fuzzCheck(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { fatalError("fuzz invariant failed: \(message())", file: file, line: line) }
}

/// Reads values off the front of a fuzz input; past the end it yields zeros and empty values, so
/// every input, however short, is usable.
public struct FuzzInput {
    public let bytes: [UInt8]
    public private(set) var position = 0

    public init(_ start: UnsafeRawPointer, _ count: Int) {
        bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    }

    public var isAtEnd: Bool { position >= bytes.count }

    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// Up to `count` bytes.
    public mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let end = min(bytes.count, position + max(0, count))
        defer { position = end }
        return bytes[position..<end]
    }

    /// Everything not read yet.
    public mutating func rest() -> ArraySlice<UInt8> { take(bytes.count - position) }

    /// A string whose length (in bytes, at most 255) is the next byte; invalid UTF-8 is repaired.
    public mutating func shortString() -> String {
        String(decoding: take(Int(byte())), as: UTF8.self)
    }

    /// The bytes up to (not including) the next `separator`, or to the end.
    public mutating func field(separator: UInt8 = 0) -> ArraySlice<UInt8> {
        let tail = bytes[position...]
        let end = tail.firstIndex(of: separator) ?? bytes.count
        defer { position = min(bytes.count, end + 1) }
        return bytes[position..<end]
    }
}

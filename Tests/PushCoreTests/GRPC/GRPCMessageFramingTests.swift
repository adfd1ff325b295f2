import Testing

@testable import PushCore

@Suite("gRPC message framing")
struct GRPCMessageFramingTests {
    private func deframer(_ max: Int = 1024) -> GRPCMessageDeframer { GRPCMessageDeframer(maxMessageSize: max) }

    @Test("the prefix is the flag and a big-endian length")
    func prefix() {
        #expect(GRPCMessageFramer.frame([0xAA, 0xBB]) == [0, 0, 0, 0, 2, 0xAA, 0xBB])
        #expect(GRPCMessageFramer.frame([], compressed: true) == [1, 0, 0, 0, 0])
        let big = [UInt8](repeating: 7, count: 0x01_02_03)
        #expect(GRPCMessageFramer.frame(big).prefix(5) == [0, 0, 0x01, 0x02, 0x03])
    }

    @Test("a message after room for its prefix is framed in place, as frame(_:) frames it")
    func prefixed() {
        #expect(GRPCMessageFramer.frame(prefixed: [9, 9, 9, 9, 9, 0xAA, 0xBB]) == [0, 0, 0, 0, 2, 0xAA, 0xBB])
        #expect(GRPCMessageFramer.frame(prefixed: [0, 0, 0, 0, 0], compressed: true) == [1, 0, 0, 0, 0])
        let big = [UInt8](repeating: 7, count: 0x01_02_03)
        #expect(GRPCMessageFramer.frame(prefixed: [0, 0, 0, 0, 0] + big) == GRPCMessageFramer.frame(big))
    }

    @Test("a framed message comes back whole")
    func roundTrip() throws {
        var d = deframer()
        d.append([1, 2, 3], compressed: false)
        #expect(try d.next() == GRPCMessage(compressed: false, bytes: [1, 2, 3]))
        #expect(try d.next() == nil)
        #expect(!d.hasPartialMessage)
    }

    @Test("a message alone in one input is kept as it came; input after it, before it is read, queues behind it")
    func wholeMessageInOneInput() throws {
        var d = deframer()
        d.appendRaw(GRPCMessageFramer.frame([7, 8, 9], compressed: true))
        // Known to the budget and to the buffered count before it is read, as a buffered one is.
        #expect(d.pendingMessageSize == 8)
        #expect(d.bufferedByteCount == 8)
        #expect(!d.hasPartialMessage)
        #expect(try d.next() == GRPCMessage(compressed: true, bytes: [7, 8, 9]))
        #expect(try d.next() == nil)
        #expect(d.pendingMessageSize == nil && d.bufferedByteCount == 0)

        // Two inputs before a read: the first message, then the rest in order, however it is split.
        let second = GRPCMessageFramer.frame([1, 2]) + GRPCMessageFramer.frame([3])
        for split in 0...second.count {
            var d = deframer()
            d.appendRaw(GRPCMessageFramer.frame([0xAA]))
            d.appendRaw(Array(second[..<split]))
            d.appendRaw(Array(second[split...]))
            var got: [GRPCMessage] = []
            while let message = try d.next() { got.append(message) }
            #expect(got == [GRPCMessage(bytes: [0xAA]), GRPCMessage(bytes: [1, 2]), GRPCMessage(bytes: [3])])
            #expect(!d.hasPartialMessage && d.bufferedByteCount == 0)
        }

        // Alone but not acceptable: the buffered path refuses it as before.
        var big = deframer(2)
        big.appendRaw(GRPCMessageFramer.frame([1, 2, 3]))
        #expect(throws: GRPCStatus(.resourceExhausted, "message of 3 bytes exceeds the limit of 2 bytes")) {
            try big.next()
        }
    }

    @Test("a zero-length message is a message")
    func zeroLength() throws {
        var d = deframer()
        d.appendRaw([0, 0, 0, 0, 0])
        #expect(try d.next() == GRPCMessage(bytes: []))
        #expect(try d.next() == nil)
    }

    @Test("messages split at every byte boundary reassemble")
    func chunkBoundaries() throws {
        let wire =
            GRPCMessageFramer.frame([10, 20, 30]) + GRPCMessageFramer.frame([], compressed: true)
            + GRPCMessageFramer.frame([40])
        for split in 0...wire.count {
            var d = deframer()
            var got: [GRPCMessage] = []
            for chunk in [Array(wire[..<split]), Array(wire[split...])] {
                d.appendRaw(chunk)
                while let message = try d.next() { got.append(message) }
            }
            #expect(
                got == [
                    GRPCMessage(bytes: [10, 20, 30]), GRPCMessage(compressed: true, bytes: []),
                    GRPCMessage(bytes: [40]),
                ])
            #expect(!d.hasPartialMessage)
        }
    }

    @Test("the size of the message being assembled is known from its prefix on, before its body")
    func pendingMessageSize() throws {
        var d = deframer()
        #expect(d.pendingMessageSize == nil)
        let wire = GRPCMessageFramer.frame([UInt8](repeating: 9, count: 1000))
        d.appendRaw(Array(wire.prefix(4)))
        #expect(d.pendingMessageSize == nil)  // not a whole prefix yet
        d.appendRaw(Array(wire[4..<100]))
        #expect(d.pendingMessageSize == 1005)
        d.appendRaw(Array(wire[100...]))
        #expect(try d.next()?.bytes.count == 1000)
        #expect(d.pendingMessageSize == nil)
    }

    @Test("byte-at-a-time input reports a partial message until the last byte")
    func byteAtATime() throws {
        let wire = GRPCMessageFramer.frame([1, 2, 3, 4])
        var d = deframer()
        for (i, byte) in wire.enumerated() {
            d.appendRaw([byte])
            let message = try d.next()
            #expect((message == nil) == (i < wire.count - 1))
            #expect(d.hasPartialMessage == (i < wire.count - 1))
        }
    }

    @Test("an oversized length fails from the prefix alone")
    func oversized() throws {
        var d = deframer(100)
        d.appendRaw([0, 0, 0, 0, 101])  // no body yet
        #expect(throws: GRPCStatus(.resourceExhausted, "message of 101 bytes exceeds the limit of 100 bytes")) {
            try d.next()
        }
        // Sticky: the stream can't be re-synchronised, and later input is dropped.
        d.appendRaw([0, 0, 0, 0, 0])
        #expect(throws: GRPCStatus.self) { try d.next() }
        #expect(!d.hasPartialMessage)
    }

    @Test("a message exactly at the limit is accepted")
    func atLimit() throws {
        var d = deframer(4)
        d.append([1, 2, 3, 4], compressed: false)
        #expect(try d.next()?.bytes == [1, 2, 3, 4])
    }

    @Test("a 4 GiB declared length fails without overflow")
    func hugeLength() {
        var d = deframer(1 << 20)
        d.appendRaw([0, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(
            throws: GRPCStatus(.resourceExhausted, "message of 4294967295 bytes exceeds the limit of 1048576 bytes")
        ) {
            try d.next()
        }
    }

    @Test("a compressed flag other than 0 or 1 is INTERNAL")
    func badFlag() {
        var d = deframer()
        d.appendRaw([2, 0, 0, 0, 0])
        #expect(throws: GRPCStatus(.internalError, "invalid compressed flag 2 in a gRPC message prefix")) {
            try d.next()
        }
    }

    @Test("consumed bytes are released as messages are read")
    func buffersLittle() throws {
        var d = deframer()
        for i in 0..<1000 {
            d.append([UInt8(truncatingIfNeeded: i)], compressed: false)
            #expect(try d.next()?.bytes == [UInt8(truncatingIfNeeded: i)])
        }
        #expect(d.storedByteCount == 0)
        d.appendRaw([0, 0, 0, 0, 2, 9])
        #expect(try d.next() == nil)
        #expect(d.bufferedByteCount == 6)
        d.appendRaw([9, 0, 0])
        #expect(try d.next()?.bytes == [9, 9])
        #expect(d.bufferedByteCount == 2)
        #expect(d.storedByteCount == 9)
        d.appendRaw([0, 0, 0])
        // Appending drops the consumed message before adding input.
        #expect(d.storedByteCount == 5)
    }
}

extension GRPCMessageDeframer {
    mutating func appendRaw(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    mutating func append(_ message: [UInt8], compressed: Bool) {
        appendRaw(GRPCMessageFramer.frame(message, compressed: compressed))
    }
}

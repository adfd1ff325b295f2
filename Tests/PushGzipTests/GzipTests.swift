import Testing

@testable import PushGzip

@Suite("gzip over zlib")
struct GzipTests {
    private static let text = Array(String(repeating: "pushgate gzip round trip ", count: 400).utf8)

    @Test("what is compressed inflates back to the same bytes, empty input included")
    func roundTrip() throws {
        for input in [Self.text, [], [0x42], (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }] {
            let gzipped = try #require(Gzip.compress(input))
            #expect(gzipped.starts(with: [0x1f, 0x8b]))  // a gzip member, not zlib framing
            #expect(try Gzip.decompress(gzipped, maxSize: input.count) == input)
        }
        #expect(try #require(Gzip.compress(Self.text)).count < Self.text.count / 10)
    }

    @Test("corrupt input is an error naming zlib's reason")
    func corrupt() throws {
        #expect(throws: GzipError.self) { try Gzip.decompress(Array("not gzip at all".utf8), maxSize: 1 << 20) }
        var gzipped = try #require(Gzip.compress(Self.text))
        gzipped[gzipped.count / 2] ^= 0xff
        gzipped[gzipped.count / 2 + 1] ^= 0xff
        do {
            _ = try Gzip.decompress(gzipped, maxSize: 1 << 20)
            Issue.record("corrupt input inflated")
        } catch {
            guard case .corrupt(let reason) = error else {
                Issue.record("not .corrupt: \(error)")
                return
            }
            #expect(!reason.isEmpty)
        }
        // A damaged trailer (CRC-32) is caught too.
        var badCRC = try #require(Gzip.compress(Self.text))
        badCRC[badCRC.count - 6] ^= 1
        #expect(throws: GzipError.corrupt("incorrect data check")) { try Gzip.decompress(badCRC, maxSize: 1 << 20) }
        // Bytes after the end of the member.
        let trailing = try #require(Gzip.compress(Self.text)) + [0]
        #expect(throws: GzipError.corrupt("1 bytes after the end of the gzip data")) {
            try Gzip.decompress(trailing, maxSize: 1 << 20)
        }
    }

    @Test("truncated input, at any cut, is .truncated")
    func truncated() throws {
        let gzipped = try #require(Gzip.compress(Self.text))
        for cut in [1, 10, gzipped.count / 2, gzipped.count - 1] {
            #expect(throws: GzipError.truncated) { try Gzip.decompress(Array(gzipped.prefix(cut)), maxSize: 1 << 20) }
        }
        #expect(throws: GzipError.truncated) { try Gzip.decompress([], maxSize: 10) }
    }

    @Test("the bound: exactly the limit inflates, one byte more is .tooLarge")
    func boundAtLimit() throws {
        for size in [0, 1, 1_000, Gzip.initialOutputBytes, Gzip.initialOutputBytes * 3 + 7] {
            let input = [UInt8](repeating: 7, count: size)
            let gzipped = try #require(Gzip.compress(input))
            #expect(try Gzip.decompress(gzipped, maxSize: size) == input)
            if size > 0 {
                #expect(throws: GzipError.tooLarge(limit: size - 1)) { try Gzip.decompress(gzipped, maxSize: size - 1) }
            }
        }
    }

    @Test("a 5 MB bomb of a few KB stops at the limit + 1 byte: no more is ever asked for")
    func bomb() throws {
        let bomb = try #require(Gzip.compress([UInt8](repeating: 0, count: 5_000_000), level: 9))
        #expect(bomb.count < 6_000)
        let limit = 100_000
        var reserved = 0
        #expect(throws: GzipError.tooLarge(limit: limit)) {
            try Gzip.decompress(bomb, maxSize: limit) {
                reserved += $0
                return true
            }
        }
        #expect(reserved == limit + 1)
        // Whole under a limit it fits: it is a valid stream, only a large one.
        #expect(try Gzip.decompress(bomb, maxSize: 5_000_000).count == 5_000_000)
    }

    @Test("a refused reservation stops inflation at once")
    func refused() throws {
        let gzipped = try #require(Gzip.compress([UInt8](repeating: 1, count: 200_000)))
        var asked: [Int] = []
        #expect(throws: GzipError.refused) {
            try Gzip.decompress(gzipped, maxSize: 1 << 20) {
                asked.append($0)
                return asked.count < 3
            }
        }
        #expect(asked == [Gzip.initialOutputBytes, Gzip.initialOutputBytes, 2 * Gzip.initialOutputBytes])
    }
}

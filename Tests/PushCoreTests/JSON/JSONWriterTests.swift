import Testing

@testable import PushCore

@Suite("JSONWriter")
struct JSONWriterTests {
    private func text(_ writer: borrowing JSONWriter) -> String { String(decoding: writer.bytes, as: UTF8.self) }

    @Test("objects and arrays get commas in the right places")
    func structure() {
        var w = JSONWriter()
        w.beginObject()
        w.key("a")
        w.int(1)
        w.key("b")
        w.beginArray()
        w.string("x")
        w.bool(true)
        w.null()
        w.beginObject()
        w.endObject()
        w.beginArray()
        w.endArray()
        w.endArray()
        w.key("c")
        w.stringArray([])
        w.endObject()
        #expect(text(w) == #"{"a":1,"b":["x",true,null,{},[]],"c":[]}"#)
    }

    @Test("strings escape quotes, backslashes and controls; other UTF-8 passes through")
    func escaping() {
        var w = JSONWriter()
        w.string("q\"b\\s/\n\r\t\u{08}\u{0C}\u{01}\u{1F} é😀")
        #expect(text(w) == #""q\"b\\s/\n\r\t\b\f\u0001\u001f é😀""#)
    }

    @Test("long strings escape wherever the byte falls in an eight-byte word")
    func escapingInWords() {
        let escapes = [("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{1F}", #"\u001f"#), ("\u{0}", #"\u0000"#)]
        for (escaped, written) in escapes {
            for offset in 0..<20 {
                let plain = String(repeating: "a", count: offset)
                var w = JSONWriter()
                w.string(plain + escaped + "bcdefghijklmnopq")
                #expect(text(w) == "\"" + plain + written + "bcdefghijklmnopq\"")
            }
        }
        // Bytes at and around the boundaries the word test checks, alone and among plain ones.
        for byte in [UInt8(0x1F), 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xA2, 0xDC] {
            let word = UInt64(0x6161_6161_6161_6100) | UInt64(byte)
            let needs = byte < 0x20 || byte == 0x22 || byte == 0x5C
            #expect(JSONWriter.needsEscape(word) == needs)
            #expect(JSONWriter.needsEscape(word << 56 | 0x61_6161_6161_6161) == needs)
        }
    }

    @Test(
        "integers cover the full 64-bit range",
        arguments: [
            (Int64(0), "0"), (7, "7"), (-7, "-7"), (1_000_000, "1000000"),
            (Int64.max, "9223372036854775807"), (Int64.min, "-9223372036854775808"),
        ])
    func integers(value: Int64, expected: String) {
        var w = JSONWriter()
        w.int(value)
        #expect(text(w) == expected)
        var small = JSONWriter()
        small.int(Int32.min)
        #expect(text(small) == "-2147483648")
    }

    @Test(
        "parse then write round-trips strings with every escape",
        arguments: [
            "", "plain", "\"quoted\"", "back\\slash", "\u{0}\u{1}\u{1F}\u{7F}", "tab\tnl\n", "é ☃ 😀 \u{FFFF}",
        ])
    func stringRoundTrip(string: String) throws {
        var w = JSONWriter()
        w.string(string)
        #expect(try JSONParser.parse(w.bytes) == .string(string))
    }

    @Test("a parsed document is written back compactly with numbers verbatim")
    func valueRoundTrip() throws {
        let source = #"{ "b" : [1.50, -0, 2E+3, true, null], "a": {"\u00e9": "\ud83d\ude00"} }"#
        let value = try JSONParser.parse(source.utf8)
        let bytes = JSONWriter.encode(value)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"b":[1.50,-0,2E+3,true,null],"a":{"é":"😀"}}"#)
        #expect(try JSONParser.parse(bytes) == value)
    }

    @Test("a writer grows past the room it was made with, keeping what it wrote; [UInt8] appends agree")
    func growing() throws {
        var w = JSONWriter(reservingCapacity: 1)
        var expected: [UInt8] = Array("[".utf8)
        w.beginArray()
        for index in 0..<300 {
            let value = String(repeating: "\u{1}\"", count: index % 7) + "v\(index)"
            w.string(value)
            w.int(-index)
            if index > 0 { expected.append(UInt8(ascii: ",")) }
            JSONWriter.appendQuoted(value, to: &expected)
            expected.append(UInt8(ascii: ","))
            JSONWriter.appendDecimal(-index, to: &expected)
        }
        w.endArray()
        expected.append(UInt8(ascii: "]"))
        #expect(w.bytes == expected)
        guard case .array(let elements) = try JSONParser.parse(w.bytes) else {
            Issue.record("not an array")
            return
        }
        #expect(elements.count == 600)
        #expect(elements[599] == .number("-299"))
    }
}

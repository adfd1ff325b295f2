import Testing

@testable import PushCore

@Suite("JSONParser")
struct JSONParserTests {
    private func parse(_ text: String, maxDepth: Int = 64) throws(JSONError) -> JSONValue {
        try JSONParser.parse(text.utf8, maxDepth: maxDepth)
    }

    private func failure(_ text: String, maxDepth: Int = 64) -> JSONError? {
        do {
            _ = try parse(text, maxDepth: maxDepth)
            return nil
        } catch {
            return error
        }
    }

    private func failure(bytes: [UInt8]) -> JSONError? {
        do {
            _ = try JSONParser.parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("scalars, containers and whitespace")
    func values() throws {
        #expect(try parse(" null ") == .null)
        #expect(try parse("true") == .bool(true))
        #expect(try parse("false") == .bool(false))
        #expect(try parse("\"hi\"") == .string("hi"))
        #expect(try parse("[]") == .array([]))
        #expect(try parse("{}") == .object([]))
        #expect(try parse("\t[1, \"a\", [null]]\r\n") == .array([.number("1"), .string("a"), .array([.null])]))
    }

    @Test("object members keep their order, and equality is by order")
    func order() throws {
        let value = try parse(#"{"b":1,"a":2}"#)
        #expect(value == .object([("b", .number("1")), ("a", .number("2"))]))
        #expect(value != .object([("a", .number("2")), ("b", .number("1"))]))
        #expect(value["a"] == .number("2"))
        #expect(value["zz"] == nil)
    }

    @Test("numbers are kept verbatim", arguments: ["0", "-0", "12", "-3.25", "1e10", "1E+2", "2.5e-3", "0.0"])
    func numbers(text: String) throws {
        #expect(try parse(text) == .number(text))
    }

    @Test(
        "malformed numbers are rejected",
        arguments: [
            ("01", 0, "leading zeros are not allowed"), ("-01", 0, "leading zeros are not allowed"),
            ("1.", 2, "expected a digit"), (".5", 0, "expected a value"), ("1e", 2, "expected a digit"),
            ("-", 1, "expected a digit"), ("+1", 0, "expected a value"), ("1.e3", 2, "expected a digit"),
            ("NaN", 0, "expected a value"), ("0x10", 1, "unexpected data after the JSON value"),
        ])
    func badNumbers(text: String, offset: Int, message: String) {
        #expect(failure(text) == JSONError(offset: offset, message: message))
    }

    @Test("escapes decode, including surrogate pairs")
    func escapes() throws {
        #expect(try parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{08}\u{0C}\n\r\t"))
        #expect(try parse(#""\u00e9\u00E9""#) == .string("éé"))
        #expect(try parse(#""\ud83d\ude00!""#) == .string("😀!"))
        #expect(try parse(#""x\u0000y""#) == .string("x\u{0}y"))
        #expect(try parse("\"naïve 😀\"") == .string("naïve 😀"))
    }

    @Test("bad escapes and lone surrogates are rejected with the escape's offset")
    func badEscapes() {
        #expect(failure(#""ab\x""#) == JSONError(offset: 3, message: "invalid escape sequence"))
        #expect(failure(#""\u12G4""#) == JSONError(offset: 1, message: #"invalid \u escape, expected 4 hex digits"#))
        #expect(failure(#""\ud83d""#) == JSONError(offset: 1, message: #"unpaired surrogate in \u escape"#))
        #expect(failure(#""\ud83dx""#) == JSONError(offset: 1, message: #"unpaired surrogate in \u escape"#))
        #expect(failure(#""\ud83d\u0041""#) == JSONError(offset: 1, message: #"unpaired surrogate in \u escape"#))
        #expect(failure(#""\ude00""#) == JSONError(offset: 1, message: #"unpaired surrogate in \u escape"#))
    }

    @Test("strings must be terminated and must not hold raw control characters")
    func badStrings() {
        #expect(failure("\"abc") == JSONError(offset: 0, message: "unterminated string"))
        #expect(failure("\"a\nb\"") == JSONError(offset: 2, message: "unescaped control character in string"))
        #expect(failure(#"["\n"#) == JSONError(offset: 1, message: "unterminated string"))
        #expect(failure(#"["ab\"#) == JSONError(offset: 1, message: "unterminated string"))
    }

    @Test(
        "invalid UTF-8 is rejected",
        arguments: [
            [0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xE0, 0x80, 0xAF, 0x22],
            [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xC3, 0x22],
            [0x22, 0x80, 0x22],
        ] as [[UInt8]])
    func badUTF8(bytes: [UInt8]) {
        #expect(failure(bytes: bytes) == JSONError(offset: 1, message: "invalid UTF-8"))
    }

    @Test("structural errors name what was expected and where")
    func structure() {
        #expect(failure(#"{"a":1,"b":2 "c":3}"#) == JSONError(offset: 13, message: "expected ',' or '}'"))
        #expect(failure(#"{"a":1,}"#) == JSONError(offset: 7, message: "expected a string key"))
        #expect(failure("[1,]") == JSONError(offset: 3, message: "expected a value"))
        #expect(failure("[1 2]") == JSONError(offset: 3, message: "expected ',' or ']'"))
        #expect(failure(#"{"a" 1}"#) == JSONError(offset: 5, message: "expected ':'"))
        #expect(failure("{a:1}") == JSONError(offset: 1, message: "expected a string key"))
        #expect(failure("") == JSONError(offset: 0, message: "unexpected end of input"))
        #expect(failure("   ") == JSONError(offset: 3, message: "unexpected end of input"))
        #expect(failure("[1") == JSONError(offset: 2, message: "unexpected end of input, expected ',' or ']'"))
        #expect(failure(#"{"a":1"#) == JSONError(offset: 6, message: "unexpected end of input, expected ',' or '}'"))
        #expect(failure("{} {}") == JSONError(offset: 3, message: "unexpected data after the JSON value"))
        #expect(failure("// x\n{}") == JSONError(offset: 0, message: "expected a value"))
        #expect(failure("tru") == JSONError(offset: 0, message: "invalid literal, expected 'true'"))
        #expect(failure("nul1") == JSONError(offset: 0, message: "invalid literal, expected 'null'"))
        #expect(failure("'a'") == JSONError(offset: 0, message: "expected a value"))
    }

    @Test("the error description reads 'message at byte N'")
    func errorDescription() {
        #expect(failure(#"{"aps":{}  "x":1}"#)?.description == "expected ',' or '}' at byte 11")
    }

    @Test("duplicate keys are rejected, in small and large objects")
    func duplicates() {
        #expect(failure(#"{"a":1,"b":2,"a":3}"#) == JSONError(offset: 13, message: "duplicate key \"a\""))
        let many = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let text = "{\(many),\"k3\":0}"
        #expect(failure(text)?.message == "duplicate key \"k3\"")
        #expect((try? parse("{\(many)}"))?.objectMembers?.count == 40)
        // The same key in different objects is fine.
        #expect((try? parse(#"{"a":{"a":1}}"#)) != nil)
    }

    @Test("nesting is limited by maxDepth")
    func depth() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try parse(ok) != .null)
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(failure(deep) == JSONError(offset: 64, message: "nesting deeper than 64 levels"))
        #expect(
            failure(#"{"a":{"b":[]}}"#, maxDepth: 2) == JSONError(offset: 10, message: "nesting deeper than 2 levels"))
        // Siblings don't add up: depth is nesting, not count.
        #expect(try parse("[[],[],[[]]]", maxDepth: 3) != .null)
    }

    @Test("non-contiguous collections parse too")
    func nonContiguous() throws {
        let bytes = Array(#"{"x":[1]}"#.utf8)
        #expect(try JSONParser.parse(bytes.lazy.map { $0 }) == .object([("x", .array([.number("1")]))]))
    }
}

@Suite("JSON parser: the tree's size")
struct JSONParserBoundsTests {
    @Test("a document of more values than the limit is refused, naming it; the limit itself parses")
    func valueLimit() throws {
        let four = Array("[1,[2],{\"a\":3}]".utf8)  // the array, 1, [2], 2, {…}, 3: six values
        #expect(throws: JSONError.self) { try JSONParser.parse(four, maxValues: 5) }
        #expect(
            try JSONParser.parse(four, maxValues: 6)
                == .array([.number("1"), .array([.number("2")]), .object([("a", .number("3"))])]))
        do {
            _ = try JSONParser.parse(Array(("[" + String(repeating: "1,", count: 2_000_000) + "1]").utf8))
            Issue.record("two million values parsed")
        } catch {
            #expect(error.message == "more than 1000000 values")
        }
    }

    @Test("a value is held inline, not boxed: 17 bytes, whatever its case")
    func valueIsInline() {
        #expect(MemoryLayout<JSONValue>.size <= 17)
    }
}

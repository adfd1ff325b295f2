// Fuzzes XMLWriter.escape on any string (the input's bytes, invalid UTF-8 repaired).
//
// Invariants: the escaped text has no `<`, every `&` starts one of the entities or character
// references the writer uses, no character XML 1.0 forbids remains, and un-escaping gives the input
// with those characters replaced by U+FFFD.
import FuzzSupport
import PushAWSQuery

@_cdecl("xml_writer_main")
func xmlWriterMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

private let entities: [(String, Unicode.Scalar)] = [
    ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&#9;", "\t"),
    ("&#10;", "\n"), ("&#13;", "\r"),
]

private func isXMLChar(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x09, 0x0A, 0x0D: true
    case 0x00..<0x20, 0xFFFE, 0xFFFF: false
    default: true
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    var out: [UInt8] = []
    XMLWriter.escape(text, into: &out)
    fuzzCheck(!out.contains(UInt8(ascii: "<")), "a raw <")
    let escaped = String(decoding: out, as: UTF8.self)
    fuzzCheck(Array(escaped.utf8) == out, "the output is not UTF-8")

    var unescaped = String.UnicodeScalarView()
    let scalars = Array(escaped.unicodeScalars)
    var index = 0
    while index < scalars.count {
        let scalar = scalars[index]
        fuzzCheck(isXMLChar(scalar) && scalar != "\t" && scalar != "\n" && scalar != "\r", "raw U+\(scalar.value)")
        guard scalar == "&" else {
            unescaped.append(scalar)
            index += 1
            continue
        }
        // By scalars: a combining mark after ";" would make a String comparison see another character.
        let rest = scalars[index...]
        guard let (entity, replacement) = entities.first(where: { rest.starts(with: $0.0.unicodeScalars) }) else {
            fuzzCheck(false, "a raw & at \(index)")
            return 0
        }
        unescaped.append(replacement)
        index += entity.unicodeScalars.count
    }
    var expected = String.UnicodeScalarView()
    for scalar in text.unicodeScalars { expected.append(isXMLChar(scalar) ? scalar : "\u{FFFD}") }
    fuzzCheck(String(unescaped).unicodeScalars.elementsEqual(expected), "un-escaping does not give the input back")
    return 0
}

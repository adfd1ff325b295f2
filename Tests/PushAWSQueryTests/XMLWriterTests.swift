import PushAWSQuery
import Testing

@Suite("XML answers")
struct XMLWriterTests {
    private static func escaped(_ text: String) -> String {
        var out: [UInt8] = []
        XMLWriter.escape(text, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test("a Publish answer as SNS writes it")
    func publishResponse() {
        var writer = XMLWriter()
        writer.open("PublishResponse", namespace: "https://sns.amazonaws.com/doc/2010-03-31/")
        writer.open("PublishResult")
        writer.element("MessageId", "94f20ce6-13c5-43a0-9a9e-ca52d816e90b")
        writer.close("PublishResult")
        writer.open("ResponseMetadata")
        writer.element("RequestId", "f187a3c1-376f-11df-8963-01868b7c937a")
        writer.close("ResponseMetadata")
        writer.close("PublishResponse")
        #expect(
            String(decoding: writer.bytes, as: UTF8.self)
                == "<PublishResponse xmlns=\"https://sns.amazonaws.com/doc/2010-03-31/\"><PublishResult>"
                + "<MessageId>94f20ce6-13c5-43a0-9a9e-ca52d816e90b</MessageId></PublishResult><ResponseMetadata>"
                + "<RequestId>f187a3c1-376f-11df-8963-01868b7c937a</RequestId></ResponseMetadata></PublishResponse>")
    }

    @Test("markup characters become entities, tab and line breaks character references")
    func markup() {
        #expect(Self.escaped("a<b>&\"c\"'d'") == "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;")
        #expect(Self.escaped("x\ty\nz\r") == "x&#9;y&#10;z&#13;")
        #expect(Self.escaped("]]> &amp;") == "]]&gt; &amp;amp;")
        #expect(Self.escaped("wörld ✓ 🎉") == "wörld ✓ 🎉")
        #expect(Self.escaped("") == "")
    }

    @Test("characters XML 1.0 cannot carry become U+FFFD")
    func invalidCharacters() {
        #expect(Self.escaped("a\u{0}b\u{1}c\u{1F}d") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}d")
        #expect(Self.escaped("\u{FFFE}\u{FFFF}\u{FFFD}") == "\u{FFFD}\u{FFFD}\u{FFFD}")
        #expect(Self.escaped("\u{7F}\u{85}\u{10FFFF}") == "\u{7F}\u{85}\u{10FFFF}")
    }

    @Test("element text and the namespace are escaped")
    func escapedInElements() {
        var writer = XMLWriter()
        writer.open("Error", namespace: "urn:\"x\"")
        writer.element("Message", "<script>alert(1)</script>")
        writer.close("Error")
        #expect(
            String(decoding: writer.bytes, as: UTF8.self)
                == "<Error xmlns=\"urn:&quot;x&quot;\"><Message>&lt;script&gt;alert(1)&lt;/script&gt;</Message></Error>"
        )
    }
}

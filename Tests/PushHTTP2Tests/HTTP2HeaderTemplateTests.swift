import PushHTTP2
import Testing

@Suite("HTTP2HeaderTemplate")
struct HTTP2HeaderTemplateTests {
    @Test("a template built field by field holds the fields, in order, with their indexing")
    func builder() {
        var fields = HTTP2HeaderTemplate.Builder(capacity: 4, fields: 1)  // grows past both
        fields.add(":method", "POST")
        fields.add(":path", "", indexable: false)
        fields.add("apns-topic", "com.example.ünïcode")
        fields.add(name: Array("x-bytes".utf8), value: [0x41, 0x42])
        #expect(fields.count == 4)
        let headers = HTTP2HeaderTemplate(fields).headers
        #expect(
            headers.map(\.description) == [
                ":method: POST", ":path: ", "apns-topic: com.example.ünïcode", "x-bytes: AB",
            ])
        #expect(headers.map(\.indexable) == [true, false, true, true])
    }

    @Test("a template from a header list gives back that list")
    func fromHeaders() {
        let list = [
            HTTP2Header(":status", "200"),
            HTTP2Header(name: Array("authorization".utf8), value: Array("bearer x".utf8), indexable: false),
        ]
        #expect(HTTP2HeaderTemplate(list).headers == list)
    }

    @Test("a request submitted from a built template reaches the server with the replaced value")
    func submits() throws {
        let pair = try Pair()
        var fields = HTTP2HeaderTemplate.Builder()
        fields.add(":method", "POST")
        fields.add(":scheme", "http")
        fields.add(":authority", "example")
        fields.add(":path", "", indexable: false)
        fields.add("content-type", "application/grpc")
        let template = HTTP2HeaderTemplate(fields)
        let path = Array("/svc/Method".utf8)
        let id = try path.withUnsafeBytes { bytes in
            try pair.client.submitRequest(template: template, replacing: (3, bytes), body: [1, 2, 3])
        }
        try pair.interact()
        let headers = try #require(pair.serverEvents.headerBlocks(on: id).first)
        #expect(value(of: ":path", in: headers) == "/svc/Method")
        #expect(value(of: "content-type", in: headers) == "application/grpc")
        #expect(pair.serverEvents.bodies[id] == [1, 2, 3])
    }

    @Test("names are sent in lower case (nghttp2 is told not to copy, so not to lower-case, them)")
    func lowerCasesNames() throws {
        var fields = HTTP2HeaderTemplate.Builder()
        fields.add(":method", "POST")
        fields.add(":scheme", "http")
        fields.add(":authority", "example")
        fields.add(":path", "", indexable: false)
        fields.add(name: Array("X-Trace-ID".utf8), value: Array("Abc".utf8))
        let template = HTTP2HeaderTemplate(fields)
        #expect(value(of: "x-trace-id", in: template.headers) == "Abc")
        let pair = try Pair()
        let path = Array("/svc/Method".utf8)
        let id = try path.withUnsafeBytes {
            try pair.client.submitRequest(template: template, replacing: (3, $0), body: [])
        }
        try pair.interact()
        // An upper-case name would be a malformed request, reset by the server's nghttp2.
        let headers = try #require(pair.serverEvents.headerBlocks(on: id).first)
        #expect(value(of: "x-trace-id", in: headers) == "Abc")
    }

    @Test("a template dropped right after submitting is still sent whole: its stream keeps it until packed")
    func outlivesItsSubmitter() throws {
        let pair = try Pair()
        pair.serverEvents.onEndStream = { session, streamID in
            // The response's templates are gone too before nghttp2 packs them.
            try session.sendResponse(
                streamID: streamID, headers: Self.template([(":status", "200"), ("content-type", "application/grpc")]),
                body: [9], trailers: Self.template([("grpc-status", "0"), ("grpc-message", "fine")]))
        }
        var ids: [Int32] = []
        for index in 0..<3 {
            // The template and the replaced value exist only in this iteration.
            let template = Self.template([
                (":method", "POST"), (":scheme", "http"), (":authority", "example"), (":path", ""),
                ("apns-topic", "com.example.\(index)"),
            ])
            let path = Array("/3/device/\(index)".utf8)
            ids.append(
                try path.withUnsafeBytes {
                    try pair.client.submitRequest(template: template, replacing: (3, $0), body: [1])
                })
        }
        // Whatever the freed memory held is overwritten before the frames are packed.
        for _ in 0..<64 { _ = HTTP2HeaderTemplate([HTTP2Header("x-filler", String(repeating: "z", count: 64))]) }
        try pair.interact()
        for (index, id) in ids.enumerated() {
            let request = try #require(pair.serverEvents.headerBlocks(on: id).first)
            #expect(value(of: ":path", in: request) == "/3/device/\(index)")
            #expect(value(of: "apns-topic", in: request) == "com.example.\(index)")
            let answer = pair.clientEvents.headerBlocks(on: id)
            #expect(answer.count == 2)
            #expect(value(of: "content-type", in: answer.first ?? []) == "application/grpc")
            #expect(value(of: "grpc-message", in: answer.last ?? []) == "fine")
            #expect(pair.clientEvents.bodies[id] == [9])
        }
    }

    private static func template(_ fields: [(String, String)]) -> HTTP2HeaderTemplate {
        HTTP2HeaderTemplate(fields.map { HTTP2Header($0.0, $0.1) })
    }
}

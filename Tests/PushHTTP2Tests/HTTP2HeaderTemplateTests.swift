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
}

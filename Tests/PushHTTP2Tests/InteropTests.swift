import CNGHTTP2
import PushHTTP2
import Testing

/// A bare nghttp2 client session driven directly through the C API: an independent peer for
/// the wrapper's server role (it shares only libnghttp2, none of PushHTTP2's code).
private final class RawNghttp2Client {
    let session: OpaquePointer
    var responseHeaders: [(String, String)] = []
    var responseBody: [UInt8] = []
    var closeCode: UInt32?

    init() {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, _, name, nameLength, value, valueLength, _, userData in
            let client = Unmanaged<RawNghttp2Client>.fromOpaque(userData!).takeUnretainedValue()
            client.responseHeaders.append(
                (
                    String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self),
                    String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
                ))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, _, data, length, userData in
            let client = Unmanaged<RawNghttp2Client>.fromOpaque(userData!).takeUnretainedValue()
            client.responseBody.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, _, errorCode, userData in
            let client = Unmanaged<RawNghttp2Client>.fromOpaque(userData!).takeUnretainedValue()
            client.closeCode = errorCode
            return 0
        }
        var created: OpaquePointer?
        nghttp2_session_client_new(&created, callbacks, nil)
        session = created!
        nghttp2_session_set_user_data(session, Unmanaged.passUnretained(self).toOpaque())
        nghttp2_submit_settings(session, 0, nil, 0)
    }

    deinit { nghttp2_session_del(session) }

    func submitGet(path: String) -> Int32 {
        let fields = [(":method", "GET"), (":scheme", "http"), (":authority", "interop.test"), (":path", path)]
        // nghttp2 copies name/value at submit time, so the temporary C strings may die after.
        func submit(_ index: Int, _ nvs: inout [nghttp2_nv]) -> Int32 {
            if index == fields.count { return nghttp2_submit_request(session, nil, nvs, nvs.count, nil, nil) }
            return fields[index].0.withCString { name in
                fields[index].1.withCString { value in
                    nvs.append(
                        nghttp2_nv(
                            name: UnsafeMutableRawPointer(mutating: name).assumingMemoryBound(to: UInt8.self),
                            value: UnsafeMutableRawPointer(mutating: value).assumingMemoryBound(to: UInt8.self),
                            namelen: fields[index].0.utf8.count, valuelen: fields[index].1.utf8.count, flags: 0))
                    return submit(index + 1, &nvs)
                }
            }
        }
        var nvs: [nghttp2_nv] = []
        return submit(0, &nvs)
    }

    func drain() -> [UInt8] {
        var out: [UInt8] = []
        while true {
            var chunk: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(session, &chunk)
            guard n > 0, let chunk else { return out }
            out.append(contentsOf: UnsafeBufferPointer(start: chunk, count: n))
        }
    }

    func receive(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
    }
}

/// A bare nghttp2 server session that answers every request with a headers-only 204 carrying
/// the request's :path back: an independent peer for the wrapper's client role.
private final class RawNghttp2Server {
    let session: OpaquePointer
    var paths: [Int32: [UInt8]] = [:]

    init() {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, _, userData in
            let server = Unmanaged<RawNghttp2Server>.fromOpaque(userData!).takeUnretainedValue()
            if Array(UnsafeBufferPointer(start: name, count: nameLength)) == Array(":path".utf8) {
                server.paths[frame!.pointee.hd.stream_id] = Array(UnsafeBufferPointer(start: value, count: valueLength))
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { session, frame, userData in
            let server = Unmanaged<RawNghttp2Server>.fromOpaque(userData!).takeUnretainedValue()
            let hd = frame!.pointee.hd
            guard hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0, var path = server.paths[hd.stream_id] else {
                return 0
            }
            var status = Array("204".utf8)
            var statusName = Array(":status".utf8)
            var pathName = Array("x-path".utf8)
            // Copied by nghttp2 inside submit_response (no NO_COPY flags).
            return statusName.withUnsafeMutableBufferPointer { sn in
                status.withUnsafeMutableBufferPointer { sv in
                    pathName.withUnsafeMutableBufferPointer { pn in
                        path.withUnsafeMutableBufferPointer { pv in
                            let nvs = [
                                nghttp2_nv(
                                    name: sn.baseAddress, value: sv.baseAddress, namelen: sn.count, valuelen: sv.count,
                                    flags: 0),
                                nghttp2_nv(
                                    name: pn.baseAddress, value: pv.baseAddress, namelen: pn.count, valuelen: pv.count,
                                    flags: 0),
                            ]
                            return nghttp2_submit_response(session, hd.stream_id, nvs, nvs.count, nil)
                        }
                    }
                }
            }
        }
        var created: OpaquePointer?
        nghttp2_session_server_new(&created, callbacks, nil)
        session = created!
        nghttp2_session_set_user_data(session, Unmanaged.passUnretained(self).toOpaque())
        var limit = nghttp2_settings_entry(
            settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: 3)
        nghttp2_submit_settings(session, 0, &limit, 1)
    }

    deinit { nghttp2_session_del(session) }

    func drain() -> [UInt8] {
        var out: [UInt8] = []
        while true {
            var chunk: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(session, &chunk)
            guard n > 0, let chunk else { return out }
            out.append(contentsOf: UnsafeBufferPointer(start: chunk, count: n))
        }
    }

    func receive(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
    }
}

@Suite("HTTP2Session against a bare nghttp2 peer")
struct InteropTests {
    @Test("a raw nghttp2 client gets a response from the server role")
    func rawClientToServer() throws {
        let raw = RawNghttp2Client()
        let recorder = Recorder()
        let server = try HTTP2Session(role: .server, settings: .serverDefaults, delegate: recorder)
        let body = (0..<50_000).map { UInt8(truncatingIfNeeded: $0) }
        recorder.onEndStream = { session, id in
            try session.sendResponseHeaders(
                streamID: id,
                headers: [
                    HTTP2Header(":status", "200"),
                    HTTP2Header(
                        "x-path", recorder.headerBlocks(on: id).first.flatMap { value(of: ":path", in: $0) } ?? ""),
                ],
                endStream: false)
            try session.sendData(streamID: id, body, endStream: true)
        }
        let id = raw.submitGet(path: "/interop")
        #expect(id == 1)

        for _ in 0..<100 {
            let toServer = raw.drain()
            var toClient: [UInt8] = []
            if !toServer.isEmpty { try server.receive(toServer) }
            try server.drainOutput(into: &toClient)
            if toServer.isEmpty && toClient.isEmpty { break }
            #expect(raw.receive(toClient) == toClient.count)
        }

        #expect(recorder.hookErrors.isEmpty)
        #expect(raw.responseHeaders.first { $0.0 == ":status" }?.1 == "200")
        #expect(raw.responseHeaders.first { $0.0 == "x-path" }?.1 == "/interop")
        #expect(raw.responseBody == body)
        #expect(raw.closeCode == 0)
        #expect(recorder.closeCode(of: id) == .noError)
    }

    @Test("the client role talks to a raw nghttp2 server and honours its stream limit of 3")
    func clientToRawServer() throws {
        let raw = RawNghttp2Server()
        let recorder = Recorder()
        let client = try HTTP2Session(role: .client, settings: .clientDefaults, delegate: recorder)
        func pump() throws {
            for _ in 0..<100 {
                var toServer: [UInt8] = []
                try client.drainOutput(into: &toServer)
                if !toServer.isEmpty { #expect(raw.receive(toServer) == toServer.count) }
                let toClient = raw.drain()
                if toServer.isEmpty && toClient.isEmpty { return }
                if !toClient.isEmpty { try client.receive(toClient) }
            }
        }
        try pump()
        #expect(client.remoteMaxConcurrentStreams == 3)
        let ids = try (0..<10).map { i in
            try client.submitRequest(headers: requestHeaders(path: "/p/\(i)"), body: Array("x".utf8))
        }
        try pump()
        // nghttp2's server refuses streams beyond its advertised limit (REFUSED_STREAM, or a
        // connection error once the limit is acknowledged), so every stream closing with
        // NO_ERROR shows the client held the
        // excess requests back rather than sending all ten at once.
        for (i, id) in ids.enumerated() {
            let headers = recorder.headerBlocks(on: id).first ?? []
            #expect(value(of: ":status", in: headers) == "204")
            #expect(value(of: "x-path", in: headers) == "/p/\(i)")
            #expect(recorder.closeCode(of: id) == .noError)
        }
        #expect(client.openStreamCount == 0)
    }
}

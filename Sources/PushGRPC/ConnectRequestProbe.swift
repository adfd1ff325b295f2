public import PushCore

/// What the server makes of one Connect request, without a method or I/O: its head read
/// (``ConnectRequestHead``) and its body decoded (``ConnectRequestBody``) as a call of a method
/// that takes JSON would have it, JSON only parsed. For the fuzz target of the HTTP/1.1 door
/// (Fuzz/Sources/connect-http1), which feeds it what ``PushHTTP1/HTTP1ServerSession`` reads.
public enum ConnectRequestProbe {
    /// The request message (binary protobuf or the JSON text), or the error and its HTTP status.
    public struct Outcome: Sendable {
        public let httpStatus: Int
        public let message: [UInt8]?
        public let error: GRPCStatus?
    }

    /// - Parameter budget: reserved from while gzip inflates; everything reserved is given back.
    public static func probe(
        method: String, target: String, headers: [(name: String, value: String)], body: [UInt8], bodyLength: Int,
        maxMessageSize: Int, budget: GRPCRequestBudget
    ) -> Outcome {
        let head: ConnectRequestHead
        do throws(ConnectRequestHead.Refusal) {
            head = try ConnectRequestHead(method: method, path: target, headers: headers)
        } catch {
            return Outcome(httpStatus: error.httpStatus, message: nil, error: error.status)
        }
        let json = GRPCJSONTranscoding(
            request: { bytes throws(GRPCStatus) in
                do throws(JSONError) {
                    _ = try JSONParser.parse(bytes)
                } catch {
                    throw GRPCStatus(.invalidArgument, "\(error)")
                }
                return bytes
            },
            response: { bytes throws(GRPCStatus) in bytes })
        var reserved = 0
        defer { budget.release(reserved) }
        do throws(GRPCStatus) {
            let message = try ConnectRequestBody.decode(
                body, bodyLength: bodyLength, head: head, maxMessageSize: maxMessageSize, json: json, budget: budget,
                reserved: &reserved)
            return Outcome(httpStatus: 200, message: message, error: nil)
        } catch {
            return Outcome(httpStatus: ConnectProtocol.httpStatus(error.code), message: nil, error: error)
        }
    }
}

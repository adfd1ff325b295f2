// Fuzzes GRPCMessageDeframer: the input's first byte picks the size limit, the next two seed the
// sizes of the chunks the rest is appended in (DATA frames split messages anywhere).
//
// Invariants: no crash; no message over the limit; chunked input gives the same messages and the
// same outcome as the whole input appended at once; every byte is accounted for (prefixes + bodies +
// buffered); an error is sticky.
import FuzzSupport
import PushCore

@_cdecl("grpc_deframer_main")
func grpcDeframerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

enum Outcome: Equatable {
    case drained(buffered: Int)
    case failed(GRPCStatus)
}

/// Appends `chunks` one by one, draining after each; returns the messages and how it ended.
func deframe(_ chunks: [ArraySlice<UInt8>], maxMessageSize: Int) -> ([GRPCMessage], Outcome) {
    var deframer = GRPCMessageDeframer(maxMessageSize: maxMessageSize)
    var messages: [GRPCMessage] = []
    for chunk in chunks {
        chunk.withUnsafeBytes { deframer.append($0) }
        do throws(GRPCStatus) {
            while true {
                // What a server reserves before the body comes must be what then arrives.
                let pending = deframer.pendingMessageSize
                guard let message = try deframer.next() else { break }
                fuzzCheck(
                    pending == nil || pending == GRPCMessageFramer.prefixSize + message.bytes.count,
                    "pendingMessageSize \(String(describing: pending)) for a message of \(message.bytes.count) bytes")
                fuzzCheck(
                    message.bytes.count <= maxMessageSize,
                    "message of \(message.bytes.count) bytes over the limit \(maxMessageSize)")
                messages.append(message)
            }
        } catch {
            // Sticky: the same error again, and input after it is dropped.
            [0, 0, 0, 0, 0, 1, 2].withUnsafeBytes { deframer.append($0) }
            do throws(GRPCStatus) {
                _ = try deframer.next()
                fuzzCheck(false, "next() succeeded after an error")
            } catch let again {
                fuzzCheck(again == error, "a different error after an error: \(again) vs \(error)")
            }
            return (messages, .failed(error))
        }
    }
    fuzzCheck(deframer.hasPartialMessage == (deframer.bufferedByteCount > 0), "hasPartialMessage disagrees")
    return (messages, .drained(buffered: deframer.bufferedByteCount))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let limits = [0, 1, 5, 16, 64, 255, 4096, 1 << 20, Int(Int32.max), Int.max]
    let limitByte = input.byte()
    let maxMessageSize = limitByte < 128 ? Int(limitByte) : limits[Int(limitByte) % limits.count]
    var seed = UInt32(input.byte()) << 8 | UInt32(input.byte())
    let stream = input.rest()

    // The same stream in random-sized chunks (1...64 bytes, some empty).
    var chunks: [ArraySlice<UInt8>] = []
    var at = stream.startIndex
    while at < stream.endIndex {
        seed = seed &* 1_103_515_245 &+ 12_345
        let size = Int((seed >> 16) % 65)
        let end = min(stream.endIndex, at + size)
        chunks.append(stream[at..<end])
        at = end
    }

    let (whole, wholeOutcome) = deframe([stream], maxMessageSize: maxMessageSize)
    let (chunked, chunkedOutcome) = deframe(chunks, maxMessageSize: maxMessageSize)
    fuzzCheck(whole == chunked, "chunked input gave other messages")
    fuzzCheck(wholeOutcome == chunkedOutcome, "chunked input ended otherwise: \(chunkedOutcome) vs \(wholeOutcome)")
    if case .drained(let buffered) = wholeOutcome {
        let consumed = whole.reduce(0) { $0 + GRPCMessageFramer.prefixSize + $1.bytes.count }
        fuzzCheck(consumed + buffered == stream.count, "\(consumed) + \(buffered) bytes != \(stream.count)")
        // Framing the messages again gives back the consumed bytes.
        var framed: [UInt8] = []
        for message in whole { GRPCMessageFramer.append(message.bytes, compressed: message.compressed, to: &framed) }
        fuzzCheck(framed.elementsEqual(stream.prefix(consumed)), "re-framed messages differ from the input")
    }
    return 0
}

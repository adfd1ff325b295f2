import PushCore
import Testing

@testable import PushGRPC

/// Which requests' cancel actions ran (they run on the test's thread).
private final class CancelLog: @unchecked Sendable {
    var indices: [Int] = []
    func add(_ index: Int) { indices.append(index) }
}

@Suite("GRPCOrderedReplies: an ordered stream's window and answers")
struct GRPCOrderedRepliesTests {
    /// Every action until there are none, as short strings.
    func drain(_ replies: inout GRPCOrderedReplies) -> [String] {
        var out: [String] = []
        while let action = replies.nextAction() {
            switch action {
            case .dispatch(let index, let request, let reserved): out.append("run \(index) \(request) \(reserved)")
            case .send(let message): out.append("send \(message)")
            case .finish(let status): out.append("finish \(status.code)")
            }
        }
        return out
    }

    @Test("at most `window` run; answers go out in request order, each as soon as those before it are out")
    func windowAndOrder() {
        var replies = GRPCOrderedReplies(window: 2)
        for n in 0..<3 { replies.received([UInt8(n)], reserved: 10) }
        #expect(drain(&replies) == ["run 0 [0] 10", "run 1 [1] 10"])
        #expect(replies.isBacklogged)
        replies.answered(1, .message([11]))
        #expect(drain(&replies) == [], "1 waits for 0, and its slot stays taken")
        replies.answered(0, .message([10]))
        #expect(drain(&replies) == ["send [10]", "send [11]", "run 2 [2] 10"])
        #expect(!replies.isBacklogged)
        replies.clientHalfClosed()
        #expect(drain(&replies) == [])
        replies.answered(2, .message([12]))
        #expect(drain(&replies) == ["send [12]", "finish ok"])
        #expect(replies.nextAction() == nil)
    }

    @Test("a failure ends the call after the answers before it; the rest are cancelled, waiting ones released")
    func failure() {
        var replies = GRPCOrderedReplies(window: 3)
        for n in 0..<4 { replies.received([UInt8(n)], reserved: 5) }
        _ = drain(&replies)
        let cancelled = CancelLog()
        for index in 0..<3 { #expect(!replies.setCancel(index) { cancelled.add(index) }) }
        replies.answered(1, .failure(GRPCStatus(.invalidArgument, "bad")))
        #expect(drain(&replies) == [])
        replies.answered(0, .message([1]))
        #expect(drain(&replies) == ["send [1]", "finish invalidArgument"])
        let (cancels, reserved) = replies.end()
        for cancel in cancels { cancel() }
        #expect(cancelled.indices == [2], "1 failed, 0 was answered: only 2 was still running")
        #expect(reserved == 5, "request 3 never ran")
        #expect(replies.setCancel(2) {}, "registered after the end: run now")
        #expect(!replies.setCancel(0) {}, "0 was answered out")
    }

    @Test("nothing runs while the client's unread answers are over the limit")
    func outputBlocked() {
        var replies = GRPCOrderedReplies(window: 4)
        replies.received([0], reserved: 0)
        replies.outputBlocked = true
        #expect(drain(&replies) == [])
        replies.outputBlocked = false
        #expect(drain(&replies) == ["run 0 [0] 0"])
    }

    @Test("a half-close with nothing pending ends the call OK")
    func emptyStream() {
        var replies = GRPCOrderedReplies(window: 16)
        replies.clientHalfClosed()
        #expect(drain(&replies) == ["finish ok"])
    }
}

import Testing

@testable import PushCore

@Suite("GRPCStatus")
struct GRPCStatusTests {
    @Test("codes have the numeric values and names of the gRPC spec")
    func codes() {
        #expect(GRPCStatusCode.allCases.count == 17)
        #expect(GRPCStatusCode.allCases.map(\.rawValue) == Array(0...16))
        #expect(GRPCStatusCode.invalidArgument.name == "INVALID_ARGUMENT")
        #expect(GRPCStatusCode.internalError.name == "INTERNAL")
        #expect(GRPCStatusCode.unauthenticated.rawValue == 16)
        #expect(GRPCStatusCode(rawValue: 8) == .resourceExhausted)
    }

    @Test("factories set the matching code and message")
    func factories() {
        let pairs: [(GRPCStatus, GRPCStatusCode)] = [
            (.cancelled("m"), .cancelled), (.unknown("m"), .unknown), (.invalidArgument("m"), .invalidArgument),
            (.deadlineExceeded("m"), .deadlineExceeded), (.notFound("m"), .notFound),
            (.alreadyExists("m"), .alreadyExists), (.permissionDenied("m"), .permissionDenied),
            (.resourceExhausted("m"), .resourceExhausted), (.failedPrecondition("m"), .failedPrecondition),
            (.aborted("m"), .aborted), (.outOfRange("m"), .outOfRange), (.unimplemented("m"), .unimplemented),
            (.internalError("m"), .internalError), (.unavailable("m"), .unavailable),
            (.dataLoss("m"), .dataLoss), (.unauthenticated("m"), .unauthenticated),
        ]
        for (status, code) in pairs {
            #expect(status == GRPCStatus(code, "m"))
        }
        #expect(GRPCStatus.ok.code == .ok)
        #expect(GRPCStatus.notFound().message == "")
    }

    @Test("description is the code name and the message")
    func description() {
        #expect(GRPCStatus.invalidArgument("bad token").description == "INVALID_ARGUMENT: bad token")
        #expect(GRPCStatus.unimplemented().description == "UNIMPLEMENTED")
    }
}

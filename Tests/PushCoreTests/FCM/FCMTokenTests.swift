import Testing

@testable import PushCore

@Suite("FCM registration tokens and TTL durations")
struct FCMTokenTests {
    static let real = "dGVzdC10b2tlbg:APA91bH-xQ_r3Xv.example-1234567890abcdefABCDEF_"

    func error(_ token: String) -> ValidationError? {
        do throws(ValidationError) {
            try FCMToken.validate(token, field: "notifications[2].tokens[1]")
            return nil
        } catch {
            return error
        }
    }

    @Test("a token of the whole alphabet is accepted")
    func accepted() {
        #expect(error(Self.real) == nil)
        #expect(error("a") == nil)
        #expect(error(String(repeating: "x", count: FCMToken.maxBytes)) == nil)
        #expect(FCMToken.isValid(Self.real))
    }

    @Test("empty, too long and foreign bytes are refused, naming the field")
    func refused() {
        #expect(error("")?.field == "notifications[2].tokens[1]")
        #expect(error("")?.message.hasPrefix("must not be empty") == true)
        let long = error(String(repeating: "x", count: FCMToken.maxBytes + 1))
        #expect(long?.message.hasPrefix("is 4097 bytes") == true)
        for bad in ["ab\"cd", "ab cd", "ab/cd", "ab\\cd", "é", "ab+cd", "ab=", "tok\n"] {
            #expect(error(bad)?.message.contains("disallowed byte") == true, "\(bad)")
            #expect(!FCMToken.isValid(bad))
        }
        #expect(error("abc\"")?.message.hasPrefix("has a disallowed byte at offset 3") == true)
        #expect(error("abc\"")?.description.hasPrefix("notifications[2].tokens[1]: ") == true)
    }

    @Test("durations parse the protobuf JSON form and print it back shortest")
    func durations() throws {
        #expect(FCMDuration("3600s") == FCMDuration(seconds: 3600))
        #expect(FCMDuration("0s") == FCMDuration(seconds: 0))
        #expect(FCMDuration("10023.32s") == FCMDuration(seconds: 10023, nanos: 320_000_000))
        #expect(FCMDuration("3.000000001s") == FCMDuration(seconds: 3, nanos: 1))
        #expect(FCMDuration("10023.32s")?.description == "10023.32s")
        #expect(FCMDuration("3.000000001s")?.description == "3.000000001s")
        #expect(FCMDuration("3.500s")?.description == "3.5s")
        #expect(FCMDuration(seconds: 7).description == "7s")
        for bad in [
            "", "s", "3600", "-1s", "+1s", "1.s", ".5s", "1.0000000001s", "1e3s", "1 s", "1.5S",
            "99999999999999999999s",
        ] {
            #expect(FCMDuration(bad) == nil, "\(bad)")
        }
        #expect(FCMDuration(seconds: 1, nanos: 1).secondsRoundedUp == 2)
        #expect(FCMDuration(seconds: 1).secondsRoundedUp == 1)
        #expect(FCMDuration.maxTTL.description == "2419200s")
    }

    @Test("remaining time: the rest of the TTL, nil once past it, and 0 never past")
    func remaining() {
        let ten = FCMDuration(seconds: 10, nanos: 500)
        #expect(ten.remaining(after: 0) == ten)
        #expect(ten.remaining(after: -5) == ten)
        #expect(ten.remaining(after: 4) == FCMDuration(seconds: 6, nanos: 500))
        #expect(ten.remaining(after: 10) == FCMDuration(seconds: 0, nanos: 500))
        #expect(ten.remaining(after: 11) == nil)
        #expect(FCMDuration(seconds: 0).remaining(after: 100) == FCMDuration(seconds: 0))
    }

    @Test("fid:<FID> is an installation target: sent as the v1 message's fid, its id checked")
    func installations() throws {
        #expect(error("fid:cVh3RZ0pRlmqb8bD9T8Q4B") == nil)
        #expect(error("fid:")?.message.hasPrefix("must not be empty") == true)
        #expect(error("fid:a:b")?.message.hasSuffix(FCMToken.installationRequirement) == true)
        let prepared = try FCMMessageBuilder.prepare(
            NotificationRequest(tokens: ["fid:cVh3RZ0pRlmqb8bD9T8Q4B", Self.real], alert: .init(title: "t")),
            at: "notifications[0]", now: 1
        ).get()
        let fid = String(decoding: prepared.body(token: "fid:cVh3RZ0pRlmqb8bD9T8Q4B"), as: UTF8.self)
        #expect(fid.hasPrefix(#"{"message":{"fid":"cVh3RZ0pRlmqb8bD9T8Q4B","#))
        let token = String(decoding: prepared.body(token: Self.real), as: UTF8.self)
        #expect(token.hasPrefix(#"{"message":{"token":""# + Self.real))
    }
}

import PushCommandLine
import Testing

@Suite("Flag reader")
struct FlagReaderTests {
    @Test("--flag value and --flag=value, in order; other arguments come back as they are")
    func pairs() throws {
        var flags = FlagReader(["--port", "8080", "--host=::1", "serve", "--bogus"])
        #expect(flags.next() == "--port")
        #expect(try flags.value(for: "--port") == "8080")
        #expect(flags.next() == "--host")
        #expect(try flags.value(for: "--host") == "::1")
        #expect(flags.next() == "serve")
        #expect(flags.next() == "--bogus", "an unknown flag is the caller's to name")
        #expect(flags.next() == nil)
        #expect(flags.next() == nil)
    }

    @Test("--flag=value splits at the first =, allows an empty value, and only for --flags")
    func equalsForms() throws {
        var flags = FlagReader(["--filter=a=b", "--empty=", "-x=1", "plain=2"])
        #expect(flags.next() == "--filter")
        #expect(try flags.value(for: "--filter") == "a=b")
        #expect(flags.next() == "--empty")
        #expect(try flags.value(for: "--empty") == "")
        #expect(flags.next() == "-x=1")
        #expect(flags.next() == "plain=2")
    }

    @Test("the value of --flag=value is taken once; a flag read without its value does not keep it")
    func pendingValue() throws {
        var flags = FlagReader(["--name=first", "second", "--verbose=yes", "--port", "1"])
        #expect(flags.next() == "--name")
        #expect(try flags.value(for: "--name") == "first")
        #expect(try flags.value(for: "--name") == "second", "the next value comes from the next argument")
        #expect(flags.next() == "--verbose")
        #expect(flags.next() == "--port", "--verbose's unread value is dropped, not handed to --port")
        #expect(try flags.value(for: "--port") == "1")
    }

    @Test("a flag at the end without its value: the error names the flag")
    func missingValue() {
        var flags = FlagReader(["--stats-file"])
        #expect(flags.next() == "--stats-file")
        #expect(throws: CommandLineError.self) { try flags.value(for: "--stats-file") }
        do {
            _ = try flags.value(for: "--stats-file")
            Issue.record("no error for a missing value")
        } catch {
            #expect((error as? CommandLineError)?.description == "--stats-file: needs a value")
        }
    }

    @Test("a flag followed by another flag has no value; --flag=--x still gives one")
    func flagIsNotAValue() throws {
        var flags = FlagReader(["--config", "--listen", "x", "--name=--odd"])
        #expect(flags.next() == "--config")
        do {
            _ = try flags.value(for: "--config")
            Issue.record("--listen taken as a value")
        } catch {
            #expect(
                (error as? CommandLineError)?.description
                    == "--config: needs a value, not the flag --listen (write --config=VALUE for a value that starts with --)"
            )
        }
        #expect(flags.next() == "--listen")
        #expect(try flags.value(for: "--listen") == "x")
        #expect(flags.next() == "--name")
        #expect(try flags.value(for: "--name") == "--odd")
    }

    @Test("integers: the bounds are inclusive, a negative value may follow its flag")
    func integers() throws {
        var flags = FlagReader(["1", "256", "-5", "0"])
        #expect(try flags.int(for: "--loops", range: 1...256) == 1)
        #expect(try flags.int(for: "--loops", range: 1...256) == 256)
        #expect(try flags.int(for: "--offset", range: -10...10) == -5)
        #expect(try flags.int(for: "--delay-ms", range: 0...600_000) == 0)
    }

    @Test(
        "integers out of range or not integers: the error names the flag and the range",
        arguments: ["0", "257", "-1", "abc", "1.5", "", " 3", "99999999999999999999"])
    func badIntegers(text: String) {
        var flags = FlagReader([text])
        do {
            let number = try flags.int(for: "--loops", range: 1...256)
            Issue.record("\(text.debugDescription) read as \(number)")
        } catch {
            #expect((error as? CommandLineError)?.description == "--loops: must be an integer between 1 and 256")
        }
    }

    @Test("an integer flag without its value says it needs one")
    func missingInteger() {
        var flags = FlagReader(["--loops"])
        _ = flags.next()
        do {
            _ = try flags.int(for: "--loops", range: 1...256)
            Issue.record("no error for a missing value")
        } catch {
            #expect((error as? CommandLineError)?.description == "--loops: needs a value")
        }
    }

    @Test("HOST:PORT and [v6]:PORT, the port from 1 to 65535")
    func hostPort() throws {
        var flags = FlagReader(["127.0.0.1:50051", "[::1]:9000", "localhost:1", "example.com:65535"])
        #expect(try flags.hostPort(for: "--listen", example: "x") == ("127.0.0.1", 50051))
        #expect(try flags.hostPort(for: "--listen", example: "x") == ("::1", 9000))
        #expect(try flags.hostPort(for: "--listen", example: "x") == ("localhost", 1))
        #expect(try flags.hostPort(for: "--listen", example: "x") == ("example.com", 65535))
    }

    @Test(
        "not HOST:PORT: the error names the flag and shows the example",
        arguments: ["localhost", "localhost:", "localhost:0", "localhost:65536", "localhost:http", "[::1]", ""])
    func badHostPort(text: String) {
        var flags = FlagReader([text])
        do {
            let (host, port) = try flags.hostPort(for: "--listen", example: "127.0.0.1:2197")
            Issue.record("\(text.debugDescription) read as \(host) port \(port)")
        } catch {
            #expect((error as? CommandLineError)?.description == "--listen: expected HOST:PORT, e.g. 127.0.0.1:2197")
        }
    }

    @Test("trimmingBrackets: only a bracketed host loses its brackets")
    func brackets() {
        #expect("[::1]".trimmingBrackets == "::1")
        #expect("[2001:db8::1]".trimmingBrackets == "2001:db8::1")
        #expect("::1".trimmingBrackets == "::1")
        #expect("[::1".trimmingBrackets == "[::1")
        #expect("localhost".trimmingBrackets == "localhost")
        #expect("".trimmingBrackets == "")
    }

    @Test("a CommandLineError prints as its message (what the commands show after their name)")
    func errorDescription() {
        let error = CommandLineError("--cert and --key go together")
        #expect(error.description == "--cert and --key go together")
        #expect("pushgate mock-apns: \(error)" == "pushgate mock-apns: --cert and --key go together")
        let thrown: any Error = error
        #expect(String(describing: thrown) == "--cert and --key go together")
    }
}

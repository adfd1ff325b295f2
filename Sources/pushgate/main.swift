import PushCommandLine
import PushPosix

// pushgate: the command line. main only dispatches; each command lives in its own file.
#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
switch arguments.first {
case nil, "-h", "--help", "help":
    print(Usage.main)
    status = arguments.isEmpty ? 2 : 0
case "version", "--version":
    print("pushgate \(Version.current)\nallocator: \(HeapTrim.allocator)")
    status = 0
case "serve":
    status = ServeCommand.run(Array(arguments.dropFirst()))
case "send":
    let sendArguments = Array(arguments.dropFirst())
    status = runBlocking { await SendCommand.run(sendArguments) }
case "bench":
    let benchArguments = Array(arguments.dropFirst())
    status = runBlocking { await BenchCommand.run(benchArguments) }
case "load-subscribers":
    let loadArguments = Array(arguments.dropFirst())
    status = runBlocking { await LoadSubscribersCommand.run(loadArguments) }
case "api-key":
    status = APIKeyCommand.run(Array(arguments.dropFirst()))
case "vapid-key":
    status = VAPIDKeyCommand.run(Array(arguments.dropFirst()))
case "mock-apns":
    status = MockAPNsCommand.run(Array(arguments.dropFirst()))
case "mock-fcm":
    status = MockFCMCommand.run(Array(arguments.dropFirst()))
case "mock-adm":
    status = MockADMCommand.run(Array(arguments.dropFirst()))
case "mock-webpush":
    status = MockWebPushCommand.run(Array(arguments.dropFirst()))
default:
    printError("pushgate: unknown command \(arguments[0].debugDescription)\n\n\(Usage.main)")
    status = 2
}
exit(status)

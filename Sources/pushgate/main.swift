import PushCommandLine
import PushPosix

// pushgate: the command line. main only dispatches; each command lives in its own file.
#if canImport(Glibc)
    import Glibc
#endif

// Not named `arguments`: a global of that name would stand in, unnoticed, for a command's own
// (a reload once re-read the whole command line through it).
let commandLine = Array(CommandLine.arguments.dropFirst())
let status: Int32
switch commandLine.first {
case nil, "-h", "--help", "help":
    print(Usage.main)
    status = commandLine.isEmpty ? 2 : 0
case "version", "--version":
    print("pushgate \(Version.current)\nallocator: \(HeapTrim.allocator)")
    status = 0
case "serve":
    status = ServeCommand.run(Array(commandLine.dropFirst()))
case "send":
    let sendArguments = Array(commandLine.dropFirst())
    status = runBlocking { await SendCommand.run(sendArguments) }
case "bench":
    let benchArguments = Array(commandLine.dropFirst())
    status = runBlocking { await BenchCommand.run(benchArguments) }
case "load-subscribers":
    let loadArguments = Array(commandLine.dropFirst())
    status = runBlocking { await LoadSubscribersCommand.run(loadArguments) }
case "import":
    let importArguments = Array(commandLine.dropFirst())
    status = runBlocking { await ImportCommand.run(importArguments) }
case "export":
    let exportArguments = Array(commandLine.dropFirst())
    status = runBlocking { await ExportCommand.run(exportArguments) }
case "api-key":
    status = APIKeyCommand.run(Array(commandLine.dropFirst()))
case "sns-credential":
    status = SNSCredentialCommand.run(Array(commandLine.dropFirst()))
case "vapid-key":
    status = VAPIDKeyCommand.run(Array(commandLine.dropFirst()))
case "mock-apns":
    status = MockAPNsCommand.run(Array(commandLine.dropFirst()))
case "mock-fcm":
    status = MockFCMCommand.run(Array(commandLine.dropFirst()))
case "mock-adm":
    status = MockADMCommand.run(Array(commandLine.dropFirst()))
case "mock-hms":
    status = MockHMSCommand.run(Array(commandLine.dropFirst()))
case "mock-webpush":
    status = MockWebPushCommand.run(Array(commandLine.dropFirst()))
default:
    printError("pushgate: unknown command \(commandLine[0].debugDescription)\n\n\(Usage.main)")
    status = 2
}
exit(status)

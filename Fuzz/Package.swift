// swift-tools-version:6.0
// libFuzzer targets for Pushgate's decoders and parsers; `make fuzz` builds and runs them:
//   swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//
// Each executable target defines `LLVMFuzzerTestOneInput`. SwiftPM links an executable with
// `--defsym main=<module>_main`, so each target also defines `<module>_main`, which hands control
// to libFuzzer's driver (`LLVMFuzzerRunDriver`, in the toolchain's libclang_rt.fuzzer).
import PackageDescription

let core: Target.Dependency = .product(name: "PushCore", package: "pushgate")
let proto: Target.Dependency = .product(name: "PushProto", package: "pushgate")
let http1: Target.Dependency = .product(name: "PushHTTP1", package: "pushgate")
let gzip: Target.Dependency = .product(name: "PushGzip", package: "pushgate")
let grpc: Target.Dependency = .product(name: "PushGRPC", package: "pushgate")
let awsQuery: Target.Dependency = .product(name: "PushAWSQuery", package: "pushgate")
let tls: Target.Dependency = .product(name: "PushTLS", package: "pushgate")

let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
    ("grpc-deframer", [core]),
    ("proto-send-request", [core, proto]),
    ("proto-reflection", [proto]),
    ("proto-json", [core, proto]),
    ("sns-message", [core]),
    ("filter-policy", [core]),
    ("json-payload", [core]),
    ("grpc-message", [core]),
    ("http1-messages", [http1]),
    ("gzip-inflate", [gzip]),
    ("connect-http1", [core, http1, grpc]),
    ("aws-query-form", [awsQuery]),
    ("sigv4-canonical", [awsQuery, tls]),
    ("xml-writer", [awsQuery]),
]

let package = Package(
    name: "pushgate-fuzz",
    dependencies: [.package(name: "pushgate", path: "..")],
    targets: [
        .target(name: "FuzzSupport", swiftSettings: [.swiftLanguageMode(.v6)])
    ]
        + fuzzTargets.map { target in
            .executableTarget(
                name: target.name, dependencies: ["FuzzSupport"] + target.dependencies,
                swiftSettings: [.swiftLanguageMode(.v6)])
        }
)

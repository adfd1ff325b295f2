import PushCommandLine
import PushPosix

/// The whole file (``FileContents``), its error as a command-line error.
func readFile(_ path: String) throws -> [UInt8] {
    do {
        return try FileContents.read(path)
    } catch {
        throw CommandLineError(error.description)
    }
}

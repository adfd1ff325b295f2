import CLinux
import Glibc

extension EventLoop {
    /// Blocks `signals` in the calling thread and every thread it creates afterwards. Call it
    /// at process start, before spawning any thread (event loops, Dispatch, the Swift runtime
    /// pool): a process-directed signal goes to any thread that does not block it, and then
    /// the default action (terminate) wins over `onSignal`.
    public static func blockSignals(_ signals: [Int32]) throws {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signo in signals { sigaddset(&mask, signo) }
        let rc = pthread_sigmask(SIG_BLOCK, &mask, nil)
        if rc != 0 { throw IOError(errno: rc, reason: "pthread_sigmask(SIG_BLOCK)") }
    }

    /// Loop thread only. Runs `work` on this loop each time `signo` arrives (SIGINT, SIGTERM,
    /// SIGHUP...), read through a signalfd. The signal is also blocked on this loop's thread;
    /// see `blockSignals` for the other threads. Several handlers for one signal run in
    /// registration order. If several loops watch the same signal, whichever reads it first
    /// gets it, so watch each signal on one loop only.
    public func onSignal(_ signo: Int32, _ work: @escaping () -> Void) throws {
        preconditionInEventLoop()
        let source: SignalSource
        if let existing = signalSource {
            source = existing
        } else {
            source = try SignalSource(loop: self)
            signalSource = source
        }
        try source.add(signo, work)
    }
}

/// A loop's signalfd and the handlers per signal number. Loop-thread only.
final class SignalSource: Selectable {
    private unowned let loop: EventLoop
    private var fd: Int32 = -1
    private var registrationID: UInt64 = 0
    private var mask = sigset_t()
    private var handlers: [Int32: [() -> Void]] = [:]

    init(loop: EventLoop) throws(IOError) {
        self.loop = loop
        sigemptyset(&mask)
    }

    func add(_ signo: Int32, _ work: @escaping () -> Void) throws(IOError) {
        if handlers[signo] == nil {
            var added = sigset_t()
            sigemptyset(&added)
            sigaddset(&added, signo)
            let rc = pthread_sigmask(SIG_BLOCK, &added, nil)
            if rc != 0 { throw IOError(errno: rc, reason: "pthread_sigmask(SIG_BLOCK)") }
            sigaddset(&mask, signo)
            // signalfd(-1, ...) creates the descriptor; signalfd(fd, ...) replaces its mask.
            let result = try syscallChecked("signalfd") {
                LinuxCalls.signalfd(fd, &mask, LinuxCalls.nonBlocking | LinuxCalls.closeOnExec)
            }
            if fd < 0 {
                fd = result
                do {
                    registrationID = try loop.register(self, fd: fd, events: LinuxCalls.epollIn)
                } catch {
                    closeDescriptor(fd)
                    fd = -1
                    throw error
                }
            }
        }
        handlers[signo, default: []].append(work)
    }

    func handleEvents(_ events: UInt32) {
        var info = [UInt8](repeating: 0, count: LinuxCalls.signalfdSiginfoSize)
        while fd >= 0 {
            let result = try? syscall("read(signalfd)") {
                info.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            }
            guard case .processed(let n)? = result, n == LinuxCalls.signalfdSiginfoSize else { return }
            let signo = Int32(bitPattern: info.withUnsafeBytes { $0.load(as: UInt32.self) })
            for work in handlers[signo] ?? [] { work() }
        }
    }

    func closeForShutdown() {
        guard fd >= 0 else { return }
        loop.deregister(id: registrationID, fd: fd)
        closeDescriptor(fd)
        fd = -1
    }
}

/// Something registered with a loop's epoll: a connection, a listener, a connect in progress,
/// the wake-up eventfd, the signalfd. The loop's table keeps it alive while registered.
/// All calls happen on the owning loop's thread.
protocol Selectable: AnyObject {
    /// The readiness bits (EPOLLIN/OUT/ERR/HUP) epoll reported.
    func handleEvents(_ events: UInt32)
    /// The loop is shutting down: release the descriptor and tell whoever is waiting.
    func closeForShutdown()
}

/// An event loop runs Swift tasks that prefer it (`Task(executorPreference: loop)`), on its own
/// thread between socket events. The gRPC server runs each call's handler this way, so a call's
/// work stays on its connection's loop (share-nothing) instead of hopping to the cooperative pool
/// and back for every await.
extension EventLoop: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = tryExecute { [self] in
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
        if !accepted {
            // The loop has stopped: the task must still run to its end (or it would never resume
            // and whatever awaits it would hang), so it goes to the global executor.
            globalConcurrentExecutor.enqueue(job)
        }
    }
}

/// An event loop runs Swift tasks that prefer it (`Task(executorPreference: loop)`), on its own
/// thread between socket events. The gRPC server runs each call's handler this way, so a call's
/// work stays on its connection's loop (share-nothing) instead of hopping to the cooperative pool
/// and back for every await.
extension EventLoop: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if inEventLoop && takesJobsAtEndOfTurn {
            // Enqueued from this loop's own thread (a continuation resumed by a socket event or a
            // task of this turn): run it before this turn's flush, so what it writes leaves in
            // this turn's write, with no eventfd write and no extra turn. Jobs enqueued while the
            // end-of-turn work runs take the task queue (next turn), so a task that keeps
            // yielding cannot hold the loop away from its sockets; once the loop is closing they
            // go to the global executor (below), as the end-of-turn work is then dropped.
            executeAtEndOfTurn { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
            return
        }
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

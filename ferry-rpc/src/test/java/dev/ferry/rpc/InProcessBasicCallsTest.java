package dev.ferry.rpc;

/** {@link BasicCallsTest} on the in-process backend: same behaviour without sockets. */
class InProcessBasicCallsTest extends BasicCallsTest {
    @Override
    BackendType backend() {
        return BackendType.IN_PROCESS;
    }
}

package dev.ferry.rpc;

/** {@link NestedAndAsyncTest} on the in-process backend: its transport threads refuse to block too. */
class InProcessNestedAndAsyncTest extends NestedAndAsyncTest {
    @Override
    BackendType backend() {
        return BackendType.IN_PROCESS;
    }
}

package dev.ferry.rpc;

import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.spi.CallInfo;
import dev.ferry.rpc.spi.CallInterceptor;
import dev.ferry.rpc.testing.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.tools.ToolProvider;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code rref.type()}: PyTorch's {@code RRef._get_type(timeout, blocking)}. */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RRefTypeTest {
    /** Questions of a value's type that worker0 sent (Ferry's own calls, seen by interceptors too). */
    private static final AtomicInteger TYPE_QUESTIONS = new AtomicInteger();
    private static volatile CountDownLatch release = new CountDownLatch(0);

    private LocalCluster cluster;

    @BeforeAll
    void start() {
        CallInterceptor counting = new CallInterceptor() {
            @Override
            public CallHeaders beforeSendRequest(CallInfo call, Object[] args, CallHeaders headers) {
                if (call.caller().id() == 0 && call.function().contains("rrefType")) {
                    TYPE_QUESTIONS.incrementAndGet();
                }
                return headers;
            }
        };
        cluster = LocalCluster.start(2, options -> options.addInterceptor(counting));
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    /** Made on the owner when the test releases it (bounded: a test that forgets fails, never hangs). */
    static String madeWhenReleased() throws InterruptedException {
        assertThat(release.await(30, TimeUnit.SECONDS)).as("released").isTrue();
        return "made";
    }

    static Object nothing() {
        return null;
    }

    static Runnable lambda() {
        return () -> { };
    }

    /** An instance of a class only the loader made here sees: the owner has it, the asker does not. */
    static Object ownerOnly(String classesDir) throws Exception {
        URLClassLoader loader = new URLClassLoader(new URL[] {Path.of(classesDir).toUri().toURL()},
                RRefTypeTest.class.getClassLoader());
        return loader.loadClass("owner.only.Widget").getConstructor().newInstance();
    }

    @Test
    void theOwnersValueClassFromAnotherWorker() {
        RRef<Counter> counter = cluster.agent(0).to(1).remote(Counter::new, 10);
        RRef<String> text = cluster.agent(0).to(1).remote(Ops::concat, "a", "b");

        assertThat(counter.type()).isEqualTo(Counter.class);
        assertThat(text.type(Duration.ofSeconds(20))).isEqualTo(String.class);
        assertThat(cluster.agent(0).to(1).remote(RRefTypeTest::nothing).type()).isEqualTo(Void.class);
    }

    @Test
    void onTheOwnerItIsTheLocalValuesClass() {
        RRef<Counter> local = cluster.agent(1).rref(new Counter(3));
        RRef<Counter> madeHere = cluster.agent(1).to(1).remote(Counter::new, 4);

        assertThat(local.type()).isEqualTo(Counter.class);
        assertThat(madeHere.typeAsync().await()).isEqualTo(Counter.class);
        assertThat(local.typeAsync()).isSameAs(local.typeAsync());
    }

    @Test
    void theFirstAnswerIsKeptAndAsyncGivesTheSameFutureEveryTime() {
        RRef<Counter> counter = cluster.agent(0).to(1).remote(Counter::new, 1);
        int before = TYPE_QUESTIONS.get();

        RpcFuture<Class<?>> first = counter.typeAsync();
        assertThat(counter.typeAsync()).isSameAs(first);
        assertThat(first.await()).isEqualTo(Counter.class);
        assertThat(counter.type()).isEqualTo(Counter.class);
        assertThat(counter.type(Duration.ofSeconds(1))).isEqualTo(Counter.class);
        assertThat(counter.typeAsync()).isSameAs(first);

        assertThat(TYPE_QUESTIONS.get() - before).as("questions sent to the owner").isEqualTo(1);
    }

    @Test
    void theOwnerAnswersOnceTheValueIsMade() {
        release = new CountDownLatch(1);
        try {
            RRef<String> slow = cluster.agent(0).to(1).remote(RRefTypeTest::madeWhenReleased);
            RpcFuture<Class<?>> pending = slow.typeAsync();

            assertThatThrownBy(() -> slow.type(Duration.ofMillis(200)))
                    .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT));
            assertThat(pending.done()).as("a wait that gave up leaves the question on its way").isFalse();
            assertThat(slow.typeAsync()).isSameAs(pending);

            release.countDown();
            assertThat(pending.await()).isEqualTo(String.class);
        } finally {
            release.countDown();
        }
    }

    @Test
    void aQuestionThatTimedOutIsAskedAgain() {
        release = new CountDownLatch(1);
        try {
            RRef<String> slow = cluster.agent(0).to(1).remote(RRefTypeTest::madeWhenReleased);
            int before = TYPE_QUESTIONS.get();

            assertThatThrownBy(() -> slow.type(Duration.ofMillis(200)))
                    .isInstanceOfSatisfying(RpcException.class, e -> assertThat(e.code()).isEqualTo(RpcException.Code.TIMEOUT));
            release.countDown();
            assertThat(slow.type(Duration.ofSeconds(20))).isEqualTo(String.class);
            assertThat(TYPE_QUESTIONS.get() - before).as("questions sent to the owner").isEqualTo(2);
        } finally {
            release.countDown();
        }
    }

    @Test
    void aFailedCreationFailsTheQuestionAsToHereDoes() {
        RRef<Integer> remote = cluster.agent(0).to(1).remote(Ops::fail, "no value");
        RRef<Integer> self = cluster.agent(0).to(0).remote(Ops::fail, "no value here");

        assertThatThrownBy(remote::type).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.REMOTE_ERROR);
            assertThat(e.remoteMessage()).isEqualTo("no value");
        });
        assertThatThrownBy(self::type).isInstanceOfSatisfying(RpcException.class, e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.REMOTE_ERROR);
            assertThat(e.remoteMessage()).isEqualTo("no value here");
        });
    }

    @Test
    void aClosedReferenceIsAClearError() {
        RRef<Counter> counter = cluster.agent(0).to(1).remote(Counter::new, 1);
        counter.toHere();
        counter.close();

        assertThatThrownBy(counter::type).isInstanceOfSatisfying(RpcException.class,
                e -> assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_RREF)).hasMessageContaining("has been deleted");
    }

    @Test
    void aClassTheAskerCannotLoadIsAClearError(@TempDir Path dir) throws Exception {
        Path source = Files.createDirectories(dir.resolve("src/owner/only")).resolve("Widget.java");
        Files.writeString(source, "package owner.only; public final class Widget { }");
        Path classes = Files.createDirectories(dir.resolve("classes"));
        assertThat(ToolProvider.getSystemJavaCompiler().run(null, null, null, "-d", classes.toString(), source.toString()))
                .as("javac's exit status").isZero();

        RRef<Object> widget = cluster.agent(0).to(1).remote(RRefTypeTest::ownerOnly, classes.toString());
        assertThatThrownBy(widget::type).isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR))
                .hasMessageContaining("on worker1 is a owner.only.Widget, a class worker0 cannot load");

        RRef<Runnable> lambda = cluster.agent(0).to(1).remote(RRefTypeTest::lambda);
        assertThatThrownBy(lambda::type).isInstanceOf(RpcException.class).hasMessageContaining("hidden class");
        assertThat(cluster.agent(1).to(1).remote(RRefTypeTest::lambda).type()).as("on the owner").isNotNull();
    }
}

package dev.ferry.rpc.internal.agent;

import dev.ferry.rpc.Ops;
import dev.ferry.rpc.RRef;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcFunction0;
import dev.ferry.rpc.RpcFunction1;
import dev.ferry.rpc.RpcFunction3;
import dev.ferry.rpc.RpcFunction4;
import dev.ferry.rpc.internal.serial.FunctionRef;
import dev.ferry.rpc.policy.app.AppOps;
import dev.ferry.rpc.spi.CallHeaders;
import dev.ferry.rpc.testing.LocalCluster;
import io.netty.util.internal.PlatformDependent;
import org.codehaus.janino.ExpressionEvaluator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.lang.invoke.MethodHandleInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The attacks of issue 23, each made by a group member against a worker with the default policy
 * (and the tests' code declared the application's): every one is refused with
 * {@code UNKNOWN_FUNCTION} naming the method and the rule, nothing of it runs, and the victim goes on.
 */
@Timeout(60)
class RemoteCodeAttacksTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static LocalCluster cluster;

    @BeforeAll
    static void start() {
        cluster = LocalCluster.start(2);
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private static RpcAgent attacker() {
        return cluster.agent(0);
    }

    /** What a refusal looks like: the code, the method and the rule. */
    private static Consumer<RpcException> refused(String method, String rule) {
        return e -> {
            assertThat(e.code()).isEqualTo(RpcException.Code.UNKNOWN_FUNCTION);
            assertThat(e).hasMessageContaining("cannot call " + method).hasMessageContaining("refused (" + rule + ")");
        };
    }

    /** The victim still serves calls: the attack cost it nothing. */
    private static void victimGoesOn() {
        assertThat(cluster.agent(1).isRunning()).isTrue();
        assertThat(attacker().rpcSync("worker1", Ops::add, 20, 3)).isEqualTo(23);
    }

    @Test
    void aJaninoExpressionDoesNotCompileNorRun() throws Exception {
        Path marker = Files.createTempDirectory("ferry-attack").resolve("ran");
        String expression = "new java.io.File(\"" + marker + "\").createNewFile()";
        RpcFunction4<String, Class<?>, String[], ClassLoader, Object> compile =
                ExpressionEvaluator::createFastExpressionEvaluator;
        // as in the issue: remote() makes the evaluator on the victim, a call on the RRef runs it
        RRef<Object> evaluator = attacker().remote("worker1", compile, expression, Runnable.class, new String[0], null);
        assertThatThrownBy(evaluator::toHere).isInstanceOfSatisfying(RpcException.class,
                refused("org.codehaus.janino.ExpressionEvaluator::createFastExpressionEvaluator", "not declared callable"));
        assertThat(marker).doesNotExist();
        victimGoesOn();
    }

    @Test
    void readingRawMemoryThroughNettyIsRefused() {
        RpcFunction1<Long, Long> peek = PlatformDependent::getLong; // crashed the victim with SIGSEGV
        assertThatThrownBy(() -> attacker().rpcSync("worker1", peek, 0L)).isInstanceOfSatisfying(RpcException.class,
                refused("io.netty.util.internal.PlatformDependent::getLong", "not declared callable"));
        victimGoesOn();
    }

    @Test
    void creatingFilesThroughALibraryHelperIsRefused() throws Exception {
        String prefix = "ferry-attack-" + UUID.randomUUID();
        RpcFunction3<String, String, File, File> create = PlatformDependent::createTempFile;
        assertThatThrownBy(() -> attacker().rpcSync("worker1", create, prefix, ".tmp", null))
                .isInstanceOfSatisfying(RpcException.class,
                        refused("io.netty.util.internal.PlatformDependent::createTempFile", "not declared callable"));
        try (Stream<Path> created = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            assertThat(created.filter(p -> p.getFileName().toString().startsWith(prefix))).isEmpty();
        }
        victimGoesOn();
    }

    @Test
    void ferrysApiCannotStopAWorkerThoughTheTestsShareItsPackage() {
        // Rpc.shutdown(boolean, Duration) returns void: no RpcFunction names it, a peer's bytes can
        FunctionRef shutdown = new FunctionRef("dev.ferry.rpc.Rpc", "shutdown", "(ZLjava/time/Duration;)V",
                MethodHandleInfo.REF_invokeStatic, new Object[0]);
        DefaultRpcAgent agent = (DefaultRpcAgent) attacker();
        assertThatThrownBy(() -> agent.invokeWithHeaders(agent.getWorkerInfo("worker1"), shutdown,
                new Object[] {false, Duration.ZERO}, WAIT, CallHeaders.empty()).await(WAIT))
                .isInstanceOfSatisfying(RpcException.class, refused("dev.ferry.rpc.Rpc::shutdown", "Ferry's own class"));
        FunctionRef agentShutdown = new FunctionRef("dev.ferry.rpc.internal.agent.DefaultRpcAgent", "shutdown",
                "(ZLjava/time/Duration;)V", MethodHandleInfo.REF_invokeVirtual, new Object[0]);
        assertThatThrownBy(() -> agent.invokeWithHeaders(agent.getWorkerInfo("worker1"), agentShutdown,
                new Object[] {null, false, Duration.ZERO}, WAIT, CallHeaders.empty()).await(WAIT))
                .isInstanceOfSatisfying(RpcException.class,
                        refused("dev.ferry.rpc.internal.agent.DefaultRpcAgent::shutdown", "Ferry's own class"));
        victimGoesOn();
    }

    @Test
    void aPrivateMethodIsRefusedEvenInTheApplicationsClasses() {
        assertThatThrownBy(() -> attacker().rpcSync("worker1", AppOps.secretReference(), 5))
                .isInstanceOfSatisfying(RpcException.class,
                        refused("dev.ferry.rpc.policy.app.AppOps::secret", "private method"));
        assertThat(attacker().rpcSync("worker1", AppOps.doubler(), 5)).as("a lambda of the class").isEqualTo(10);
        victimGoesOn();
    }

    @Test
    void theJdksMethodsAreRefused() {
        RpcFunction0<Runtime> runtime = Runtime::getRuntime;
        assertThatThrownBy(() -> attacker().rpcSync("worker1", runtime)).isInstanceOfSatisfying(RpcException.class,
                refused("java.lang.Runtime::getRuntime", "JDK class"));
        RpcFunction1<String, String> env = System::getenv;
        assertThatThrownBy(() -> attacker().rpcSync("worker1", env, "PATH")).isInstanceOfSatisfying(RpcException.class,
                refused("java.lang.System::getenv", "JDK class"));
        victimGoesOn();
    }

    @Test
    void refusalsAreLoggedWithinBounds() {
        RpcFunction0<Runtime> runtime = Runtime::getRuntime;
        IncomingCalls victim = ((DefaultRpcAgent) cluster.agent(1)).incomingCalls();
        long before = victim.refusalsLogged();
        for (int i = 0; i < 200; i++) {
            assertThatThrownBy(() -> attacker().rpcSync("worker1", runtime)).isInstanceOf(RpcException.class);
        }
        assertThat(victim.refusalsLogged() - before).as("lines logged for 200 refusals")
                .isLessThanOrEqualTo(IncomingCalls.REFUSALS_LOGGED_PER_MINUTE);
        victimGoesOn();
    }
}

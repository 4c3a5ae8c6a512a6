package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.policy.app.AppOps;
import dev.ferry.rpc.policy.other.Unmarked;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.URI;
import java.net.URL;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The class policy is an allow-list: the JDK's value types and the application's classes decode,
 * the rest does not. The refusals are the receiver's own: the bytes are forged by a codec that
 * checks nothing, as a hostile peer's would be.
 */
class ClassPolicyTest {
    private static final ClassLoader LOADER = ClassPolicyTest.class.getClassLoader();
    private static final CodeOrigins ORIGINS = CodeOrigins.of(LOADER);
    /** What an agent whose application is {@code dev.ferry.rpc.policy.app} decodes with. */
    private static final ClassPolicy POLICY = policy(List.of("dev.ferry.rpc.policy.app"), List.of());
    private static final ObjectCodec RECEIVER = new ObjectCodec(POLICY, List.of(), 64 * 1024);
    /** A peer's encoder that checks nothing. */
    private static final ObjectCodec FORGER = new ObjectCodec((resolver, name) -> true, List.of(), 64 * 1024);

    private static ClassPolicy policy(List<String> application, List<String> allowed) {
        return new ClassPolicy(NameList.of(application), NameList.of(allowed), ORIGINS, LOADER);
    }

    private static Object received(Object value) {
        EncodedPayload payload = FORGER.encode(value);
        return RECEIVER.decode(ByteBuffer.wrap(payload.inBand()), List.of());
    }

    @Test
    void theJdksValueTypesDecode() throws Exception {
        for (String name : List.of("java.lang.Integer", "java.lang.String", "java.util.ArrayList", "java.util.HashMap",
                "java.util.Collections$UnmodifiableRandomAccessList", "java.util.ImmutableCollections$ListN",
                "java.util.Arrays$ArrayList", "java.util.TreeMap", "java.util.Collections$ReverseComparator",
                "java.util.AbstractMap$SimpleEntry", "java.util.concurrent.ConcurrentHashMap",
                "java.util.concurrent.CopyOnWriteArrayList", "java.util.concurrent.atomic.AtomicLong",
                "java.util.concurrent.TimeUnit", "java.util.Optional", "java.util.UUID", "java.time.LocalDate",
                "java.math.BigDecimal", "java.nio.HeapByteBuffer", "java.util.List", "java.lang.Enum",
                "java.io.Serializable", "[I", "[[Ljava.lang.String;", "int")) {
            assertThat(POLICY.isAllowed(name)).as(name).isTrue();
        }
        Map<String, Object> values = new TreeMap<>(Collections.reverseOrder());
        values.put("list", new ArrayList<>(List.of(1, 2)));
        values.put("map", new ConcurrentHashMap<>(Map.of("k", 1L)));
        values.put("misc", List.of(Optional.of("x"), UUID.nameUUIDFromBytes(new byte[1]), LocalDate.of(2026, 1, 2),
                new BigDecimal("1.5"), TimeUnit.SECONDS, URI.create("ferry://x")));
        assertThat(received(values)).isEqualTo(values);
    }

    @Test
    void otherJdkClassesAreRefused() {
        for (String name : List.of("java.net.URL", "java.io.File", "java.net.InetAddress", "java.net.Inet4Address",
                "java.lang.Thread", "java.lang.ProcessBuilder", "java.lang.Runtime",
                "java.util.concurrent.ThreadPoolExecutor", "java.util.concurrent.ScheduledThreadPoolExecutor",
                "java.util.concurrent.ForkJoinPool", "java.util.Timer", "java.util.jar.Attributes",
                "java.security.Provider", "javax.naming.InitialContext", "[Ljava.net.URL;")) {
            assertThat(POLICY.isAllowed(name)).as(name).isFalse();
        }
    }

    @Test
    void aForgedUrlFileOrAddressIsRefusedByTheReceiver() throws Exception {
        for (Object hostile : List.<Object>of(new URL("http://example.invalid/"), new File("/etc/passwd"),
                InetAddress.getLoopbackAddress(), List.of("fine", new URL("http://example.invalid/")))) {
            assertThatThrownBy(() -> received(hostile)).as(hostile.toString())
                    .isInstanceOfSatisfying(RpcException.class,
                            e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR))
                    .hasMessageContaining("class policy");
        }
    }

    @Test
    void theApplicationsClassesDecodeOthersOnlyWhenAllowed() {
        assertThat(received(new AppOps(7))).isInstanceOfSatisfying(AppOps.class, ops -> assertThat(ops.base()).isEqualTo(7));
        assertThatThrownBy(() -> received(new Unmarked.Data("x")))
                .isInstanceOfSatisfying(RpcException.class,
                        e -> assertThat(e.code()).isEqualTo(RpcException.Code.SERIALIZATION_ERROR))
                .hasMessageContaining(Unmarked.Data.class.getName());
        ClassPolicy widened = policy(List.of(), List.of("dev.ferry.rpc.policy.other", "java.net.URL"));
        assertThat(widened.isAllowed(Unmarked.Data.class.getName())).isTrue();
        assertThat(widened.isAllowed("java.net.URL")).as("the application's own choice").isTrue();
        ClassPolicy everything = policy(List.of(), List.of("java", "javax", "org"));
        assertThat(everything.isAllowed("java.lang.ProcessBuilder")).as("never, whatever the options say").isFalse();
        assertThat(everything.isAllowed("java.lang.reflect.Proxy")).isFalse();
        assertThat(everything.isAllowed("javax.naming.InitialContext")).isFalse();
        assertThat(everything.isAllowed("org.codehaus.janino.ExpressionEvaluator")).isFalse();
    }

    @Test
    void ferrysOwnClassesDecodeOnlyAsEnumsEvenInADeclaredPackage() {
        ClassPolicy ferryNamed = policy(List.of("dev.ferry"), List.of());
        assertThat(ferryNamed.isAllowed("dev.ferry.rpc.internal.transport.SharedSegment")).isFalse();
        assertThat(ferryNamed.isAllowed("dev.ferry.rpc.RpcBackendOptions")).isFalse();
        assertThat(ferryNamed.isAllowed("dev.ferry.rpc.RpcException$Code")).as("an enum of Ferry's").isTrue();
        assertThat(POLICY.isAllowed("dev.ferry.rpc.JmxRegistration")).as("an enum, whatever the packages").isTrue();
        assertThat(ferryNamed.isAllowed(AppOps.class.getName())).as("the tests' own classes").isTrue();
    }
}
